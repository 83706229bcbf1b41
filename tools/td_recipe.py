"""The table-free agent from scratch, in stages that resume: a TD(lambda) teacher, its search distilled, then rounds.

Run: ``python -m tools.td_recipe OUT [--rounds N] [--dry-run] [--curve CSV]``

1. ``OUT/teacher``: TD(lambda) self-play on both cores for 30 minutes (``train --algo td-lambda``).
2. ``OUT/round-1``: a 92-384-128-1 network fitted for 11 minutes to 1,000,000 decisions the teacher's two-ply search
   labels (``train --algo distill --teacher``).
3. ``OUT/rounds/round-K``: rounds of 25 minutes of fitting to 6,000,000 decisions each labelled by the last round's
   one-ply search (``train --rounds``, round 1 of them taught by ``OUT/round-1``).

Every stage runs with ``--select last``: its result is its last network, so nothing in the recipe is chosen with the
solved table, which only measures the curves. A stage whose folder holds a finished run is skipped, a stopped one
resumes from its checkpoint (``train --resume``), so the command can be run again after any interruption.
``--curve CSV`` writes the finished stages' validation curves on one clock (each stage after the labels and fitting
of those before it; a student's points after its own labels) with the stage's name, and draws it beside the CSV.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from pathlib import Path

from urgym.evaluation.training.run import CHECKPOINT, finished_run

from urgym.files import write_atomic

COMMON = ["--threads", "2", "--select", "last", "--no-progress"]
TEACHER = ["--algo", "td-lambda", "--features", "tactics-v1", "--hidden", "128", "--minutes", "30"]
TEACHER += ["--eval-every", "4000000", "--eval-positions", "2000", "--seed", "1"]
FIRST_STUDENT = ["--algo", "distill", "--teacher-depth", "2", "--decisions", "1000000", "--minutes", "11"]
FIRST_STUDENT += ["--eval-every", "2000000", "--seed", "1"]
ROUNDS = ["--algo", "distill", "--teacher-depth", "1", "--decisions", "6000000", "--minutes", "25"]
ROUNDS += ["--eval-every", "8000000", "--seed", "2"]


def stages(out: Path, rounds: int) -> list[tuple[str, Path, list[str]]]:
    """The recipe's stages: (name, folder, the ``train`` arguments), in order."""
    teacher, first, later = out / "teacher", out / "round-1", out / "rounds"
    first_args = [*FIRST_STUDENT, "--teacher", str(teacher / "model.npz")]
    later_args = [*ROUNDS, "--teacher", str(first / "model.npz"), "--rounds", str(rounds)]
    return [
        ("teacher", teacher, [*TEACHER, *COMMON, "--out", str(teacher)]),
        ("first student", first, [*first_args, *COMMON, "--out", str(first)]),
        (f"{rounds} more rounds", later, [*later_args, *COMMON, "--out", str(later)]),
    ]


def stage_folders(out: Path) -> list[tuple[str, Path]]:
    """The finished stages' folders in the recipe's order: the teacher, the first student, then each round's."""
    rounds = sorted((out / "rounds").glob("round-*"), key=lambda p: int(p.name.removeprefix("round-")))
    named = [("teacher", out / "teacher"), ("first student", out / "round-1")]
    named += [(f"round {p.name.removeprefix('round-')}", p) for p in rounds]
    return [(name, folder) for name, folder in named if finished_run(folder, ".npz")]


def stage_cards(out: Path) -> list[tuple[str, Path, dict]]:
    """Each finished stage's name, folder and card (its network's facts: command, seconds of labels and fitting)."""
    return [(name, folder, json.loads((folder / "model.json").read_text())) for name, folder in stage_folders(out)]


def recipe_facts(out: Path) -> dict:
    """What a card says of the recipe that made its network: each finished stage's command and times, and the sum.

    A stage's seconds are its labels' and its fitting's (the clock of :func:`recipe_curve`).
    """
    stages = []
    for name, _, card in stage_cards(out):
        stage = {"stage": name, "command": card["command"], "train_seconds": card["train_seconds"]}
        stage["label_seconds"] = card.get("label_seconds", 0.0)
        stage["validation_regret"] = card.get("validation_regret")
        stages.append(stage)
    seconds = sum(stage["label_seconds"] + stage["train_seconds"] for stage in stages)
    return {"command": "python -m tools.td_recipe OUT --rounds N", "stages": stages, "seconds": round(seconds, 1)}


def recipe_curve(out: Path, path: Path) -> Path:
    """Write the finished stages' curves as one CSV on the recipe's clock (see the module docstring); draw it."""
    rows, clock = [], 0.0
    for name, folder, card in stage_cards(out):
        labels = float(card.get("label_seconds", 0.0))
        with (folder / "curve.csv").open(newline="") as f:
            for row in csv.DictReader(f):
                seconds = clock + labels + float(row["seconds"])
                rows.append({"stage": name, "timesteps": row["timesteps"], "seconds": f"{seconds:.1f}",
                             "mean_regret": row["mean_regret"]})  # fmt: skip
        clock += labels + float(card["train_seconds"])

    def write(tmp: Path) -> None:
        with tmp.open("w", newline="") as f:
            writer = csv.DictWriter(f, ["stage", "timesteps", "seconds", "mean_regret"])
            writer.writeheader()
            writer.writerows(rows)

    write_atomic(path, write)
    draw_stages(rows, path.with_suffix(".png"))
    return path


def draw_stages(rows: list[dict[str, str]], path: Path) -> Path:
    """Each stage's validation regret against the recipe's minutes, one line a stage (each student starts afresh)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
    for stage in dict.fromkeys(row["stage"] for row in rows):
        points = [row for row in rows if row["stage"] == stage]
        minutes = [float(row["seconds"]) / 60 for row in points]
        ax.plot(minutes, [float(row["mean_regret"]) for row in points], marker=".", label=stage)
    ax.set_xlabel("the recipe's minutes (labels and fitting, stage after stage)")
    ax.set_ylabel("validation regret (win-% points)")
    ax.set_yscale("log")
    ax.set_title("td without the table: the teacher, then students of students")
    ax.legend(fontsize="small")
    out = write_atomic(path, lambda tmp: fig.savefig(tmp, format="png"))
    plt.close(fig)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", help="the recipe's folder (created; run again to resume)")
    parser.add_argument("--rounds", type=int, default=4, help="rounds after the first student (default 4)")
    parser.add_argument("--dry-run", action="store_true", help="print the commands and what is finished, run nothing")
    parser.add_argument("--curve", type=Path, help="write the finished stages' curves on one clock to this CSV")
    args = parser.parse_args()
    if args.curve:
        print(f"the recipe's curve: {recipe_curve(Path(args.out), args.curve)}")
        return
    for name, folder, train_args in stages(Path(args.out), args.rounds):
        last_round = folder / f"round-{args.rounds}" if folder.name == "rounds" else folder
        command = ["train", *train_args]
        if finished_run(last_round, ".npz"):
            print(f"{name}: finished before, in {folder}", flush=True)
            continue
        if (folder / CHECKPOINT).is_file():
            command.append("--resume")
        print(f"{name}: {' '.join(command)}", flush=True)
        if args.dry_run:
            continue
        subprocess.run([sys.executable, "-m", "urgym.commands", *command], check=True)


if __name__ == "__main__":
    main()
