"""The benchmark a paper can cite: rliable's statistics, a table split over machines and joined, provenance, verify.

Seed ranges, Ray and a merge give one run's figures; a result proves where it came from; a verify catches one changed
figure.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from urgym.commands.main import main as urgym
from urgym.evaluation.bench import baseline_results, get_task, leaderboard, load_result, run_task, stats, tasks
from urgym.evaluation.bench.compare import compare
from urgym.evaluation.bench.merge import merge_runs
from urgym.evaluation.bench.provenance import figures_digest, machine
from urgym.evaluation.bench.results import ResultError, summarize
from urgym.evaluation.bench.verify import verify

from urgym.checks import plural

MINI = dataclasses.replace(
    get_task("finkel-3"), name="mini-2", pieces=2, budget=4_000, eval_every=2_000, seeds=4, description="a test's"
)
"""A task of the tests' own (finkel with 2 pieces, 4,000 decisions): a td-lambda seed in about a second."""


@pytest.fixture(autouse=True)
def mini_task(monkeypatch):
    monkeypatch.setitem(tasks.TASKS, MINI.id, MINI)
    monkeypatch.setitem(tasks._DIGESTS, MINI.id, MINI.digest)


def _figures(result):
    return [figures_digest(record) for record in result["per_seed"]]


# --- statistics ---------------------------------------------------------------------------------------------------
def test_the_statistics_are_rliables_to_the_digit_and_their_intervals_within_sampling_error():
    rly = pytest.importorskip("rliable.library", reason="the stats extra (rliable) is not installed")
    metrics = pytest.importorskip("rliable.metrics")
    rng = np.random.default_rng(3)
    x, y = rng.normal(0.8, 0.05, (10, 2)), rng.normal(0.78, 0.05, (10, 2))
    columns = [x[:, 0], x[:, 1]]
    assert stats.aggregate("iqm", columns) == pytest.approx(metrics.aggregate_iqm(x), abs=1e-15)
    assert stats.aggregate("mean", columns) == pytest.approx(metrics.aggregate_mean(x), abs=1e-15)
    assert stats.aggregate("median", columns) == pytest.approx(metrics.aggregate_median(x), abs=1e-15)
    ours = stats.probability_of_improvement(columns, [y[:, 0], y[:, 1]])
    assert ours.value == pytest.approx(metrics.probability_of_improvement(x, y), abs=1e-15)
    for how, theirs in (("iqm", metrics.aggregate_iqm), ("mean", metrics.aggregate_mean)):
        _, (low, high) = (
            v["x"] for v in rly.get_interval_estimates({"x": x}, lambda s, f=theirs: np.array([f(s)]), reps=50_000)
        )
        interval = stats.interval(how, columns)
        assert interval.low == pytest.approx(low[0], abs=0.003) and interval.high == pytest.approx(high[0], abs=0.003)
    _, ci = rly.get_interval_estimates({"xy": (x, y)}, metrics.probability_of_improvement, reps=20_000)
    assert ours.low == pytest.approx(ci["xy"][0], abs=0.03) and ours.high == pytest.approx(ci["xy"][1], abs=0.03)
    taus = np.linspace(0.6, 1.0, 9)
    profile, _, _ = stats.performance_profile(columns, taus)
    theirs, _ = rly.create_performance_profile({"x": x}, taus, reps=200)
    assert np.allclose(profile, theirs["x"])


def test_the_statistics_of_the_shipped_table_are_the_researchers_by_hand():
    """The issue's computation by hand from the per-seed data, on the shipped table as it is now.

    The IQM of win rate / 50 over every seed of the small and middle tasks (the sorted scores, a quarter cut from
    each end), and P(td-lambda > dqn): per task the share of seed pairs where td-lambda scores higher (ties a half),
    averaged.
    """
    shipped = [r for r in baseline_results() if r.get("algo") and r["task"]["id"] in ("finkel-3-v1", "finkel-4-v1")]
    _, figures = compare(shipped, reps=2_000)
    scores: dict[str, dict[str, list[float]]] = {}
    for r in shipped:
        scores.setdefault(r["algo"], {})[r["task"]["id"]] = [s["final"]["win_rate"] / 50 for s in r["per_seed"]]
    for algo, per_task in scores.items():
        pooled = np.sort(np.concatenate(list(per_task.values())))
        cut = len(pooled) // 4  # a quarter from each end, rounded down (as scipy's trim_mean)
        assert figures["across_tasks"][algo]["iqm"][0] == pytest.approx(float(np.mean(pooled[cut : len(pooled) - cut])))
    by_hand = np.mean(
        [
            np.mean([(x > y) + 0.5 * (x == y) for x in scores["td-lambda"][task] for y in scores["dqn"][task]])
            for task in ("finkel-3-v1", "finkel-4-v1")
        ]
    )
    value, low, high = figures["probability_of_improvement"]["td-lambda > dqn"]
    assert value == pytest.approx(by_hand) and low <= value <= high


def test_compare_prints_the_table_and_writes_the_plots_and_the_leaderboard_shows_the_iqm(tmp_path, capsys):
    files = [f"{tmp_path}/{name}.json" for name in ("td", "dqn")]
    for result in baseline_results():
        if result["task"]["id"] == "finkel-3-v1" and result.get("algo") in ("td-lambda", "dqn"):
            Path(files[result["algo"] == "dqn"]).write_text(json.dumps(result))
    assert urgym(["bench", "--compare", *files, "--reps", "2000", "--out", str(tmp_path / "stats")]) == 0
    out = capsys.readouterr().out
    assert "finkel-3-v1: win rate vs perfect play (%), IQM / mean / median" in out and "dqn > td-lambda" in out
    for name in ("profiles.png", "aggregates.png"):
        assert (tmp_path / "stats" / name).read_bytes()[:4] == b"\x89PNG"
    figures = json.loads((tmp_path / "stats" / "statistics.json").read_text())
    assert figures["bootstrap_draws"] == 2000 and set(figures["per_task"]["finkel-3-v1"]) == {"td-lambda", "dqn"}
    board = leaderboard([load_result(files[0])])
    assert (
        "IQM [95% interval]" in board and f"{figures['per_task']['finkel-3-v1']['td-lambda']['iqm'][0]:.2f} [" in board
    )


# --- a table split over runs, joined ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def split_runs(tmp_path_factory):
    """The mini task's four seeds as one run, and as two ranges run apart."""
    folder = tmp_path_factory.mktemp("split")
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(tasks.TASKS, MINI.id, MINI)
        patch.setitem(tasks._DIGESTS, MINI.id, MINI.digest)
        whole = run_task(MINI, "td-lambda", folder / "whole", progress=False)
        run_task(MINI, "td-lambda", folder / "low", seeds=[0, 1], progress=False)
        run_task(MINI, "td-lambda", folder / "high", seeds=range(2, 4), progress=False)
    return folder, whole


def test_seed_ranges_run_apart_and_merged_give_the_whole_runs_figures(split_runs):
    folder, whole = split_runs
    assert not load_result(folder / "low" / "results.json")["complete"]
    merged = merge_runs([folder / "low", folder / "high" / "results.json"], folder / "merged")
    assert merged["seeds"] == [0, 1, 2, 3] and merged["complete"] and _figures(merged) == _figures(whole)
    assert merged["summary"]["final"] == {
        **whole["summary"]["final"],
        "wall_seconds": merged["summary"]["final"]["wall_seconds"],
    }
    assert load_result(folder / "merged" / "results.json") == json.loads(json.dumps(merged))
    again = merge_runs([folder / "merged", folder / "low"], folder / "merged")  # a seed twice, the same: once
    assert again["seeds"] == [0, 1, 2, 3]
    # A result of 0.6.0's form (no overrides) joins a run folder whose run.json names no task digest (as earlier
    # runs wrote it): the task is compared by what defines it.
    older = load_result(folder / "high" / "results.json")
    older.pop("overrides", None)
    path = folder / "older.json"
    path.write_text(json.dumps(older))
    shutil.copytree(folder / "low", folder / "low-older")
    run = json.loads((folder / "low-older" / "run.json").read_text())
    del run["task"]["digest"]
    (folder / "low-older" / "run.json").write_text(json.dumps(run))
    assert _figures(merge_runs([path, folder / "low-older"], folder / "merged-older")) == _figures(whole)


def test_a_merge_refuses_what_differs_saying_what(split_runs, tmp_path):
    folder, _ = split_runs
    other = run_task(MINI, "td-lambda", tmp_path / "alpha", seeds=[2], progress=False, settings={"alpha": "0.2"})
    with pytest.raises(ValueError, match=r"settings.alpha: 0.1 / 0.2"):
        merge_runs([folder / "low", tmp_path / "alpha"], tmp_path / "out")
    forged = copy.deepcopy(other)
    forged.update(settings=load_result(folder / "low" / "results.json")["settings"])
    forged.pop("overrides")
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged))
    with pytest.raises(ValueError, match=r"seed 2 is in .* and .* with other figures"):
        merge_runs([folder / "high", path], tmp_path / "out")
    libraries = copy.deepcopy(load_result(folder / "high" / "results.json"))
    libraries["per_seed"][0]["machine"]["libraries"]["numpy"] = "1.0.0"
    path.write_text(json.dumps(libraries))
    with pytest.raises(ValueError, match=r"trained with numpy 1\.0\.0, seed 0 with"):
        merge_runs([folder / "low", path], tmp_path / "out")
    unknown = copy.deepcopy(load_result(folder / "high" / "results.json"))
    unknown["per_seed"][0]["machine"] = "unknown"
    path.write_text(json.dumps(unknown))
    with pytest.raises(ValueError, match="records no library versions and no verification reran it"):
        merge_runs([folder / "low", path], tmp_path / "out")
    with pytest.raises(ValueError, match=r"not a run of .* task"):
        merge_runs(
            [folder / "low", Path(__file__).parents[3] / "evaluation/bench/baseline-finkel-3-v1.td-lambda.json"],
            tmp_path / "o",
        )


def test_verify_finds_the_seeds_bit_identical_and_catches_one_changed_figure(split_runs, tmp_path, capsys):
    folder, _ = split_runs
    report = verify(load_result(folder / "low" / "results.json"), [1])
    (seed,) = report["seeds"]
    assert seed["identical"] and seed["digest"] == figures_digest(
        load_result(folder / "low" / "results.json")["per_seed"][1]
    )
    edited = load_result(folder / "low" / "results.json")
    edited["per_seed"][1]["curve"][0]["exploitability"] += 1e-12  # one figure, by the last bit or so
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(edited))
    with pytest.raises(ResultError, match=r"per_seed\[1\].digest is not its figures'"):
        load_result(path)  # an edited figure is refused by its digest, before anything reruns
    record = edited["per_seed"][1]  # a result of other code: its digest and summary those of its figures
    record["digest"] = figures_digest(record)
    identity = {key: edited[key] for key in ("task", "algo")}
    edited["summary"] = summarize(identity, edited["per_seed"], {})["summary"]
    path.write_text(json.dumps(edited))
    assert urgym(["bench", "--verify", str(path), "--seed", "1", "--no-progress"]) == 1
    line = capsys.readouterr().out
    assert "seed 1: 1 of " in line and "figures differ, the first at 2" in line and "exploitability" in line
    assert "another solved table" not in line
    edited["table_hash"] = "crc32:00000000"  # measured with a table whose last bits differ from this machine's
    path.write_text(json.dumps(edited))
    assert urgym(["bench", "--verify", str(path), "--seed", "1", "--no-progress"]) == 1
    line = capsys.readouterr().out
    assert "measured with another solved table (crc32:00000000 there, crc32:" in line and "thread count" in line
    record["machine"]["vector_instructions"] = [*record["machine"]["vector_instructions"], "avx9000"]
    path.write_text(json.dumps(edited))  # kernels chosen by vector instructions this machine lacks
    assert urgym(["bench", "--verify", str(path), "--seed", "1", "--no-progress"]) == 1
    assert "other vector instructions (there only: avx9000; here only: none)" in capsys.readouterr().out
    record["machine"] = "unknown"  # a seed of before 0.7.0: the instructions to look for are this machine's
    path.write_text(json.dumps(edited))
    assert urgym(["bench", "--verify", str(path), "--seed", "1", "--no-progress"]) == 1
    line = capsys.readouterr().out
    assert "names no machine" in line and f"rerun here with {', '.join(machine()['vector_instructions'])}" in line
    copied = tmp_path / "result.json"
    copied.write_text((folder / "low" / "results.json").read_text())
    assert urgym(["bench", "--verify", str(copied), "--record", "--no-progress"]) == 0
    recorded = load_result(copied)["verifications"][0]
    assert [s["seed"] for s in recorded["seeds"]] == [0, 1] and all(s["identical"] for s in recorded["seeds"])
    assert recorded["machine"]["libraries"]["numpy"] == np.__version__


def test_a_result_proves_where_it_came_from(split_runs):
    _, whole = split_runs
    provenance = whole["provenance"]
    assert provenance["urgym"] and provenance["date"].endswith("+00:00") and provenance["command"]
    if (Path(__file__).parents[3] / ".git").exists():
        assert len(provenance["commit"]) == 40 and isinstance(provenance["modified"], bool)
    for record in whole["per_seed"]:
        assert record["digest"] == figures_digest(record) and record["provenance"]["urgym"] == provenance["urgym"]
    assert whole["task"]["digest"] == MINI.digest and whole["task"]["id"] == "mini-2-v1"
    shortened = dataclasses.replace(get_task("finkel-3"), budget=10)
    assert shortened.id == f"finkel-3-v1+{shortened.digest[:8]}"  # not the task


def test_a_record_names_the_code_that_trained_it_not_a_checkout_moved_on_since(tmp_path, monkeypatch):
    from urgym.evaluation.bench import protocol
    from urgym.evaluation.bench import provenance as provenance_module

    trained, real_train = [], protocol.train

    def git(*args):  # the checkout moves to another commit once training has begun
        if args[0] == "rev-parse":
            return ("b" if trained else "a") * 40 + "\n"
        return ""

    def train(*args, **kwargs):
        trained.append(True)
        return real_train(*args, **kwargs)

    monkeypatch.setattr(provenance_module, "_git", git)
    monkeypatch.setattr(protocol, "train", train)
    result = run_task(MINI, "td", tmp_path / "run", seeds=1, progress=False)
    assert trained and result["provenance"]["commit"] == "a" * 40
    assert result["per_seed"][0]["provenance"]["commit"] == "a" * 40
    assert provenance_module.provenance()["commit"] == "b" * 40  # what the checkout says now


def test_progress_lines_where_output_is_no_terminal_and_none_with_quiet(tmp_path, capsys):
    argv = ["bench", "--task", "mini-2", "--algo", "td", "--seeds", "2", "--no-progress", "--out"]
    assert urgym([*argv, str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "mini-2-v1 td-lambda: 2 seeds to train, 1 at once"
    assert "mini-2-v1 td-lambda seed 0: started" in out
    assert any(line.startswith("mini-2-v1 td-lambda seed 1: 2,") and "win rate" in line for line in out)
    assert any("seed 1: finished in 0:00:" in line and "(2 of 2 seeds done)" in line for line in out)
    assert urgym([*argv, str(tmp_path / "b"), "--quiet"]) == 0
    assert not any("started" in line for line in capsys.readouterr().out.splitlines())
    assert (
        plural(1, "seed") == "1 seed"
        and plural(2, "seed") == "2 seeds"
        and plural(1000, "decision") == "1,000 decisions"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--list", "--jobs", "2"], "--jobs does not go with --list (it goes with --algo)"),
        (
            ["--leaderboard", "--out", "x"],
            "--out does not go with --leaderboard (it goes with --compare, --merge, --agent, --algo)",
        ),
        (["--task", "mini-2", "--agent", "greedy", "--jobs", "2"], "--jobs does not go with --agent"),
        (["--task", "mini-2", "--agent", "greedy", "--seeds", "3"], "--seeds does not go with --agent"),
        (["--task", "mini-2", "--algo", "td", "--out", "x", "--seed", "3"], "--seed does not go with --algo"),
        (["--task", "mini-2", "--algo", "td", "--leaderboard"], "--leaderboard and --algo are separate modes"),
        (["--compare", "a.json", "--seed", "1"], "--seed does not go with --compare"),
        (["--task", "mini-2", "--algo", "td", "--out", "x", "--ray", "--jobs", "2"], "with --ray the cluster's cores"),
        (["--merge", "a", "--out", "m"], "--merge joins at least two"),
        (["--merge", "a", "b"], "give --out DIR"),
        (["--task", "mini-2", "--algo", "td", "--out", "x", "--seeds", "3", "--seed-range", "0:2"], "not both"),
        (["--task", "mini-2", "--algo", "td", "--out", "x", "--seed-range", "5:2"], "0 <= A < B"),
    ],
)
def test_an_option_the_mode_does_not_take_is_refused_naming_both(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        urgym(["bench", *argv])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


# --- Ray -----------------------------------------------------------------------------------------------------------
RAY_TASK = dataclasses.replace(MINI, name="mini-ray", budget=160_000, eval_every=40_000, seeds=2)
"""Seeds of several seconds each, so that a node can be lost in the middle of one."""


def test_a_ray_cluster_of_two_nodes_gives_the_local_figures_and_survives_a_lost_worker(tmp_path, monkeypatch):
    pytest.importorskip("ray", reason="the ray extra is not installed")
    from ray.cluster_utils import Cluster

    monkeypatch.setitem(tasks.TASKS, RAY_TASK.id, RAY_TASK)
    monkeypatch.setitem(tasks._DIGESTS, RAY_TASK.id, RAY_TASK.digest)
    local = run_task(RAY_TASK, "td-lambda", tmp_path / "local", progress=False)
    # The head takes no unit, so both seeds train on the first worker, which is lost once a checkpoint exists; a
    # second worker joins and takes them over: whichever seed happened to be ahead, one goes on from its checkpoint.
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    first = cluster.add_node(num_cpus=2)
    out = tmp_path / "ray"
    script = (
        "import dataclasses, sys\nfrom urgym.evaluation.bench import get_task, run_task\n"
        f"task = dataclasses.replace(get_task('finkel-3'), name='mini-ray', pieces=2, budget={RAY_TASK.budget}, "
        f"eval_every={RAY_TASK.eval_every}, seeds=2, description='a test''s')\n"
        f"run_task(task, 'td-lambda', {str(out)!r}, progress=False, ray={cluster.address!r})\n"
    )
    try:
        driver = subprocess.Popen(
            [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 240
        checkpoints = [out / f"seed-{seed}" / "checkpoint.pkl" for seed in (0, 1)]
        while not any(c.exists() for c in checkpoints) and driver.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert driver.poll() is None, "the run ended before the worker could be lost"
        assert any(c.exists() for c in checkpoints), "no seed wrote a checkpoint within 240 s"
        cluster.remove_node(first)  # a node lost with the seeds it was training
        cluster.add_node(num_cpus=2)
        _, err = driver.communicate(timeout=300)
        assert driver.returncode == 0, err[-3000:]
    finally:
        cluster.shutdown()
    remote = load_result(out / "results.json")
    assert _figures(remote) == _figures(local)
    assert any(record.get("resumed_at") for record in remote["per_seed"])  # the lost seed went on from its checkpoint
