"""What the protocol costs around a learner: a seed of finkel-3-v1's td-lambda, its wall time split three ways.

    python -m benchmarks.bench_protocol [--repeats 3] [--seed 0]

A seed is trained by ``urgym.evaluation.bench.train_seed`` as ``urgym bench`` trains it; its wall time is split into
learning (inside ``TDLambda.train``, the numba self-play), the exact metrics at the schedule's points (the seed
record's ``eval_seconds``) and the rest: the protocol's overhead (the loop, validation, checkpoints, the curve, logs
and models). Only APIs that urgym 0.7.0 had too are used, so the same script measures the code before the open
benchmark's port (run it with that version first on ``PYTHONPATH``) and after it, on the same machine. Medians of
``--repeats`` runs; the numba kernels are compiled (and the table solved) by a first run that is not counted.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from urgym.evaluation.bench import get_task
from urgym.evaluation.bench.protocol import train_seed
from urgym.evaluation.training.td_lambda import TDLambda

import urgym


def one_seed(seed: int) -> dict[str, float]:
    """Train one seed; its wall, learning, evaluation and overhead seconds."""
    learning = [0.0]
    train = TDLambda.train

    def timed(self, *args, **kwargs):
        began = time.perf_counter()
        try:
            return train(self, *args, **kwargs)
        finally:
            learning[0] += time.perf_counter() - began

    TDLambda.train = timed
    try:
        with tempfile.TemporaryDirectory() as folder:
            began = time.perf_counter()
            record = train_seed(get_task("finkel-3-v1"), "td-lambda", seed, Path(folder) / f"seed-{seed}")
            wall = time.perf_counter() - began
    finally:
        TDLambda.train = train
    evaluation = sum(point["eval_seconds"] for point in record["curve"])
    figures = (record["final"]["win_rate"], record["final"]["exploitability"], record["final"]["test_regret"])
    return {
        "wall": wall,
        "learning": learning[0],
        "evaluation": evaluation,
        "overhead": wall - learning[0] - evaluation,
        "figures": figures,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    one_seed(args.seed)  # compiles the kernels and solves a missing table
    runs = [one_seed(args.seed) for _ in range(args.repeats)]
    assert len({run["figures"] for run in runs}) == 1, "a seed's figures must not change from run to run"
    print(f"urgym {urgym.__version__} ({Path(urgym.__file__).parent}), finkel-3-v1 td-lambda seed {args.seed}")
    print(f"final figures {runs[0]['figures']}")
    for key in ("wall", "learning", "evaluation", "overhead"):
        values = [run[key] for run in runs]
        print(f"{key:>10}: median {statistics.median(values):6.2f} s  (runs: {', '.join(f'{v:.2f}' for v in values)})")
    share = statistics.median(run["overhead"] / run["wall"] for run in runs)
    print(f"the protocol's overhead: {100 * share:.1f}% of the seed's wall time")


if __name__ == "__main__":
    main()
