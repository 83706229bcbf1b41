"""The table-free agent from scratch, in stages that resume: a TD(lambda) teacher, its search distilled, then rounds.

Run: ``python -m tools.td_recipe OUT [--rounds N] [--dry-run]``

1. ``OUT/teacher``: TD(lambda) self-play on both cores for 30 minutes (``train --algo td-lambda``).
2. ``OUT/round-1``: a 92-384-128-1 network fitted for 11 minutes to 1,000,000 decisions the teacher's two-ply search
   labels (``train --algo distill --teacher``).
3. ``OUT/rounds/round-K``: rounds of 25 minutes of fitting to 6,000,000 decisions each labelled by the last round's
   one-ply search (``train --rounds``, round 1 of them taught by ``OUT/round-1``).

Every stage runs with ``--select last``: its result is its last network, so nothing in the recipe is chosen with the
solved table, which only measures the curves. A stage whose folder holds a finished run is skipped, a stopped one
resumes from its checkpoint (``train --resume``), so the command can be run again after any interruption.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from urgym.evaluation.training.run import CHECKPOINT, finished_run

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", help="the recipe's folder (created; run again to resume)")
    parser.add_argument("--rounds", type=int, default=4, help="rounds after the first student (default 4)")
    parser.add_argument("--dry-run", action="store_true", help="print the commands and what is finished, run nothing")
    args = parser.parse_args()
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
