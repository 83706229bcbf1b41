"""docs/errors.md's promises, tested as a hostile but fair user would test them: every case of four rounds.

A command line ends with status 2 and one line naming what was wrong; Ctrl-C with status 130 and one line within
two seconds; a library call raises the documented exception naming the bad value; and nothing is lost (tables,
caches, inputs and earlier records byte for byte unchanged), left running, or taken silently as something else.
Each test runs a part of a round and fails listing every case that was not clear, with its class and what it gave.
"""

from __future__ import annotations

import pytest

from tests.hostile import commands, round3, round4, round6, untrusted
from tests.hostile.judge import RGU, Outcome
from urgym import get_rules, solver

NAMED = {tuple(argv): message for argv, message in commands.NAMED_CASES}
GENERATED = list(commands.command_cases())
GENERATED_WHAT = {tuple(argv): what for argv, what, env in GENERATED if not env}
COMMAND_CASES = [case for case in GENERATED if tuple(case[0]) not in NAMED or case[2]]


def _assert_clear(outcomes: list[Outcome]) -> None:
    skipped = [o for o in outcomes if o.verdict == "skipped"]
    if outcomes and len(skipped) == len(outcomes):
        pytest.skip("; ".join(sorted({o.detail for o in skipped})))
    remaining = [o for o in outcomes if o.verdict not in ("clear", "skipped")]
    assert outcomes, "the part tried no case"
    assert not remaining, "\n".join(f"[{o.verdict}] {o.case}\n    {o.detail}" for o in remaining)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """A folder holding the good and bad input files the command lines name."""
    folder = tmp_path_factory.mktemp("hostile-inputs")
    commands.write_inputs(folder)
    return folder


@pytest.mark.parametrize(
    ("argv", "what", "env"), COMMAND_CASES, ids=[" ".join(argv) + "".join(env) for argv, _, env in COMMAND_CASES]
)
def test_a_bad_command_line_is_one_line_naming_it(argv, what, env, inputs):
    _assert_clear([commands.run_command(argv, what, env, inputs)])


@pytest.fixture(scope="module")
def finkel2_cached(private_cache):
    """The table the long runs load, solved beforehand: Ctrl-C must find them at work, not solving it."""
    solver.load_or_solve(get_rules("finkel", 2), progress=False)


@pytest.mark.parametrize(("argv", "message"), commands.NAMED_CASES, ids=[" ".join(c[0]) for c in commands.NAMED_CASES])
def test_a_bad_command_line_says_what_was_wrong(argv, message, inputs):
    env = commands.NAMED_CASE_ENV.get(message, {})
    outcome = commands.run_command(argv, GENERATED_WHAT.get(tuple(argv), message), env, inputs)
    _assert_clear([outcome])
    assert message in outcome.detail, outcome.detail


@pytest.mark.parametrize("argv", commands.INTERRUPTED, ids=[" ".join(argv) for argv in commands.INTERRUPTED])
def test_ctrl_c_stops_a_long_run_within_two_seconds(argv, tmp_path, finkel2_cached):
    _assert_clear([commands.run_interrupted(argv, tmp_path)])


def test_ctrl_c_stops_parallel_seeds_at_once_and_leaves_no_worker_behind(tmp_path, private_cache):
    """Seeds trained in worker processes (``--jobs 2``) run for hours: Ctrl-C must stop them, not wait for them."""
    solver.load_or_solve(get_rules("finkel", 3), progress=False)  # the task's table, so Ctrl-C finds the seeds at work
    argv = ["urgym", "bench", "--task", "finkel-3-v1", "--algo", "td-lambda", "--seeds", "2", "--jobs", "2"]
    argv += ["--out", "run", "--no-progress"]
    seeds = [tmp_path / "run" / f"seed-{seed}" for seed in range(2)]
    outcome = commands.run_interrupted(argv, tmp_path, ready=lambda: all(seed.exists() for seed in seeds))
    _assert_clear([outcome])
    assert all(seed.exists() for seed in seeds), "Ctrl-C came before both workers were training"


def test_bad_library_calls_raise_errors_naming_the_value(tmp_path):
    _assert_clear([commands.run_library_case(*case) for case in commands.library_cases(tmp_path)])


@pytest.mark.parametrize("part", list(untrusted.PARTS))
def test_untrusted_files_and_careless_outputs(part, tmp_path):
    if part == "RoyalUr tables" and not RGU.exists():
        pytest.skip(f"RoyalUr's table {RGU} is not beside the repository (../shared)")
    _assert_clear(untrusted.run_part(part, tmp_path))


@pytest.mark.parametrize("part", round3.PARTS, ids=[part.__name__.strip("_") for part in round3.PARTS])
def test_round_3_cache_targets_full_disks_engines_networks_bombs(part, tmp_path, monkeypatch):
    monkeypatch.setenv("URGYM_CACHE", str(tmp_path / "cache"))  # the round aims outputs at the cache: its own
    (tmp_path / "hostile").mkdir()
    _assert_clear(part(tmp_path / "hostile", Outcome))


@pytest.mark.parametrize("part", round4.PARTS, ids=[part.__name__.strip("_") for part in round4.PARTS])
def test_round_4_meeting_runs_special_files_load_read_only_installs(part, tmp_path):
    (tmp_path / "round4").mkdir()
    _assert_clear(part(tmp_path / "round4", Outcome))


@pytest.mark.parametrize("part", round6.PARTS, ids=[part.__name__.strip("_") for part in round6.PARTS])
def test_round_6_results_that_cannot_be_forged_and_folders_that_cost_no_file(part, tmp_path, private_cache):
    (tmp_path / "round6").mkdir()
    _assert_clear(part(tmp_path / "round6", Outcome))
