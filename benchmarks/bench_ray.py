"""One task's table on a local Ray cluster of two nodes against ``--jobs 2`` on this machine: the figures and the times.

    python -m benchmarks.bench_ray [--task finkel-3-v1] [--algo td-lambda] [--seeds 5]

The cluster is Ray's test cluster on this machine (a head and a worker node, one core each, started here); the seeds
go to it as ``urgym bench --ray ADDRESS`` sends them, and then to two local processes (``--jobs 2``). Prints each
wall time (the cluster's including its start) and whether every seed's figures are the same to the bit.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from urgym.evaluation.bench import get_task, run_task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="finkel-3-v1")
    parser.add_argument("--algo", default="td-lambda")
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    from ray.cluster_utils import Cluster

    task = get_task(args.task)
    with tempfile.TemporaryDirectory() as folder:
        run_task(task, args.algo, Path(folder) / "warm", seeds=[99], progress=False)  # the kernels compiled first
        began = time.perf_counter()
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
        cluster.add_node(num_cpus=1)
        started = time.perf_counter() - began
        try:
            remote = run_task(task, args.algo, Path(folder) / "ray", args.seeds, progress=False, ray=cluster.address)
        finally:
            import ray

            ray.shutdown()
            cluster.shutdown()
        on_ray = time.perf_counter() - began
        began = time.perf_counter()
        local = run_task(task, args.algo, Path(folder) / "local", args.seeds, jobs=2, progress=False)
        on_jobs = time.perf_counter() - began
    same = [a["digest"] for a in remote["per_seed"]] == [b["digest"] for b in local["per_seed"]]
    print(f"{task.id} {args.algo}, {args.seeds} seeds")
    print(f"  Ray, two nodes of one core: {on_ray:.1f} s (the cluster's start {started:.1f} s of it)")
    print(f"  --jobs 2 on this machine:   {on_jobs:.1f} s")
    print(f"  every seed's figures the same to the bit: {same}")


if __name__ == "__main__":
    main()
