"""The learner protocol: how any algorithm, urgym's own or a stranger's, is trained by the one training loop.

A learner is told once what it learns (:meth:`Learner.setup`: the task, the seed, its settings and a folder of its
own), then asked again and again to learn some more decisions (:meth:`Learner.learn`) and to play as it is now
(:meth:`Learner.agent`); :meth:`Learner.state` and :meth:`Learner.load` make a checkpoint of it. Everything else
belongs to the loop that drives it (:meth:`urgym.evaluation.training.run.TrainingRun.drive`): the budget counted in
the learner's decisions, the evaluation schedule (:class:`Schedule`), the figures at each point, checkpoints and
resume, the models, the curve and the logs, and in the benchmark the seeds, ``--jobs``, the estimate before a run
and the results. The loop asks for no more decisions than the next evaluation point needs and refuses a learner that
plays more than it declares it may (:attr:`Learner.granularity`: one rollout, one game, one chunk of games).

An algorithm is one record (:class:`Algorithm`): its name, its learner class, its settings dataclass (whose
defaults are the algorithm's), whether its moves come from a policy network, and how fast it learns, for the
estimate before a run. :mod:`urgym.evaluation.training.algorithms` is the registry that code, entry points and
``FILE.py:CLASS`` all feed.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from urgym import Rules
from urgym.files import require_extra

__all__ = [
    "LONG_GAME",
    "Algorithm",
    "Learner",
    "LearnerError",
    "LearningTask",
    "NoSettings",
    "Schedule",
    "learner_label",
    "offers",
    "setting_text",
    "settings_help",
    "with_settings",
]

LONG_GAME = 2_000
"""A generous bound on one game's decisions (both sides), for a granularity counted in games: a game of finkel with 7
pieces between players that always move their least advanced piece lasts 377 decisions on average and 1,244 at the
most in 200,000 games; self-play lasts fewer."""


class LearnerError(ValueError):
    """A learner that failed or broke the protocol: named with its seed and what it did."""


class LearningTask(Protocol):
    """What a learner is told it learns: a benchmark :class:`~urgym.evaluation.bench.tasks.Task`, or ``train``'s run.

    ``rules`` and ``pieces`` name the rules (:meth:`get_rules` gives them), ``budget`` is the decisions the run may
    spend, and :meth:`share` says how much of it is spent (a ``train --minutes`` run counts its minutes too: a learner
    whose schedules follow :meth:`share` slows down with the clock).
    """

    rules: str
    pieces: int
    budget: int

    def get_rules(self) -> Rules:
        """The rules learned."""

    def share(self, done: int) -> float:
        """How much of the budget is spent after ``done`` decisions, from 0 (1 or more: spent)."""


@dataclass(frozen=True)
class NoSettings:
    """The settings of a learner that has none."""


class Learner:
    """A learner the training loop drives: subclass it, or write a class with the same methods.

    Required: :meth:`learn` and :meth:`agent` (and usually :meth:`setup`). Optional: :meth:`state` and :meth:`load`
    (checkpoints: a run cut short goes on from its last evaluation point), :meth:`save` (a model file beside the
    run's curve), :meth:`facts` (for the model's card), :meth:`info` (figures of its own for the logs), :meth:`record`
    (for a learner whose framework writes the logs).
    """

    granularity: int = 0
    """The most decisions one :meth:`learn` call may play beyond those asked: one rollout of a vectorized learner, or
    ``LONG_GAME`` times the games it finishes at once for one that stops only between games. Set it in :meth:`setup`
    where it depends on the settings; the loop refuses a call that plays more."""

    writes_logs: bool = False
    """True for a learner whose own framework writes the run's ``logs/`` (stable-baselines3's logger): the run then
    writes no ``logs/progress.csv`` of its own and hands each point's figures to :meth:`record`."""

    def setup(self, task: LearningTask, seed: int, settings: Any, folder: Path) -> None:
        """Prepare to learn ``task`` under ``seed``: everything random follows from the seed.

        Args:
            task: What is learned (the rules, the budget in decisions).
            seed: The run's seed.
            settings: The algorithm's settings (an instance of its settings dataclass).
            folder: A folder of this run's own, for what the learner writes (its logs).
        """

    def learn(self, decisions: int) -> int:
        """Learn for about ``decisions`` more decisions (moves the learner plays); return how many it played.

        Play at least ``decisions`` (fewer only where ``task.share`` says the budget is spent) and at most
        ``decisions + granularity``.
        """
        raise NotImplementedError(f"{type(self).__name__} has no learn()")

    def agent(self) -> Any:
        """The learner as it plays now: a :class:`urgym.agents.Agent` or an agent spec."""
        raise NotImplementedError(f"{type(self).__name__} has no agent()")

    def state(self) -> Any:
        """Everything the learner is (picklable): :meth:`load` on a learner set up alike goes on exactly from here."""
        raise NotImplementedError(f"{type(self).__name__} keeps no checkpoint")

    def load(self, state: Any) -> None:
        """Become the learner :meth:`state` described (after :meth:`setup` with the same task, seed and settings)."""
        raise NotImplementedError(f"{type(self).__name__} keeps no checkpoint")

    def save(self, path: Path, facts: dict[str, Any]) -> None:
        """Write the model as it plays now to ``path``; the run writes ``facts`` beside it as its card.

        A format with room for them may hold ``facts`` too (urgym's value networks do).
        """
        raise NotImplementedError(f"{type(self).__name__} saves no model")

    def facts(self) -> dict[str, Any]:
        """What the model's card says of the learner besides its settings (its size, the time its data took)."""
        return {}

    def info(self) -> dict[str, Any]:
        """Figures of the learner's own, logged at each evaluation point (games played, learning rate)."""
        return {}

    def record(self, done: int, figures: dict[str, Any]) -> None:
        """A point's figures, for a learner that writes the logs itself (:attr:`writes_logs`)."""


def offers(learner: Any, method: str) -> bool:
    """Whether a learner (or its class) has ``method`` of its own, not :class:`Learner`'s placeholder."""
    own = getattr(learner if isinstance(learner, type) else type(learner), method, None)
    return callable(own) and own is not getattr(Learner, method, None)


@dataclass(frozen=True)
class Algorithm:
    """One algorithm: its name and its learner, with the facts the loop, ``train`` and ``urgym bench`` need.

    Args:
        name: What users type (``--algo NAME``); unique among the registered algorithms.
        learner: The learner class (made with no arguments, then :meth:`Learner.setup`).
        settings: Its settings dataclass; the defaults are the algorithm's, ``--set KEY=VALUE`` changes them.
        policy_network: True where a network chooses every move itself (an exact evaluation then asks it at every
            decision, which the estimate counts), False where moves come from values of successors.
        decisions_per_second: About how many decisions one core learns per second (the estimate before a run); None
            where unknown.
        description: One line for the lists.
        aliases: Other names it answers to (the agent specs' names: ``td``, ``ppo``).
        requires: ``(module, extra)`` pairs it imports, checked before any work.
        model_suffix: The suffix of the model file :meth:`Learner.save` writes (None: it saves none).
        uses_table: True for a learner that learns from the solved table (``distill``): ``train`` only, never the
            benchmark.
        eval_every: ``train``'s default decisions between evaluation points.
        validation: ``train``'s default validation positions (the best model's choice).
        source: Where it was loaded from (``FILE.py:CLASS``, ``module:CLASS``, an entry point), None for code.
    """

    name: str
    learner: type
    settings: type = NoSettings
    policy_network: bool = False
    decisions_per_second: float | None = None
    description: str = ""
    aliases: tuple[str, ...] = ()
    requires: tuple[tuple[str, str], ...] = ()
    model_suffix: str | None = None
    uses_table: bool = False
    eval_every: int = 1_000_000
    validation: int = 500
    source: str | None = None

    def __post_init__(self) -> None:
        label = self.source or getattr(self.learner, "__qualname__", repr(self.learner))
        if not isinstance(self.name, str) or not self.name.strip() or self.name != self.name.strip():
            raise ValueError(f"{label}: an algorithm's name must be a non-empty word, got {self.name!r}")
        if not isinstance(self.learner, type):
            raise ValueError(f"algorithm {self.name!r}: learner must be a class, got {type(self.learner).__name__}")
        missing = [
            f"{m}()" for m in ("learn", "agent") if getattr(self.learner, m, None) in (None, getattr(Learner, m))
        ]
        if missing:
            raise ValueError(
                f"algorithm {self.name!r}: {label} is no learner: it needs {' and '.join(missing)} of its own "
                "(see urgym.evaluation.bench.Learner)"
            )
        if not (isinstance(self.settings, type) and dataclasses.is_dataclass(self.settings)):
            raise ValueError(f"algorithm {self.name!r}: settings must be a dataclass, got {self.settings!r}")
        rate = self.decisions_per_second
        if rate is not None and not (isinstance(rate, numbers.Real) and 0 < rate < math.inf):
            raise ValueError(f"algorithm {self.name!r}: decisions_per_second must be a positive number, got {rate!r}")

    @classmethod
    def of(cls, learner: type, source: str | None = None) -> Algorithm:
        """The record a learner class describes by its attributes.

        ``name`` (required), ``Settings`` (a dataclass), ``policy_network``, ``decisions_per_second``,
        ``description`` and ``model_suffix``, as :class:`Algorithm` names them.
        """
        name = getattr(learner, "name", None)
        if name is None:
            raise ValueError(f"{source or learner.__qualname__} names no algorithm: give the class a `name` attribute")
        return cls(
            name=name,
            learner=learner,
            settings=getattr(learner, "Settings", NoSettings),
            policy_network=bool(getattr(learner, "policy_network", False)),
            decisions_per_second=getattr(learner, "decisions_per_second", None),
            description=getattr(learner, "description", "") or "",
            model_suffix=getattr(learner, "model_suffix", None),
            source=source,
        )

    @property
    def names(self) -> tuple[str, ...]:
        """Its name and aliases."""
        return (self.name, *self.aliases)

    @property
    def label(self) -> str:
        """Its name, with where it came from when not from code."""
        return self.name if self.source is None else f"{self.name} ({self.source})"

    def require(self, purpose: str) -> None:
        """Import what the algorithm needs, before any work.

        Raises:
            MissingExtraError: Naming the extra that installs a missing module and ``purpose``.
        """
        for module, extra in self.requires:
            require_extra(module, extra, purpose)

    def defaults(self) -> Any:
        """Its default settings."""
        return self.settings()

    def make(self) -> Any:
        """A new learner of this algorithm (before its setup)."""
        return self.learner()


def learner_label(algorithm: Algorithm, seed: int) -> str:
    """How an error names a learner: its algorithm (and where it came from) and the seed."""
    return f"learner {algorithm.label}, seed {seed}"


@dataclass(frozen=True)
class Schedule:
    """The evaluation points of a run: one every ``every`` decisions, and the budget."""

    budget: int
    every: int

    def __post_init__(self) -> None:
        if self.budget < 1 or self.every < 1:
            raise ValueError(f"a schedule needs a budget and a step of at least 1, got {self.budget} and {self.every}")

    def next_point(self, done: int) -> int:
        """The first point past ``done`` decisions (the budget once the run is there)."""
        return min(self.budget, (done // self.every + 1) * self.every)

    def points(self) -> Iterator[int]:
        """Every point, in order: ``every``, ``2 every`` ... and the budget."""
        point = 0
        while point < self.budget:
            point = self.next_point(point)
            yield point


# --- settings: defaults, and KEY=VALUE overrides checked against the dataclass --------------------------------------
def _fields(settings: type) -> dict[str, Any]:
    """Each field's type, by name (string annotations resolved)."""
    hints = typing.get_type_hints(settings)
    return {field.name: hints.get(field.name, str) for field in dataclasses.fields(settings)}


def _type_name(kind: Any) -> str:
    if typing.get_origin(kind) is tuple:
        return f"{_type_name(typing.get_args(kind)[0])}s, comma-separated"
    args = [a for a in typing.get_args(kind) if a is not type(None)]
    if args and len(args) < len(typing.get_args(kind)):  # X | None
        return f"{_type_name(args[0])} or none"
    return getattr(kind, "__name__", str(kind))


def settings_help(algorithm: Algorithm) -> str:
    """Every setting of ``algorithm`` with its type and default: ``alpha (float, default 0.1), ...``."""
    defaults = algorithm.defaults()
    fields = _fields(algorithm.settings)
    if not fields:
        return "none"
    return ", ".join(
        f"{name} ({_type_name(kind)}, default {setting_text(getattr(defaults, name))})" for name, kind in fields.items()
    )


def setting_text(value: Any) -> str:
    """A setting's value as ``--set`` takes it (a sequence comma-separated)."""
    return ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def _convert(kind: Any, text: str) -> Any:
    """``text`` as a value of the field type ``kind`` (raises ValueError naming what is allowed)."""
    args = typing.get_args(kind)
    if type(None) in args:
        if text.strip().lower() in ("none", "null", ""):
            return None
        return _convert(next(a for a in args if a is not type(None)), text)
    if typing.get_origin(kind) is tuple:
        try:
            return tuple(_convert(args[0], part) for part in text.split(",") if part.strip())
        except ValueError:
            raise ValueError(_type_name(kind)) from None
    if kind is bool:
        word = text.strip().lower()
        if word not in ("true", "false", "1", "0", "yes", "no"):
            raise ValueError("true or false")
        return word in ("true", "1", "yes")
    if kind is int:
        try:
            return int(text.strip().replace("_", ""))
        except ValueError:
            raise ValueError("a whole number") from None
    if kind is float:
        try:
            value = float(text)
        except ValueError:
            raise ValueError("a number") from None
        if not math.isfinite(value):
            raise ValueError("a finite number")
        return value
    if kind is str:
        return text
    raise ValueError(f"a {_type_name(kind)}, which --set cannot give")


def _is_kind(value: Any, kind: Any) -> bool:
    """Whether a value given in code is of the field type ``kind``."""
    args = typing.get_args(kind)
    if type(None) in args:
        return value is None or _is_kind(value, next(a for a in args if a is not type(None)))
    if typing.get_origin(kind) is tuple:
        return isinstance(value, tuple) and all(_is_kind(v, args[0]) for v in value)
    if kind is float:
        return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if kind is int:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    return isinstance(value, kind) if isinstance(kind, type) else True


def with_settings(algorithm: Algorithm, overrides: Mapping[str, Any] | None = None) -> Any:
    """``algorithm``'s default settings with ``overrides`` (``--set KEY=VALUE``: text, or values given in code).

    Raises:
        ValueError: For an unknown key or a value of the wrong type, listing the settings.
    """
    defaults = algorithm.defaults()
    if not overrides:
        return defaults
    fields = _fields(algorithm.settings)
    changes = {}
    for key, value in overrides.items():
        if key not in fields:
            raise ValueError(f"{algorithm.name} has no setting {key!r}; its settings: {settings_help(algorithm)}")
        kind = fields[key]
        if isinstance(value, str) and kind is not str:
            try:
                value = _convert(kind, value)
            except ValueError as err:
                raise ValueError(
                    f"setting {key} of {algorithm.name} must be {err}, got {value!r}; its settings: "
                    f"{settings_help(algorithm)}"
                ) from None
        elif not _is_kind(value, kind):
            raise ValueError(
                f"setting {key} of {algorithm.name} must be a {_type_name(kind)}, got {value!r}; its settings: "
                f"{settings_help(algorithm)}"
            )
        if isinstance(value, float) and kind is float:
            value = float(value)
        changes[key] = value
    try:
        return dataclasses.replace(defaults, **changes)
    except (TypeError, ValueError) as err:  # the dataclass's own checks
        raise ValueError(f"settings of {algorithm.name}: {err}") from None
