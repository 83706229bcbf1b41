"""The Ray backend against the process pool: same seed, same numbers (on a local Ray instance)."""

import numpy as np
import pytest
import ray
from urgym.evaluation.scoring.match import play_match
from urgym.evaluation.scoring.positions import benchmark_positions, score_positions
from urgym.evaluation.scoring.runner import RunOptions

from urgym import get_rules


@pytest.fixture(scope="module")
def local_ray():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)  # not a cluster of another test
    yield
    ray.shutdown()


def test_ray_matches_the_process_pool(local_ray, finkel3_table):
    rules = get_rules("finkel", 3)
    pool = play_match(
        "heuristic", "perfect", rules, games=16, seed=4, table=finkel3_table, run=RunOptions(workers=2, progress=False)
    )
    remote = play_match(
        "heuristic",
        "perfect",
        rules,
        games=16,
        seed=4,
        table=finkel3_table,
        run=RunOptions(backend="ray", progress=False),
    )
    assert np.array_equal(pool.winners, remote.winners)
    assert pool.agents[0].regret.mean == pytest.approx(remote.agents[0].regret.mean, abs=1e-12)
    positions = benchmark_positions(finkel3_table, 20)
    a = score_positions("greedy", finkel3_table, positions, run=RunOptions(workers=2, progress=False))
    b = score_positions("greedy", finkel3_table, positions, run=RunOptions(backend="ray", progress=False))
    assert np.array_equal(a.regrets, b.regrets)
