"""The RL benchmark: tasks, metrics against evaluate --exact, protocol runs (bit-identical, resumed), results."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import math
import shutil
from pathlib import Path

import numba
import numpy as np
import pytest
from urgym.evaluation.bench import (
    TASKS,
    TaskEvaluator,
    across_seeds,
    baseline_results,
    get_task,
    leaderboard,
    load_result,
    run_task,
    validate_result,
)
from urgym.evaluation.bench.results import ResultError, result_schema
from urgym.evaluation.scoring.exact import exact_results

SMALL = get_task("finkel-3")
TINY = dataclasses.replace(SMALL, budget=30_000, eval_every=15_000, seeds=2)
"""The small task's rules with a budget a test can train twice in seconds."""


def test_tasks_are_named_versioned_and_their_schedule_ends_at_the_budget():
    assert set(TASKS) >= {"finkel-3-v1", "finkel-4-v1", "finkel-7-v1"}
    for task_id, task in TASKS.items():
        assert task.id == task_id and task.seeds >= 5
        points = task.points()
        assert points[-1] == task.budget and all(b - a == task.eval_every for a, b in itertools.pairwise(points))
        assert set(task.metrics_at(True)) == {"win_rate", "exploitability", "test_regret"}
    assert get_task("finkel-3") is TASKS["finkel-3-v1"]
    assert TASKS["finkel-7-v1"].metrics_at(False) == ("test_regret",)
    with pytest.raises(ValueError, match="unknown task 'go-9'; tasks: finkel-3-v1"):
        get_task("go-9")


def test_the_interval_across_seeds_is_students_t():
    stats = pytest.importorskip("scipy.stats")
    values = [41.0, 43.5, 40.2, 44.9, 42.2]
    summary = across_seeds(values)
    low, high = stats.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=stats.sem(values))
    assert summary["mean"] == pytest.approx(np.mean(values))
    assert summary["low95"] == pytest.approx(low, abs=1e-3) and summary["high95"] == pytest.approx(high, abs=1e-3)
    assert across_seeds([3.0]) == {"mean": 3.0, "low95": None, "high95": None, "n": 1}


def test_the_metrics_are_those_of_evaluate_exact_and_the_position_benchmark(finkel3_table):
    from urgym.agents import make_agent
    from urgym.evaluation.scoring.positions import benchmark_positions, score_positions
    from urgym.evaluation.scoring.runner import RunOptions

    figures = TaskEvaluator(SMALL, finkel3_table)(make_agent("greedy"), final=True)
    report = exact_results("greedy", "perfect", SMALL.get_rules(), progress=False, best_response=True, cache=False)
    assert figures["win_rate"] == report.match.win_rate
    assert figures["exploitability"] == report.exploitability["exploitability_points"]
    test = score_positions("greedy", finkel3_table, benchmark_positions(finkel3_table), RunOptions(workers=1))
    assert figures["test_regret"] == pytest.approx(test.regret.mean)
    assert figures["policy"] == "deterministic" and 0 < figures["win_rate"] < 50 < 50 + figures["exploitability"]
    perfect = TaskEvaluator(SMALL, finkel3_table)(make_agent("perfect"), final=True)
    assert perfect["test_regret"] == 0 and perfect["win_rate"] == pytest.approx(50, abs=1e-6)
    assert perfect["exploitability"] == pytest.approx(0, abs=1e-6)
    sampled = TaskEvaluator(SMALL, finkel3_table)(make_agent("random"), final=True)
    assert sampled["policy"] == "distribution"


def _without_times(result):
    """A result less what the clock measures (wall and evaluation seconds, the machine)."""
    result = copy.deepcopy(result)
    result.pop("machine")
    result.pop("provenance")
    for record in result["per_seed"]:
        for key in ("wall_seconds", "eval_seconds", "machine", "provenance"):
            record.pop(key)
        for point in [*record["curve"], record["final"]]:
            point.pop("seconds", None)
            point.pop("eval_seconds", None)
    result["summary"]["final"].pop("wall_seconds")
    return result


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, finkel3_table):
    out = tmp_path_factory.mktemp("bench") / "td"
    return out, run_task(TINY, "td-lambda", out, progress=False)


def test_a_run_writes_a_valid_result_and_its_curves(tiny_run):
    out, result = tiny_run
    assert load_result(out / "results.json") == json.loads(json.dumps(result))
    assert (out / "curves.png").stat().st_size > 1000
    assert result["seeds"] == [0, 1] and result["complete"] and result["algo"] == "td-lambda"
    assert result["task"]["id"] == f"finkel-3-v1+{TINY.digest[:8]}" and result["test_set_version"] == 1  # not the task
    assert result["table_hash"] == TaskEvaluator(SMALL).table_hash and result["urgym"]
    for record in result["per_seed"]:
        assert [p["decisions"] for p in record["curve"]][-1] >= TINY.budget
        assert all({"win_rate", "exploitability", "test_regret"} <= set(p) for p in record["curve"])
        assert record["final"]["decisions"] == record["decisions"] and record["final"]["policy"] == "deterministic"
        assert record["machine"]["libraries"]["numpy"] == np.__version__  # a seed names what it was trained with
    assert result["machine"]["libraries"]["numba"] == numba.__version__ and result["machine"]["cores"] >= 1
    cpuinfo = Path("/proc/cpuinfo").read_text().split() if Path("/proc/cpuinfo").exists() else []
    assert ("avx2" in result["machine"]["vector_instructions"]) == ("avx2" in cpuinfo)
    finals = [r["final"]["win_rate"] for r in result["per_seed"]]
    assert result["summary"]["final"]["win_rate"]["mean"] == pytest.approx(np.mean(finals))
    assert "td-lambda" in leaderboard([result]) and "finkel-3-v1" in leaderboard([result])


def test_a_fixed_seed_and_budget_give_bit_identical_results_and_a_resumed_run_the_same(tiny_run, tmp_path):
    _out, result = tiny_run
    again = run_task(TINY, "td-lambda", tmp_path / "again", progress=False)
    assert _without_times(again) == _without_times(result)
    (tmp_path / "again" / "seed-1" / "seed.json").unlink()  # as if interrupted during seed 1
    (tmp_path / "again" / "results.json").unlink()
    trained = []
    resumed = run_task(TINY, "td-lambda", tmp_path / "again", progress=False, on_seed=trained.append)
    assert [r["seed"] for r in trained] == [1]  # seed 0 was kept
    assert _without_times(resumed) == _without_times(result)


def test_the_estimate_before_a_run_counts_only_the_seeds_it_still_has_to_train(tiny_run, tmp_path):
    from urgym.evaluation.bench.protocol import SeedRun, estimate_minutes, finished_seeds
    from urgym.evaluation.training.algorithms import get_algorithm

    out, _result = tiny_run
    td = get_algorithm("td-lambda")
    run = SeedRun(TINY, td, td.defaults())
    assert (
        finished_seeds(out, 2, run) == 2 and finished_seeds(out, 5, run) == 2 and finished_seeds(tmp_path, 5, run) == 0
    )
    other = SeedRun(
        dataclasses.replace(TINY, budget=45_000), td, td.defaults()
    )  # another task: its records don't count
    assert finished_seeds(out, 2, other) == 0
    assert estimate_minutes(TINY, "td-lambda", 2, 1, finished=2) == 0
    assert estimate_minutes(TINY, "td-lambda", 5, 1, finished=2) == estimate_minutes(TINY, "td-lambda", 3, 1) > 0
    assert estimate_minutes(TINY, "td-lambda", 5, 2, finished=2) == estimate_minutes(TINY, "td-lambda", 2, 1)


def test_a_damaged_or_crafted_seed_record_is_trained_again_with_a_warning_naming_it(tiny_run, tmp_path):
    out, result = tiny_run
    shutil.copytree(out, tmp_path / "run")
    for seed, change in ((0, {"curve": [{"decisions": "x"}]}), (1, {"final": {"win_rate": "\x1b[2J"}})):
        path = tmp_path / "run" / f"seed-{seed}" / "seed.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), **change}))
    trained = []
    with pytest.warns(UserWarning, match=r"seed-0/seed.json is damaged \(seed record.curve\[0\] lacks 'test_regret'\)"):
        again = run_task(TINY, "td-lambda", tmp_path / "run", progress=False, on_seed=trained.append)
    assert sorted(r["seed"] for r in trained) == [0, 1]
    assert _without_times(again) == _without_times(result)


def test_a_seed_interrupted_mid_way_goes_on_from_its_checkpoint_and_ends_the_same(tmp_path, monkeypatch):
    task = dataclasses.replace(SMALL, pieces=2, budget=1_024, eval_every=256, seeds=1)  # the mechanism, not the size
    whole = run_task(task, "dqn", tmp_path / "whole", progress=False)
    measure = TaskEvaluator.__call__
    calls = []

    def dies_at_the_second_point(self, agent, final=False):
        calls.append(final)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return measure(self, agent, final)

    monkeypatch.setattr(TaskEvaluator, "__call__", dies_at_the_second_point)
    with pytest.raises(KeyboardInterrupt):
        run_task(task, "dqn", tmp_path / "cut", progress=False)
    monkeypatch.setattr(TaskEvaluator, "__call__", measure)
    assert (tmp_path / "cut" / "seed-0" / "checkpoint.pkl").is_file()
    resumed = run_task(task, "dqn", tmp_path / "cut", progress=False)
    assert resumed["per_seed"][0].pop("resumed_at") == [256]
    assert "resumed_at" not in whole["per_seed"][0]
    assert _without_times(resumed) == _without_times(whole)
    assert not (tmp_path / "cut" / "seed-0" / "checkpoint.pkl").exists()


def test_the_alphazero_learner_runs_under_the_protocol(tmp_path):
    small = {"games": "16", "steps": "8", "simulations": "4"}  # rounds of 128 moves, set as --set KEY=VALUE does
    task = dataclasses.replace(SMALL, pieces=2, budget=512, eval_every=256, seeds=1)
    result = run_task(task, "alphazero", tmp_path / "az", progress=False, settings=small)
    validate_result(result)
    record = result["per_seed"][0]
    assert result["algo"] == "alphazero" and [p["decisions"] for p in record["curve"]] == [256, 512]
    assert result["overrides"] == {"games": 16, "steps": 8, "simulations": 4} and result["settings"]["epochs"] == 4
    assert record["final"]["policy"] == "deterministic" and 0 <= record["final"]["win_rate"] <= 50
    assert (tmp_path / "az" / "seed-0" / "model.pt").is_file()


def test_a_folder_of_another_run_is_refused(tiny_run):
    out, _ = tiny_run
    with pytest.raises(
        ValueError, match=r"holds a run of 'td-lambda' on 'finkel-3-v1\+[0-9a-f]{8}' with other settings"
    ):
        run_task(dataclasses.replace(TINY, budget=45_000), "td-lambda", out, progress=False)
    with pytest.raises(ValueError, match="unknown algorithm 'a2c'; algorithms: td-lambda"):
        run_task(TINY, "a2c", out, progress=False)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.pop("table_hash"), "result lacks 'table_hash'"),
        (lambda r: r["task"].update(pieces="3"), r"result.task.pieces must be integer, got str"),
        (lambda r: r["per_seed"][0]["final"].update(win_rate=float("nan")), "win_rate must be number"),
        (lambda r: r["per_seed"][0]["final"].update(win_rate=101.0), "win_rate must be at most 100"),
        (lambda r: r["per_seed"][0]["final"].update(policy="<script>"), "policy must be one of"),
        (lambda r: r["per_seed"][0].update(decisions=True), "decisions must be integer, got bool"),
        (lambda r: r.update(seeds=[1, 0]), "result.seeds must list the seeds of result.per_seed"),
        (lambda r: r.update(agent="greedy"), "either the algorithm trained"),
        (lambda r: r.update(format=2), r"result.format must be one of \[1\]"),
        (lambda r: r.update(per_seed=[]), "result.per_seed must hold at least 1 items"),
        (lambda r: r["summary"]["final"]["win_rate"].pop("low95"), "win_rate lacks 'low95'"),
        (lambda r: r["per_seed"][0]["machine"]["libraries"].update(torch=2), "libraries.torch must be string"),
    ],
)
def test_a_result_off_the_schema_is_refused_naming_the_field(tiny_run, change, message):
    result = json.loads(json.dumps(tiny_run[1]))
    change(result)
    with pytest.raises(ResultError, match=message):
        validate_result(result)


def test_result_files_that_are_not_results_are_refused_naming_the_file(tmp_path):
    for name, content in (("list.json", "[]"), ("text.json", "not json"), ("bytes.json", b"\xff\xfe")):
        path = tmp_path / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        with pytest.raises(ResultError, match=name):
            load_result(path)
    with pytest.raises(ResultError, match="cannot read"):
        load_result(tmp_path / "missing.json")


def test_the_schema_and_the_shipped_baselines_agree():
    schema = result_schema()
    assert schema["properties"]["format"]["enum"] == [1]
    for result in baseline_results():  # each validated as it is read
        assert result["complete"] or result["task"]["id"] == "finkel-7-v1"
        assert math.isfinite(result["summary"]["final"]["win_rate"]["mean"])


def test_torch_threads_are_unchanged_by_an_exact_evaluation_in_a_process_at_work(finkel3_table):
    """In fresh processes whose torch already worked, as a learner's has.

    numba alone moves torch to every core when its threads start (the fault); with urgym imported, an exact
    evaluation and numba's own calls leave torch on its one thread.
    """
    import os
    import subprocess
    import sys

    pytest.importorskip("torch")
    at_work = "import torch; torch.set_num_threads(1); torch.ones(256, 256) @ torch.ones(256, 256)\n"
    fault = at_work + "import numba; numba.get_num_threads(); print(torch.get_num_threads())\n"
    mended = at_work + (
        "import numba, urgym\n"
        "from urgym.evaluation.scoring.exact import exact_results\n"
        "exact_results('greedy', 'perfect', urgym.get_rules('finkel', 3), progress=False, best_response=True)\n"
        "numba.get_num_threads(); numba.set_num_threads(1); numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)\n"
        "print(torch.get_num_threads())\n"
    )
    run = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
        for code in (fault, mended)
    ]
    assert run[1].stdout.split()[-1] == "1", run[1].stderr[-2000:]
    if (os.cpu_count() or 1) > 1:
        assert run[0].stdout.split()[-1] != "1"  # the fault is there to be mended on this machine


def test_the_sb3_callback_logs_the_figures_of_evaluate_exact_and_keeps_torch_threads(tmp_path, finkel3_table):
    torch = pytest.importorskip("torch")
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from stable_baselines3.common.logger import configure
    from urgym.commands.evaluate import main as evaluate
    from urgym.evaluation.bench.callback import exact_metrics_callback

    from urgym.sb3 import SB3VecEnv

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        env = SB3VecEnv(num_envs=4, rules=SMALL.get_rules(), opponent="greedy")
        model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=128, n_epochs=1, seed=3)
        model.set_logger(configure(str(tmp_path / "logs"), ["csv"]))
        callback = exact_metrics_callback("finkel-3", every=512, csv=tmp_path / "points.csv", table=finkel3_table)
        model.learn(1024, callback=callback)
        assert torch.get_num_threads() == 1  # the learner keeps its one thread after every exact evaluation
    finally:
        torch.set_num_threads(before)
    points = callback.points
    assert [p["decisions"] for p in points] == [512, 1024]
    assert all({"win_rate", "exploitability", "test_regret"} <= set(p) for p in points)
    logged = (tmp_path / "logs" / "progress.csv").read_text()
    assert "bench/win_rate" in logged and "bench/exploitability" in logged
    model.save(tmp_path / "model.zip")
    out = tmp_path / "exact.json"
    spec = f"sb3:{tmp_path / 'model.zip'}"
    assert evaluate(["--agent", spec, "--pieces", "3", "--exact", "--best-response", "--json", str(out)]) == 0
    exact = json.loads(out.read_text())
    assert points[-1]["win_rate"] == pytest.approx(exact["exact"]["win_rate"], abs=1e-9)
    assert points[-1]["exploitability"] == pytest.approx(exact["exact"]["exploitability_points"], abs=1e-9)


def test_curves_of_several_runs_plot_together(tiny_run, tmp_path):
    from urgym.evaluation.bench.results import plot_curves

    result = tiny_run[1]
    other = {**json.loads(json.dumps(result)), "algo": "td-lambda (again)"}
    path = plot_curves([result, other], tmp_path / "both.png")
    assert path.stat().st_size > 1000
    with pytest.raises(ValueError, match="of one task"):
        plot_curves([result, {**other, "task": {**other["task"], "id": "finkel-4-v1"}}], tmp_path / "mixed.png")


def test_a_metric_measured_at_the_end_only_plots_as_an_interval_bar(tiny_run, tmp_path, monkeypatch):
    """finkel-7-v1 measures the exact metrics at its end alone: one point, a bar (a band of one point is invisible)."""
    import matplotlib.axes
    from urgym.evaluation.bench.results import plot_curves

    result = json.loads(json.dumps(tiny_run[1]))
    for point in result["summary"]["curve"][:-1]:
        point.pop("win_rate"), point.pop("exploitability")
    bars = []
    original = matplotlib.axes.Axes.errorbar

    def errorbar(ax, *args, **kwargs):
        bars.append((ax, args))
        return original(ax, *args, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "errorbar", errorbar)
    assert plot_curves([result], tmp_path / "end.png").stat().st_size > 1000
    assert len(bars) == 2  # win rate and exploitability; the test regret, at every point, is a band
    for ax, _ in bars:  # the bar stands on the whole run's axis from 0, as the other panel's curve, not alone
        low, high = ax.get_xlim()
        assert low == 0 and high >= result["summary"]["curve"][-1]["decisions"]


def test_the_leaderboard_writes_a_submitted_results_escape_sequences_out(tiny_run):
    """A result sent by a stranger names its own learner and task: neither may repaint the reader's terminal."""
    result = json.loads(json.dumps(tiny_run[1]))
    result["algo"] = "evil\x1b[2J\x1b]0;owned\x07"
    result["task"]["id"] = "finkel-3-v1\x1b[31m"
    table = leaderboard([result])
    assert "\x1b" not in table and "\x07" not in table
    assert "evil\\x1b[2J" in table and "finkel-3-v1\\x1b[31m" in table
