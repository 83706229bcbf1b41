"""One training run, whatever the algorithm.

Its budget, progress bar, validation, curve, logs, and the best and last model with their cards.

Every algorithm of ``train`` (a module each beside this one) hands a :class:`TrainingRun` its learner (something
that scores itself on the validation positions and saves itself) and calls :meth:`TrainingRun.evaluate` as it
goes; the run keeps the rest:

- the budget: ``timesteps`` or ``minutes`` (:class:`RunPlan`), whichever ends first (:meth:`TrainingRun.share`);
- a progress bar (tqdm) over the timesteps;
- at each evaluation the mean regret on the validation positions of
  :func:`urgym.evaluation.scoring.positions.validation_positions` (disjoint from the test set that ``evaluate``
  reports), a row of ``logs/progress.csv`` and TensorBoard's ``eval/mean_regret`` (unless the algorithm's own
  framework writes ``logs/``, as stable-baselines3 does for PPO), a point of ``curve.csv``, and the best model so
  far (``best_model.*``) with its card;
- at the end the last model (``model.*``) with its card;
- for algorithms that checkpoint (``maskable-ppo``, ``dqn``, ``alphazero``), ``checkpoint.pkl`` after each evaluation
  (:mod:`urgym.evaluation.training.checkpoint`), from which ``RunPlan(resume=True)`` goes on as if never
  interrupted.

Every file goes through the one atomic writer. The learning-rate schedule the value-network methods share is
:func:`learning_rate`.
"""

from __future__ import annotations

import csv
import math
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from urgym.agents.models import write_model_card
from urgym.evaluation.scoring.positions import TEST_SET_VERSION, score_positions
from urgym.evaluation.scoring.report import write_csv
from urgym.evaluation.scoring.runner import RunOptions
from urgym.evaluation.training.checkpoint import CHECKPOINT, remove_checkpoint, write_checkpoint
from urgym.solver import SolvedTable

from urgym import Position, Rules, __version__
from urgym.files import check_output, claim_folder, release_folder, write_atomic
from urgym.progress import progress_bar

__all__ = [
    "ALGORITHMS",
    "ALGO_ALIASES",
    "CHECKPOINTING",
    "MODEL_SUFFIXES",
    "UNCAPPED",
    "AgentLearner",
    "Learner",
    "Metrics",
    "RunPlan",
    "TrainingRun",
    "check_run_folder",
    "learning_rate",
    "next_point",
    "plot_curves",
    "regret_of",
]

ALGORITHMS = ("maskable-ppo", "dqn", "td-lambda", "distill", "expected-td", "alphazero")
"""The algorithms of ``train``, a module each."""
CHECKPOINTING = ("maskable-ppo", "dqn", "alphazero")
"""The algorithms that write a checkpoint at each evaluation (``RunPlan.resume``, ``train --resume``)."""
ALGO_ALIASES = {"td": "td-lambda", "ppo": "maskable-ppo"}
"""The agent specs' names of what an algorithm trains (``td:model=PATH`` plays what ``td-lambda`` writes), accepted as
the algorithms' names."""
MODEL_SUFFIXES = {
    "maskable-ppo": ".zip",
    "dqn": ".zip",
    "td-lambda": ".npz",
    "distill": ".npz",
    "expected-td": ".npz",
    "alphazero": ".pt",
}
"""The model file's suffix of each algorithm."""


UNCAPPED = 10**15
"""A budget of timesteps no run reaches: the budget of a run bounded by its minutes alone."""

Metrics = Callable[[Any, bool], dict[str, Any]]
"""Figures measured at each evaluation besides the validation regret: called with the learner as an agent and whether
the run ends there (the benchmark's exact metrics, :class:`urgym.evaluation.bench.TaskEvaluator`)."""


@dataclass(frozen=True)
class RunPlan:
    """Where a run writes and how long it lasts.

    ``timesteps`` (the algorithm's unit) or ``minutes``, whichever ends first.
    """

    out: Path
    timesteps: int
    minutes: float | None = None
    seed: int = 0
    progress: bool = True
    replace: bool = False
    """Overwrite a finished run in ``out`` (otherwise it is refused)."""
    resume: bool = False
    """Go on from ``out``'s checkpoint where it has one (algorithms that checkpoint); otherwise start afresh."""

    def identity(self, algo: str, settings: Any) -> dict[str, Any]:
        """What a checkpoint of this run must match to be gone on from: the algorithm, seed, budget and settings."""
        return {
            "algo": algo,
            "seed": self.seed,
            "timesteps": self.timesteps,
            "minutes": self.minutes,
            "settings": asdict(settings),
            "urgym": __version__,
        }


def run_outputs(out: Path, suffix: str) -> list[Path]:
    """Every file a run writes into ``out`` (TensorBoard's event files aside, inside ``out/logs``)."""
    names = [f"{model}{ext}" for model in ("best_model", "model") for ext in (suffix, ".json")]
    return [out / name for name in (*names, "curve.csv", "logs/progress.csv")]


def check_run_folder(out: Path, suffix: str, replace: bool = False, resume: bool = False) -> None:
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
    finished = [path.name for path in outputs[:4] if path.exists()]
    if finished and not replace and not (resume and (out / CHECKPOINT).exists()):
        raise ValueError(
            f"{out} holds a finished training run ({', '.join(finished)}); give a new folder, or --replace "
            "(replace=True) to overwrite it"
        )


class Learner(Protocol):
    """What a run needs of the thing being trained."""

    suffix: str
    """The model file's suffix (``.npz``, ``.zip``)."""

    def score(self) -> float:
        """The mean regret (win-% points) on the validation positions."""

    def save(self, path: Path, facts: dict[str, Any]) -> None:
        """Write the model to ``path`` (its card is the run's to write)."""

    def agent(self) -> Any:
        """The learner as it plays now, as an :class:`urgym.agents.Agent`."""


@dataclass
class AgentLearner:
    """A learner scored as an agent on the validation positions (TD(lambda)'s network, PPO's model)."""

    suffix: str
    """The model file's suffix."""
    agent: Callable[[], Any]
    """The learner as it plays now, as an agent."""
    write: Callable[[Path, dict[str, Any]], None]
    """Write the model to a path (its card is the run's to write)."""
    table: SolvedTable
    positions: list[tuple[Position, int]]

    def score(self) -> float:
        """The agent's mean regret (win-% points) on the validation positions."""
        return regret_of(self.agent(), self.table, self.positions)

    def save(self, path: Path, facts: dict[str, Any]) -> None:
        """Write the model to ``path``."""
        self.write(path, facts)


def regret_of(agent: Any, table: SolvedTable, positions: list[tuple[Position, int]]) -> float:
    """The mean regret (win-% points) of ``agent`` on ``positions``, in this process."""
    return score_positions(agent, table, positions, RunOptions(workers=1, progress=False)).regret.mean


def next_point(done: int, every: int) -> int:
    """The first evaluation point past ``done`` timesteps on a schedule of one every ``every`` (a resumed run's too)."""
    return (done // every + 1) * every


def learning_rate(top: float, share: float, warmup: float = 0.03) -> float:
    """Linear warm-up over the first ``warmup`` of the run, then a cosine down to a hundredth of ``top``."""
    if share < warmup:
        return top * max(share / warmup, 0.01)
    share = min(1.0, (share - warmup) / (1.0 - warmup))
    return top * (0.01 + 0.99 * 0.5 * (1.0 + math.cos(math.pi * share)))


class TrainingRun:
    """The bookkeeping of one run of ``train`` (see the module docstring).

    Args:
        algo: The algorithm's name (one of :data:`ALGORITHMS`), for the cards and the bar.
        rules: The rules being learned.
        plan: Where to write and the budget.
        learner: What is trained.
        unit: What a timestep is, for the bar (``step``, ``decision``, ``position``).
        facts: What every card of the run says besides the measured figures (settings, sizes).
        own_logs: Write ``logs/progress.csv`` and TensorBoard here (False where the algorithm's framework does).
        metrics: Measures more figures at each evaluation (the benchmark's exact metrics): called with the learner as
            an agent and whether the run ends there, it returns figures by name, added to the curve and the logs
            (TensorBoard's ``eval/NAME``).
        table: The solved table that measures the run (its hash goes on the cards).
        checkpoint: The checkpoint the run goes on from (:func:`~urgym.evaluation.training.checkpoint.read_checkpoint`):
            its curve, logs, best regret and seconds are taken up.
    """

    def __init__(
        self,
        algo: str,
        rules: Rules,
        plan: RunPlan,
        learner: Learner,
        unit: str = "step",
        facts: dict[str, Any] | None = None,
        own_logs: bool = True,
        metrics: Metrics | None = None,
        table: SolvedTable | None = None,
        checkpoint: dict[str, Any] | None = None,
    ) -> None:
        plan.out.mkdir(parents=True, exist_ok=True)
        claim_folder(plan.out, "a training run")  # first: of two runs started together, one gets past the check
        check_run_folder(plan.out, learner.suffix, plan.replace, plan.resume)
        self.algo, self.rules, self.plan, self.learner = algo, rules, plan, learner
        self.facts = dict(facts or {})
        self.start = time.perf_counter()
        self.curve: list[dict[str, float]] = []
        self.best = math.inf
        self.log: list[dict[str, Any]] = []
        self.own_logs = own_logs
        self.metrics = metrics
        self.table = table
        self.figures: dict[str, Any] = {}
        """The figures of ``metrics`` at the last evaluation."""
        self.writer = _tensorboard(plan.out) if own_logs else None  # logs/ checked: a real folder, not a link
        total = None if plan.timesteps >= UNCAPPED else plan.timesteps  # bounded by minutes: a count, no bar
        self.bar = progress_bar(total, algo, plan.progress, unit=unit)
        self.resumed_at: list[int] = []
        """The timesteps of each checkpoint the run went on from."""
        self.earlier_seconds = 0.0
        """The seconds the run had taken when its checkpoint was written (0 for a run not resumed)."""
        if checkpoint is not None:
            self._take_up(checkpoint)
        else:  # an earlier run's checkpoint must not outlive the run that replaces it
            remove_checkpoint(plan.out)

    def _take_up(self, checkpoint: dict[str, Any]) -> None:
        """Go on from ``checkpoint``: its curve, logs, best regret, figures and seconds."""
        held = checkpoint["run"]
        self.earlier_seconds = held["seconds"]
        self.start -= held["seconds"]
        self.curve, self.log, self.best, self.figures = held["curve"], held["log"], held["best"], held["figures"]
        self.resumed_at = [*held["resumed_at"], checkpoint["timesteps"]]
        self.advance(checkpoint["timesteps"])

    def save_checkpoint(self, done: int, identity: dict[str, Any], learner: dict[str, Any]) -> None:
        """Write the run's checkpoint at ``done`` timesteps: its bookkeeping and the ``learner``'s whole state.

        ``identity`` is what a resumed run must match (algorithm, seed, budget, settings).
        """
        held = {"seconds": self.seconds, "curve": self.curve, "log": self.log, "best": self.best}
        held.update(figures=self.figures, resumed_at=self.resumed_at)
        write_checkpoint(self.plan.out, {"identity": identity, "timesteps": done, "run": held, "learner": learner})

    @property
    def seconds(self) -> float:
        """Seconds since the run started."""
        return time.perf_counter() - self.start

    def share(self, done: int) -> float:
        """How much of the budget is spent after ``done`` timesteps, 0 to 1 (or more)."""
        spent = self.seconds / (60 * self.plan.minutes) if self.plan.minutes else 0.0
        return max(done / self.plan.timesteps, spent)

    def advance(self, done: int) -> None:
        """Show ``done`` timesteps on the bar."""
        self.bar.n = done
        self.bar.refresh()

    def note(self, done: int, **values: Any) -> None:
        """A row of ``logs/progress.csv`` without an evaluation."""
        self.log.append({"timesteps": done, **values, "seconds": round(self.seconds, 2), "eval/mean_regret": ""})

    def evaluate(self, done: int, **values: Any) -> float:
        """Score the learner, log it, add it to the curve, and keep it if it is the best so far."""
        regret = self.learner.score()
        self.bar.set_postfix_str(f"regret {regret:.4f}")
        self.figures = self.metrics(self.learner.agent(), done >= self.plan.timesteps) if self.metrics else {}
        numbers = {key: value for key, value in self.figures.items() if isinstance(value, (int, float))}
        row = {"timesteps": done, **values, "seconds": round(self.seconds, 2), "eval/mean_regret": regret}
        self.log.append({**row, **{f"eval/{key}": value for key, value in numbers.items()}})
        if self.own_logs:
            _write_rows(self.plan.out / "logs" / "progress.csv", self.log)
            if self.writer:
                for key, value in {"mean_regret": regret, **numbers}.items():
                    self.writer.add_scalar(f"eval/{key}", value, done)
        self.curve.append({"timesteps": done, "seconds": round(self.seconds, 1), "mean_regret": regret, **self.figures})
        _write_rows(self.plan.out / "curve.csv", self.curve)
        if regret < self.best:
            self.best = regret
            self._save("best_model", done, regret, values)
        return regret

    def finish(self, done: int, **values: Any) -> dict[str, Any]:
        """Score the last model (unless just scored), save it as ``model.*`` and say what the run did."""
        self.bar.close()
        if self.curve and self.curve[-1]["timesteps"] == done:
            regret = self.curve[-1]["mean_regret"]
        else:
            regret = self.evaluate(done, **values)
        self._save("model", done, regret, values)
        if self.own_logs:
            _write_rows(self.plan.out / "logs" / "progress.csv", self.log)
        suffix = self.learner.suffix
        out = self.plan.out
        remove_checkpoint(out)
        release_folder(out)
        return {
            "model": str(out / f"model{suffix}"),
            "best_model": str(out / f"best_model{suffix}"),
            "timesteps": done,
            "seconds": self.seconds,
            "best_regret": self.best,
            "resumed_at": self.resumed_at,
            "earlier_seconds": self.earlier_seconds,
        }

    def _save(self, name: str, done: int, regret: float, values: dict[str, Any]) -> None:
        facts = {
            "algo": self.algo,
            "rule_set": self.rules.name,
            "pieces": self.rules.pieces,
            "seed": self.plan.seed,
            "timesteps": int(done),
            "train_seconds": round(self.seconds, 1),
            "validation_regret": regret,
            "regret_set": f"validation set v{TEST_SET_VERSION} (position benchmark, disjoint from the test set)",
            "urgym": __version__,
            **({"table_hash": self.table.header["checksum"]} if self.table is not None else {}),
            "command": " ".join(["train", *sys.argv[1:]]),
            **({"games": values["games"]} if "games" in values else {}),
            **self.facts,
        }
        path = self.plan.out / f"{name}{self.learner.suffix}"
        self.learner.save(path, facts)
        write_model_card(path, self.rules, **facts)


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
