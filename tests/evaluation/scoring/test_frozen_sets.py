"""The benchmark's test and validation sets are frozen: a figure quoted with "test set v1" means these positions.

A change to the sampling (the core's dice streams, perfect play, KEEP, the seeds or the counts) that moves one
position fails here: it must bump TEST_SET_VERSION, get a changelog entry, and the fingerprints below are then
recomputed for the new version.
"""

import hashlib

import numpy as np
from urgym.evaluation.scoring.positions import TEST_SET_VERSION, benchmark_positions, validation_positions

FINGERPRINTS = {1: {"test": "6f012dd2a7b782e0", "validation": "b0c27ea266620594"}}
"""sha256 (first 16 hex digits) of each set's (code, roll) pairs on finkel with 3 pieces, per version."""


def _fingerprint(pairs) -> str:
    return hashlib.sha256(np.array([(p.code, r) for p, r in pairs], dtype=np.int64).tobytes()).hexdigest()[:16]


def test_the_sets_of_this_version_are_the_frozen_ones(finkel3_table):
    frozen = FINGERPRINTS[TEST_SET_VERSION]
    assert _fingerprint(benchmark_positions(finkel3_table)) == frozen["test"]
    assert _fingerprint(validation_positions(finkel3_table, 500)) == frozen["validation"]


def test_the_version_is_in_every_benchmark_report(finkel3_table):
    from urgym.evaluation import score_positions
    from urgym.evaluation.scoring.runner import RunOptions

    report = score_positions("greedy", finkel3_table, benchmark_positions(finkel3_table, 50), RunOptions(workers=1))
    assert report.to_dict()["test_set_version"] == TEST_SET_VERSION


def test_the_training_recipes_baselines_are_what_the_docs_print(finkel3_table):
    """docs/environments.md compares its recipes with these players on the same 500 validation positions."""
    from urgym.evaluation import score_positions
    from urgym.evaluation.scoring.runner import RunOptions

    validation, test = validation_positions(finkel3_table, 500), benchmark_positions(finkel3_table)
    for spec, on_validation, on_test in (
        ("random", 2.622, 2.633),
        ("greedy", 1.087, 1.306),
        ("heuristic", 0.532, 0.605),
    ):
        assert (
            round(score_positions(spec, finkel3_table, validation, RunOptions(workers=1)).regret.mean, 3)
            == on_validation
        )
        assert round(score_positions(spec, finkel3_table, test, RunOptions(workers=1)).regret.mean, 3) == on_test
