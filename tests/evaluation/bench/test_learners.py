"""The open benchmark: any learner runs the protocol, registered in code, by an entry point or by file.

The protocol refuses a learner that breaks it, naming it and the seed; settings are checked; the baselines rerun to
the bit.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from urgym.agents import make_agent
from urgym.agents.outside.policies import PolicyAgent
from urgym.evaluation.bench import (
    Algorithm,
    Learner,
    LearnerError,
    Schedule,
    baseline_results,
    get_algorithm,
    get_task,
    leaderboard,
    register_algorithm,
    run_task,
    train_seed,
    with_settings,
)
from urgym.evaluation.training import algorithms

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "own_learner.py"
SMALL = dataclasses.replace(get_task("finkel-3"), pieces=2, budget=600, eval_every=200, seeds=2)
"""The protocol's mechanics on finkel with 2 pieces: a seed in a second."""


@dataclasses.dataclass(frozen=True)
class CountingSettings:
    """How a counting learner misbehaves, if it does."""

    answer: str = "asked"
    on_seed: int = -1


class CountingLearner(Learner):
    """Plays greedy and counts the decisions asked; with ``answer`` set, breaks the protocol on seed ``on_seed``."""

    name = "counting"
    Settings = CountingSettings

    def setup(self, task, seed, settings, folder):
        self.seed, self.settings, self.done = seed, settings, 0
        self.granularity = 5

    def learn(self, decisions):
        self.done += decisions
        if self.seed != self.settings.on_seed or self.settings.answer in ("asked", "illegal", "no agent"):
            return decisions
        return {
            "raises": lambda: 1 / 0,
            "none": lambda: None,
            "text": lambda: "many",
            "bool": lambda: True,
            "negative": lambda: -3,
            "fraction": lambda: decisions + 0.5,
            "nothing": lambda: 0,
            "overrun": lambda: decisions + 6,
            "numpy": lambda: np.int64(decisions),
        }[self.settings.answer]()

    def agent(self):
        if self.seed == self.settings.on_seed and self.settings.answer == "illegal":
            return PolicyAgent(lambda obs, masks: np.where(masks, -1, 0).argmax(axis=1), "illegal-mover")
        if self.seed == self.settings.on_seed and self.settings.answer == "no agent":
            return 42
        return make_agent("greedy")


register_algorithm(CountingLearner)


def test_a_learner_registered_in_code_runs_the_protocol_on_the_tasks_schedule(tmp_path):
    result = run_task(SMALL, "counting", tmp_path / "run", progress=False)
    assert result["algo"] == "counting" and result["settings"] == {"answer": "asked", "on_seed": -1}
    assert "overrides" not in result and "algorithm_source" not in result
    for record in result["per_seed"]:  # exactly the schedule's points: it plays what it is asked
        assert [point["decisions"] for point in record["curve"]] == [200, 400, 600] == SMALL.points()
        assert record["final"]["win_rate"] == pytest.approx(result["per_seed"][0]["final"]["win_rate"])  # greedy
    assert register_algorithm(CountingLearner) is get_algorithm("counting")  # again: the same, no clash


def test_a_name_that_is_taken_is_refused_naming_both():
    class Impostor(CountingLearner):
        name = "td-lambda"

    with pytest.raises(ValueError, match=r"'td-lambda' is taken by 'td-lambda' \(urgym.*TDLambdaLearner\); "):
        register_algorithm(Impostor)
    Impostor.name = "td"  # an alias is taken too
    with pytest.raises(ValueError, match="'td' is taken by 'td-lambda'"):
        register_algorithm(Impostor)
    Impostor.name = "counting"
    with pytest.raises(ValueError, match=r"'counting' is taken by 'counting' \(.*CountingLearner\)"):
        register_algorithm(Impostor)


def _learner_file(folder: Path, name: str = "from-a-file") -> Path:
    path = folder / "mine.py"
    path.write_text(
        textwrap.dedent(f"""
        from urgym.agents import make_agent
        from urgym.evaluation.bench import Learner

        class Mine(Learner):
            name = {name!r}
            decisions_per_second = 50_000

            def learn(self, decisions):
                return decisions

            def agent(self):
                return make_agent("greedy")
        """)
    )
    return path


def test_a_learner_named_by_file_runs_in_worker_processes_and_says_where_it_came_from(tmp_path):
    path = _learner_file(tmp_path)
    result = run_task(SMALL, f"{path}:Mine", tmp_path / "run", jobs=2, progress=False)
    assert result["algo"] == "from-a-file" and result["algorithm_source"] == f"{path}:Mine"
    assert json.loads((tmp_path / "run" / "run.json").read_text())["algorithm_source"] == f"{path}:Mine"
    assert get_algorithm(f"{path}:Mine").decisions_per_second == 50_000
    clash = tmp_path / "clash"
    clash.mkdir()
    with pytest.raises(ValueError, match=r"'dqn' is taken by 'dqn' \(urgym.*\); 'dqn' \(.*clash/mine.py:Mine\)"):
        get_algorithm(f"{_learner_file(clash, 'dqn')}:Mine")
    for spec, message in (
        (f"{tmp_path}/missing.py:Mine", "no such file"),
        (f"{path}:Nobody", "has no 'Nobody'; it has Learner, Mine"),
        ("json:loads", "not a learner class or an Algorithm record"),
        ("no.such.module:Thing", "cannot import 'no.such.module'"),
        ("collections:OrderedDict", "names no algorithm: give the class a `name` attribute"),
    ):
        with pytest.raises(ValueError, match=message):
            get_algorithm(spec)


def test_an_installed_packages_entry_point_is_found_by_its_name(tmp_path, monkeypatch):
    site = tmp_path / "site"
    (site / "theirs").mkdir(parents=True)
    (site / "theirs" / "__init__.py").write_text(_learner_file(tmp_path, "their-learner").read_text())
    info = site / "theirs-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: theirs\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[urgym.algorithms]\ntheir-learner = theirs:Mine\nmisnamed = theirs:Mine\nbroken = theirs.missing:Mine\n"
    )
    monkeypatch.syspath_prepend(str(site))
    assert {"their-learner", "misnamed"} <= set(algorithms.algorithm_names())
    algorithm = get_algorithm("their-learner")
    assert algorithm.source == "theirs:Mine" and algorithm.name == "their-learner"
    with pytest.raises(ValueError, match=r"entry point 'misnamed' .* names algorithm 'their-learner'"):
        get_algorithm("misnamed")
    with pytest.raises(ValueError, match=r"algorithm 'broken' .* fails to load: ModuleNotFoundError"):
        get_algorithm("broken")


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("raises", r"learn\(200\) failed: ZeroDivisionError: division by zero"),
        ("none", r"learn\(200\) must return the decisions it played .* got None"),
        ("text", r"learn\(200\) must return .* got 'many'"),
        ("bool", r"learn\(200\) must return .* got True"),
        ("negative", r"learn\(200\) must return .* got -3"),
        ("fraction", r"learn\(200\) must return .* got 200.5"),
        ("nothing", r"learn\(200\) played no decision; a call must play at least one"),
        ("overrun", r"learn\(200\) played 206 decisions, more than its granularity allows \(5 past those asked\)"),
        ("illegal", r"measuring its agent: illegal-mover chose illegal move"),
        ("no agent", r"agent\(\) gave .*42"),
    ],
)
def test_a_learner_that_breaks_the_protocol_is_named_with_its_seed_and_the_seeds_before_are_kept(
    answer, message, tmp_path
):
    with pytest.raises(LearnerError, match=r"learner counting, seed 1: " + message):
        run_task(SMALL, "counting", tmp_path / "run", progress=False, settings={"answer": answer, "on_seed": 1})
    assert (tmp_path / "run" / "seed-0" / "seed.json").is_file() and not (tmp_path / "run" / "results.json").exists()


def test_a_numpy_integer_is_a_whole_number_of_decisions(tmp_path):
    result = run_task(SMALL, "counting", tmp_path / "run", progress=False, settings={"answer": "numpy", "on_seed": 0})
    assert result["per_seed"][0]["decisions"] == 600


def test_settings_are_checked_against_the_dataclass_and_every_one_is_recorded(tmp_path):
    td = get_algorithm("td")
    assert with_settings(td, {"alpha": "0.2", "hidden": "40"}) == dataclasses.replace(
        td.defaults(), alpha=0.2, hidden=40
    )
    expected = get_algorithm("expected-td")
    assert with_settings(expected, {"hidden": "64,32"}).hidden == (64, 32)
    assert with_settings(get_algorithm("ppo"), {"opponents": "self,random"}).opponents == ("self", "random")
    for overrides, message in (
        ({"alpah": "0.2"}, r"td-lambda has no setting 'alpah'; its settings: hidden \(int, default 80\), alpha"),
        ({"hidden": "many"}, "setting hidden of td-lambda must be a whole number, got 'many'"),
        ({"alpha": "nan"}, "setting alpha of td-lambda must be a finite number, got 'nan'"),
        ({"hidden": 2.5}, "setting hidden of td-lambda must be a int, got 2.5"),
    ):
        with pytest.raises(ValueError, match=message):
            with_settings(td, overrides)
    with pytest.raises(ValueError, match="setting hidden of expected-td must be ints, comma-separated, got '64,x'"):
        with_settings(expected, {"hidden": "64,x"})
    result = run_task(SMALL, "counting", tmp_path / "run", seeds=1, progress=False, settings={"on_seed": "7"})
    assert result["overrides"] == {"on_seed": 7} and result["settings"] == {"answer": "asked", "on_seed": 7}
    board = leaderboard([result])
    assert (
        "counting†" in board and "† settings changed from the algorithm's defaults (--set): counting on_seed=7" in board
    )


def test_the_example_resumes_after_a_kill_to_the_bit_and_ranks_beside_the_baselines(tmp_path):
    task = "dataclasses.replace(get_task('finkel-3'), budget=60_000, eval_every=20_000, seeds=1)"
    script = tmp_path / "run.py"
    script.write_text(
        "import dataclasses, sys\nfrom urgym.evaluation.bench import get_task, run_task\n"
        f"run_task({task}, {str(EXAMPLE) + ':OwnLearner'!r}, sys.argv[1], progress=False)\n"
    )
    whole = subprocess.run([sys.executable, str(script), str(tmp_path / "whole")], capture_output=True, text=True)
    assert whole.returncode == 0, whole.stderr[-2000:]
    cut = subprocess.Popen([sys.executable, str(script), str(tmp_path / "cut")], start_new_session=True)
    checkpoint = tmp_path / "cut" / "seed-0" / "checkpoint.pkl"
    deadline = time.monotonic() + 300
    while not checkpoint.exists() and cut.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(cut.pid, signal.SIGKILL)  # a machine gone, mid-seed
    cut.wait()
    assert checkpoint.exists() and not (tmp_path / "cut" / "seed-0" / "seed.json").exists()
    again = subprocess.run([sys.executable, str(script), str(tmp_path / "cut")], capture_output=True, text=True)
    assert again.returncode == 0, again.stderr[-2000:]
    finished, resumed = (json.loads((tmp_path / r / "results.json").read_text()) for r in ("whole", "cut"))
    (record,) = resumed["per_seed"]
    assert record.pop("resumed_at") == [20_032]
    figures = [{k: v for k, v in p.items() if k not in ("seconds", "eval_seconds")} for p in record["curve"]]
    assert figures == [
        {k: v for k, v in p.items() if k not in ("seconds", "eval_seconds")} for p in finished["per_seed"][0]["curve"]
    ]
    board = leaderboard([*baseline_results(), resumed])
    assert "linear-reinforce" in board.split("finkel-4-v1")[0] and "td-lambda" in board.split("finkel-4-v1")[0]


def test_the_sb3_example_enters_an_sb3_contrib_algorithm_in_a_few_lines(tmp_path):
    task = dataclasses.replace(SMALL, budget=1_024, eval_every=512, seeds=1)
    result = run_task(task, f"{ROOT / 'examples' / 'sb3_qrdqn.py'}:QRDQNLearner", tmp_path / "qr", progress=False)
    (record,) = result["per_seed"]
    assert result["algo"] == "qr-dqn" and [p["decisions"] for p in record["curve"]] == [512, 1_024]
    assert (tmp_path / "qr" / "seed-0" / "model.zip").is_file() and 0 <= record["final"]["win_rate"] <= 50


def test_an_sb3_learner_learning_in_chunks_ends_as_one_learn_call_would(tmp_path):
    """Its schedules (DQN's exploration) follow the whole budget, not the chunk."""
    import torch
    from urgym.evaluation.training.dqn import DQNLearner, DQNSettings

    task = dataclasses.replace(SMALL, budget=1_024)
    settings = DQNSettings(envs=4, buffer=1_000, learning_starts=100, target_update=64)
    learners = []
    for chunks in ([1_024], [256, 256, 512]):
        learner = DQNLearner()
        learner.setup(task, 3, settings, tmp_path / str(len(chunks)))
        assert [learner.learn(n) for n in chunks] == chunks  # 4 games a step: no overrun here
        learners.append(learner)
    one, many = (learner.model for learner in learners)
    assert one.exploration_rate == many.exploration_rate < 1
    assert all(torch.equal(a, b) for a, b in zip(one.q_net.parameters(), many.q_net.parameters(), strict=True))


def test_train_trains_a_learner_from_a_file(tmp_path, capsys):
    from urgym.commands.train import main as train_main

    argv = ["--algo", f"{EXAMPLE}:OwnLearner", "--pieces", "2", "--timesteps", "2000", "--eval-every", "1000"]
    assert train_main([*argv, "--eval-positions", "20", "--out", str(tmp_path / "run"), "--no-progress"]) == 0
    assert "trained 2,048 decisions" in capsys.readouterr().out  # 64 games a step
    assert (tmp_path / "run" / "curve.csv").is_file() and not list((tmp_path / "run").glob("model*"))
    with pytest.raises(SystemExit):
        train_main([*argv, "--hidden", "8", "--out", str(tmp_path / "bad")])
    assert "--hidden does not go with linear-reinforce (it has no setting 'hidden')" in capsys.readouterr().err


class SlowSetupLearner(CountingLearner):
    """Takes its time to set up, as a distillation drawing its labels does."""

    name = "slow-setup"

    def setup(self, task, seed, settings, folder):
        super().setup(task, seed, settings, folder)
        time.sleep(3.0)


def test_a_budget_of_minutes_counts_from_the_end_of_the_learners_setup(tmp_path):
    from urgym.evaluation.training.run import RunPlan, train

    from urgym import get_rules

    algorithm = Algorithm(name="slow-setup", learner=SlowSetupLearner, settings=CountingSettings)
    plan = RunPlan(tmp_path / "run", 10**15, minutes=0.03, progress=False, eval_every=10**6, validation=0)
    facts = train(algorithm, get_rules("finkel", 2), plan)
    assert facts["timesteps"] > 0  # learned for its 1.8 s, not stopped at once by the 3 s of setup
    assert facts["seconds"] < 3.0


def test_the_schedule_has_its_points_and_the_next_one_past_any_count():
    schedule = Schedule(1_000, 300)
    assert list(schedule.points()) == [300, 600, 900, 1_000]
    assert [schedule.next_point(done) for done in (0, 299, 300, 950, 1_000)] == [300, 300, 600, 1_000, 1_000]
    with pytest.raises(ValueError, match="at least 1"):
        Schedule(0, 1)


def test_a_record_that_is_no_learner_is_refused():
    with pytest.raises(ValueError, match=r"is no learner: it needs learn\(\) and agent\(\) of its own"):
        Algorithm("empty", Learner)
    with pytest.raises(ValueError, match="settings must be a dataclass"):
        Algorithm("odd", CountingLearner, settings=dict)
    with pytest.raises(ValueError, match="decisions_per_second must be a positive number"):
        Algorithm("odd", CountingLearner, decisions_per_second=-1)


def test_the_shipped_td_lambda_baseline_reruns_to_the_bit_on_the_ported_loop(tmp_path):
    """Seed 0 of finkel-3-v1's shipped td-lambda, trained again by the one loop: every figure at every point."""
    task = get_task("finkel-3-v1")
    record = train_seed(task, "td-lambda", 0, tmp_path / "seed-0")
    (shipped,) = [r for r in baseline_results() if r["task"]["id"] == task.id and r.get("algo") == "td-lambda"]
    keys = ("decisions", "win_rate", "exploitability", "test_regret", "policy")
    assert [{k: p[k] for k in keys} for p in record["curve"]] == [
        {k: p[k] for k in keys} for p in shipped["per_seed"][0]["curve"]
    ]
