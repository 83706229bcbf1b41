"""One training run, whatever the algorithm: the one loop that drives every learner.

:func:`train` drives a learner (:class:`urgym.evaluation.training.learner.Learner`, urgym's own or a stranger's)
through :meth:`TrainingRun.drive`, which keeps everything but the learning:

- the budget: ``timesteps`` (the learner's decisions) or ``minutes`` (:class:`RunPlan`), whichever ends first
  (:meth:`TrainingRun.share`);
- the schedule (:class:`~urgym.evaluation.training.learner.Schedule`): the learner is asked for the decisions up to
  the next evaluation point, and refused if it plays more than its granularity allows;
- a progress bar (tqdm) over the decisions;
- at each evaluation the mean regret on ``validation`` positions of
  :func:`urgym.evaluation.scoring.positions.validation_positions` (disjoint from the test set that ``evaluate``
  reports; none when ``validation`` is 0), the figures of ``metrics`` (the benchmark's exact metrics), a row of
  ``logs/progress.csv`` and TensorBoard's ``eval/NAME`` (unless the learner's own framework writes ``logs/``, as
  stable-baselines3 does), a point of ``curve.csv``, the best model so far (``best_model.*``, unless
  ``select_best`` is off: nothing chosen by the table) with its card, and a
  checkpoint (:mod:`urgym.evaluation.training.checkpoint`) where the learner gives its state: ``RunPlan(resume=True)``
  goes on from it as if never interrupted;
- at the end the last model (``model.*``) with its card.

Every file goes through the one atomic writer. The learning-rate schedule the value-network methods share is
:func:`learning_rate`.
"""

from __future__ import annotations

import csv
import math
import numbers
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from urgym.agents import make_agent
from urgym.agents.models import write_model_card
from urgym.evaluation.scoring.positions import TEST_SET_VERSION, score_positions, validation_positions
from urgym.evaluation.scoring.report import write_csv
from urgym.evaluation.scoring.runner import RunOptions
from urgym.evaluation.training.checkpoint import CHECKPOINT, read_checkpoint, remove_checkpoint, write_checkpoint
from urgym.evaluation.training.learner import (
    Algorithm,
    LearnerError,
    LearningTask,
    Schedule,
    learner_label,
    offers,
)
from urgym.solver import SolvedTable

from urgym import Position, Rules, __version__
from urgym.files import check_output, claim_folder, release_folder, write_atomic
from urgym.progress import progress_bar

__all__ = [
    "UNCAPPED",
    "Metrics",
    "RunPlan",
    "TrainingRun",
    "check_run_folder",
    "finished_run",
    "learning_rate",
    "plot_curves",
    "regret_of",
    "train",
]


UNCAPPED = 10**15
"""A budget of timesteps no run reaches: the budget of a run bounded by its minutes alone."""

Metrics = Callable[[Any, bool], dict[str, Any]]
"""Figures measured at each evaluation besides the validation regret: called with the learner as an agent and whether
the run ends there (the benchmark's exact metrics, :class:`urgym.evaluation.bench.TaskEvaluator`)."""


@dataclass(frozen=True)
class RunPlan:
    """Where a run writes, how long it lasts and how it is evaluated.

    ``timesteps`` (the learner's decisions) or ``minutes``, whichever ends first.
    """

    out: Path
    timesteps: int
    minutes: float | None = None
    seed: int = 0
    progress: bool = True
    replace: bool = False
    """Overwrite a finished run in ``out`` (otherwise it is refused)."""
    resume: bool = False
    """Go on from ``out``'s checkpoint where it has one; otherwise start afresh."""
    eval_every: int | None = None
    """Decisions between evaluation points (None: the algorithm's default)."""
    validation: int | None = None
    """Validation positions scored at each point to pick the best model (None: the algorithm's default; 0: none, and
    no best model is kept)."""
    select_best: bool = True
    """Keep the model of the lowest validation regret as ``best_model.*``. False: the validation regret is measured
    for the curve only and nothing is chosen by it; the run's result is its last model (a table-free run's claim)."""

    def identity(self, algo: str, settings: Any, rules: Rules) -> dict[str, Any]:
        """What a checkpoint of this run must match to be gone on from: algorithm, rules, seed, budget, settings."""
        return {
            "algo": algo,
            "rules": rules.name,
            "pieces": rules.pieces,
            "seed": self.seed,
            "timesteps": self.timesteps,
            "minutes": self.minutes,
            "settings": asdict(settings),
            "urgym": __version__,
            **({} if self.select_best else {"selection": "last"}),
        }


def run_outputs(out: Path, suffix: str | None) -> list[Path]:
    """Every file a run writes into ``out`` (TensorBoard's event files aside, inside ``out/logs``)."""
    models = ("best_model", "model")
    names = [f"{model}{ext}" for model in models for ext in (suffix, ".json")] if suffix else []
    return [out / name for name in (*names, "curve.csv", "logs/progress.csv")]


def finished_run(out: Path, suffix: str | None) -> bool:
    """Whether ``out`` holds a run that ended: its last model (its curve, for a learner saving none), no checkpoint.

    A run writes ``model.*`` only when it ends and removes its checkpoint after that, so a run stopped at any point
    before is not finished: it resumes.
    """
    last = out / f"model{suffix}" if suffix else out / "curve.csv"
    return last.is_file() and not (out / CHECKPOINT).exists()


def check_run_folder(out: Path, suffix: str | None, replace: bool = False, resume: bool = False) -> None:
    """Refuse, before any training, a folder the run could not write or would overwrite without being asked.

    Every output is checked as a command's outputs are (not a table, not inside the cache, writable); ``logs`` must be
    a real folder (a symbolic link would aim TensorBoard's files anywhere); a finished run's files are kept unless
    ``replace``, or ``resume`` and the folder holds a checkpoint (the run they belong to goes on).

    Raises:
        ValueError: Naming the path and what is allowed.
    """
    logs = out / "logs"
    if logs.is_symlink() or (logs.exists() and not logs.is_dir()):
        raise ValueError(f"{logs} is not a folder (a symbolic link or a file); the run writes its logs into a folder")
    outputs = run_outputs(out, suffix)
    for path in outputs:
        check_output(path)
    markers = outputs[:4] if suffix else [out / "curve.csv"]  # what a run leaves once it has evaluated
    finished = [path.name for path in markers if path.exists()]
    if finished and not replace and not (resume and (out / CHECKPOINT).exists()):
        raise ValueError(
            f"{out} holds a finished training run ({', '.join(finished)}); give a new folder, or --replace "
            "(replace=True) to overwrite it"
        )


def regret_of(agent: Any, table: SolvedTable, positions: list[tuple[Position, int]]) -> float:
    """The mean regret (win-% points) of ``agent`` on ``positions``, in this process."""
    return score_positions(agent, table, positions, RunOptions(workers=1, progress=False)).regret.mean


def learning_rate(top: float, share: float, warmup: float = 0.03) -> float:
    """Linear warm-up over the first ``warmup`` of the run, then a cosine down to a hundredth of ``top``."""
    if share < warmup:
        return top * max(share / warmup, 0.01)
    share = min(1.0, (share - warmup) / (1.0 - warmup))
    return top * (0.01 + 0.99 * 0.5 * (1.0 + math.cos(math.pi * share)))


class _RunTask:
    """``train``'s run as its learner sees it (:class:`~urgym.evaluation.training.learner.LearningTask`)."""

    def __init__(self, rules: Rules, run: TrainingRun) -> None:
        self.rules, self.pieces, self.budget = rules.name, rules.pieces, run.plan.timesteps
        self._rules, self._run = rules, run

    def get_rules(self) -> Rules:
        """The rules learned."""
        return self._rules

    def share(self, done: int) -> float:
        """How much of the run's budget (decisions or minutes) is spent after ``done`` decisions."""
        return self._run.share(done)


def train(
    algorithm: Algorithm,
    task: Rules | LearningTask,
    plan: RunPlan,
    settings: Any = None,
    table: SolvedTable | None = None,
    metrics: Metrics | None = None,
    report: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Train ``algorithm`` on ``task`` (a benchmark task, or rules) as one run of the one loop.

    Args:
        algorithm: What is trained (:func:`urgym.evaluation.training.algorithms.get_algorithm`).
        task: A benchmark task (its budget is ``plan.timesteps``), or the rules (``train``: the plan is the budget).
        plan: Where to write, the budget and the schedule.
        settings: The algorithm's settings (default: its defaults).
        table: The solved table that measures the run (validation regret; its hash goes on the cards).
        metrics: Figures measured at each point besides the validation regret (the benchmark's).
        report: Called with each point of the curve as it is measured (the benchmark's progress lines).

    Returns:
        What :meth:`TrainingRun.finish` says of the run.
    """
    settings = algorithm.defaults() if settings is None else settings
    rules = task if isinstance(task, Rules) else task.get_rules()
    learner = algorithm.make()
    run = TrainingRun(algorithm, rules, plan, learner, settings, table=table, metrics=metrics, report=report)
    checkpoint = read_checkpoint(plan.out, run.identity) if plan.resume and offers(learner, "state") else None
    run.call("setup", _RunTask(rules, run) if isinstance(task, Rules) else task, plan.seed, settings, plan.out)
    run.start_clock()  # the budget's minutes are the learning's: a distillation's labels come before them
    if checkpoint is not None:
        run.call("load", checkpoint["learner"])
        run.take_up(checkpoint)
    else:  # an earlier run's checkpoint must not outlive the run that replaces it
        remove_checkpoint(plan.out)
    return run.drive()


class TrainingRun:
    """The bookkeeping of one run (see the module docstring); :meth:`drive` is its loop.

    Args:
        algorithm: The algorithm trained (its name on the cards, its facts).
        rules: The rules being learned.
        plan: Where to write, the budget and the schedule.
        learner: The learner (made, not yet set up).
        settings: Its settings (on every card).
        table: The solved table that measures the run (its hash goes on the cards).
        metrics: Measures more figures at each evaluation (the benchmark's exact metrics): called with the learner as
            an agent and whether the run ends there, it returns figures by name, added to the curve and the logs
            (TensorBoard's ``eval/NAME``).
        report: Called with each point of the curve as it is measured.
    """

    def __init__(
        self,
        algorithm: Algorithm,
        rules: Rules,
        plan: RunPlan,
        learner: Any,
        settings: Any,
        table: SolvedTable | None = None,
        metrics: Metrics | None = None,
        report: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        plan.out.mkdir(parents=True, exist_ok=True)
        claim_folder(plan.out, "a training run")  # first: of two runs started together, one gets past the check
        suffix = algorithm.model_suffix if offers(learner, "save") else None
        check_run_folder(plan.out, suffix, plan.replace, plan.resume)
        self.algorithm, self.rules, self.plan, self.learner = algorithm, rules, plan, learner
        self.suffix, self.table, self.metrics, self.report = suffix, table, metrics, report
        self.schedule = Schedule(plan.timesteps, plan.eval_every or algorithm.eval_every)
        self.identity = plan.identity(algorithm.name, settings, rules)
        self.facts = {"settings": asdict(settings)}
        count = algorithm.validation if plan.validation is None else plan.validation
        self.validation = validation_positions(table, count) if table is not None and count > 0 else []
        self.start = time.perf_counter()
        self.curve: list[dict[str, Any]] = []
        self.best = math.inf
        self.log: list[dict[str, Any]] = []
        self.own_logs = not getattr(learner, "writes_logs", False)
        self.figures: dict[str, Any] = {}
        """The figures of ``metrics`` at the last evaluation."""
        self.writer = _tensorboard(plan.out) if self.own_logs else None  # logs/ checked: a real folder, not a link
        total = None if plan.timesteps >= UNCAPPED else plan.timesteps  # bounded by minutes: a count, no bar
        self.bar = progress_bar(total, algorithm.name, plan.progress, unit="decision")
        self.done = 0
        """The decisions played so far."""
        self.resumed_at: list[int] = []
        """The decisions of each checkpoint the run went on from."""
        self.earlier_seconds = 0.0
        """The seconds the run had taken when its checkpoint was written (0 for a run not resumed)."""

    # --- the learner's methods, its errors named --------------------------------------------------------------------
    def call(self, method: str, *args: Any) -> Any:
        """``learner.method(*args)``; an error of the learner's own becomes a :class:`LearnerError` naming it."""
        try:
            return getattr(self.learner, method)(*args)
        except (LearnerError, KeyboardInterrupt):
            raise
        except Exception as err:
            shown = ", ".join(repr(a) if isinstance(a, (int, Path)) else type(a).__name__ for a in args)
            raise LearnerError(
                f"{learner_label(self.algorithm, self.plan.seed)}: {method}({shown}) failed: {type(err).__name__}: "
                f"{err}"
            ) from err

    def optional(self, method: str, default: Any, *args: Any) -> Any:
        """An optional method of the learner (:meth:`call`), or ``default`` where it has none."""
        return self.call(method, *args) if offers(self.learner, method) else default

    def _learn(self, asked: int) -> int:
        """Ask the learner for ``asked`` decisions; check what it says it played."""
        played = self.call("learn", asked)
        label = learner_label(self.algorithm, self.plan.seed)
        if not isinstance(played, numbers.Integral) or isinstance(played, bool) or played < 0:
            raise LearnerError(
                f"{label}: learn({asked}) must return the decisions it played (a whole number from 0), got "
                f"{played!r:.60}"
            )
        played = int(played)
        granularity = getattr(self.learner, "granularity", 0)
        if played > asked + granularity:
            raise LearnerError(
                f"{label}: learn({asked}) played {played:,} decisions, more than its granularity allows "
                f"({granularity:,} past those asked); the protocol counts the budget in decisions: stop at the first "
                "rollout or game boundary past them, or declare a larger granularity"
            )
        if played == 0 and self.share(self.done) < 1.0:
            raise LearnerError(f"{label}: learn({asked}) played no decision; a call must play at least one")
        return played

    # --- the loop -----------------------------------------------------------------------------------------------------
    def drive(self) -> dict[str, Any]:
        """The run: learn up to each point of the schedule, evaluate, checkpoint; at the end the last model."""
        resumable = offers(self.learner, "state")
        while True:
            point = self.schedule.next_point(self.done)
            while self.done < point and self.share(self.done) < 1.0:
                self.done += self._learn(point - self.done)
                self.advance(self.done)
            self.evaluate(self.done)
            if self.done >= self.plan.timesteps or self.share(self.done) >= 1.0:
                return self.finish(self.done)
            if resumable:
                self.save_checkpoint(self.done, self.call("state"))

    def start_clock(self) -> None:
        """Start (again) the clock that :attr:`seconds` and a budget of minutes count from."""
        self.start = time.perf_counter()

    def take_up(self, checkpoint: dict[str, Any]) -> None:
        """Go on from ``checkpoint``: its curve, logs, best regret, figures and seconds."""
        held = checkpoint["run"]
        self.earlier_seconds = held["seconds"]
        self.start -= held["seconds"]
        self.curve, self.log, self.best, self.figures = held["curve"], held["log"], held["best"], held["figures"]
        self.resumed_at = [*held["resumed_at"], checkpoint["timesteps"]]
        self.done = checkpoint["timesteps"]
        self.advance(self.done)

    def save_checkpoint(self, done: int, learner: Any) -> None:
        """Write the run's checkpoint at ``done`` decisions: its bookkeeping and the ``learner``'s whole state."""
        held = {"seconds": self.seconds, "curve": self.curve, "log": self.log, "best": self.best}
        held.update(figures=self.figures, resumed_at=self.resumed_at)
        write_checkpoint(self.plan.out, {"identity": self.identity, "timesteps": done, "run": held, "learner": learner})

    @property
    def seconds(self) -> float:
        """Seconds since the run started."""
        return time.perf_counter() - self.start

    def share(self, done: int) -> float:
        """How much of the budget is spent after ``done`` decisions, 0 to 1 (or more)."""
        spent = self.seconds / (60 * self.plan.minutes) if self.plan.minutes else 0.0
        return max(done / self.plan.timesteps, spent)

    def advance(self, done: int) -> None:
        """Show ``done`` decisions on the bar."""
        self.bar.n = done
        self.bar.refresh()

    def _agent(self) -> Any:
        """The learner as it plays now, as an agent."""
        spec = self.call("agent")
        try:
            return make_agent(spec)
        except ValueError as err:
            raise LearnerError(f"{learner_label(self.algorithm, self.plan.seed)}: agent() gave {err}") from None

    def evaluate(self, done: int) -> float | None:
        """Measure the learner, log it, add it to the curve, and keep it if it is the best so far."""
        values = self.optional("info", {})
        agent = self._agent()
        try:
            regret = regret_of(agent, self.table, self.validation) if self.validation else None
            self.figures = self.metrics(agent, done >= self.plan.timesteps) if self.metrics else {}
        except LearnerError:
            raise
        except ValueError as err:  # the agent's moves (an illegal one, an answer of the wrong shape)
            raise LearnerError(f"{learner_label(self.algorithm, self.plan.seed)}: measuring its agent: {err}") from err
        if regret is not None:
            self.bar.set_postfix_str(f"regret {regret:.4f}")
        scored = {} if regret is None else {"mean_regret": regret}
        numbers_ = {key: value for key, value in {**scored, **self.figures}.items() if _is_number(value)}
        row = {"timesteps": done, **values, "seconds": round(self.seconds, 2)}
        self.log.append({**row, **{f"eval/{key}": value for key, value in numbers_.items()}})
        if self.own_logs:
            _write_rows(self.plan.out / "logs" / "progress.csv", self.log)
            if self.writer:
                for key, value in numbers_.items():
                    self.writer.add_scalar(f"eval/{key}", value, done)
        else:
            self.optional("record", None, done, numbers_)
        self.curve.append({"timesteps": done, "seconds": round(self.seconds, 1), **scored, **self.figures})
        _write_rows(self.plan.out / "curve.csv", self.curve)
        if self.report is not None:
            self.report(self.curve[-1])
        if regret is not None and regret < self.best:
            self.best = regret
            if self.plan.select_best:
                self._save("best_model", done, regret, values)
        return regret

    def finish(self, done: int) -> dict[str, Any]:
        """Score the last model (unless just scored), save it as ``model.*`` and say what the run did."""
        self.bar.close()
        if not (self.curve and self.curve[-1]["timesteps"] == done):
            self.evaluate(done)
        self._save("model", done, self.curve[-1].get("mean_regret"), self.optional("info", {}))
        if self.own_logs:
            _write_rows(self.plan.out / "logs" / "progress.csv", self.log)
        out = self.plan.out
        remove_checkpoint(out)
        release_folder(out)
        models = {"model": None, "best_model": None}
        if self.suffix:
            models = {name: str(out / f"{name}{self.suffix}") for name in models}
            if not (self.validation and self.plan.select_best):
                models["best_model"] = None
        return {
            **models,
            "timesteps": done,
            "seconds": self.seconds,
            "best_regret": self.best if self.validation else None,
            "curve": self.curve,
            "resumed_at": self.resumed_at,
            "earlier_seconds": self.earlier_seconds,
        }

    def _save(self, name: str, done: int, regret: float | None, values: dict[str, Any]) -> None:
        if self.suffix is None:
            return
        facts = {
            "algo": self.algorithm.name,
            **({"algorithm_source": self.algorithm.source} if self.algorithm.source else {}),
            "rule_set": self.rules.name,
            "pieces": self.rules.pieces,
            "seed": self.plan.seed,
            "timesteps": int(done),
            "train_seconds": round(self.seconds, 1),
            **({"validation_regret": regret} if regret is not None else {}),
            "regret_set": f"validation set v{TEST_SET_VERSION} (position benchmark, disjoint from the test set)",
            "urgym": __version__,
            **({"table_hash": self.table.header["checksum"]} if self.table is not None else {}),
            "command": " ".join(["train", *sys.argv[1:]]),
            **({"games": values["games"]} if "games" in values else {}),
            **(
                {}
                if self.plan.select_best
                else {"selection": "last (validation regret measured, nothing chosen by it)"}
            ),
            **self.facts,
            **self.optional("facts", {}),
        }
        path = self.plan.out / f"{name}{self.suffix}"
        self.call("save", path, facts)
        write_model_card(path, self.rules, **facts)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    """``rows`` as CSV (columns: every key any row has, in order of appearance), atomically."""
    fields = list(dict.fromkeys(key for row in rows for key in row))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_csv(path, [{key: row.get(key, "") for key in fields} for row in rows], fields)


def _tensorboard(out: Path) -> Any:
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        return None
    return SummaryWriter(str(out / "logs"))


def plot_curves(curves: dict[str, str | Path], path: str | Path, x: str = "timesteps", log: bool = False) -> Path:
    """Plot mean regret against ``x`` (``"timesteps"`` or ``"minutes"``) for ``curve.csv`` files (label -> file).

    ``log`` puts the regret on a log scale, for curves that span orders of magnitude.
    """
    if x not in ("timesteps", "minutes"):
        raise ValueError(f"x must be 'timesteps' or 'minutes', not {x!r}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
    for label, file in curves.items():
        with open(file, newline="") as f:
            rows = list(csv.DictReader(f))
        xs = [float(r["timesteps"]) if x == "timesteps" else float(r["seconds"]) / 60 for r in rows]
        ax.plot(xs, [float(r["mean_regret"]) for r in rows], label=label)
    ax.set_xlabel("timesteps (the learner's moves)" if x == "timesteps" else "training time (minutes)")
    ax.set_ylabel("mean regret (win-% points)")
    if log:
        ax.set_yscale("log")
    ax.set_title("position benchmark during training")
    ax.legend(fontsize="small")
    out = write_atomic(path, lambda tmp: fig.savefig(tmp, format=Path(path).suffix.lstrip(".") or "png"))
    plt.close(fig)
    return out
