"""Learned agents and their training: TD(lambda) and MaskablePPO train, save, reload and play legal moves only."""

import csv
import json

import numpy as np
import pytest
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv
from urgym.agents import make_agent
from urgym.agents.models import model_card
from urgym.agents.networks.td import TDAgent
from urgym.agents.networks.value import ValueNetwork
from urgym.agents.outside.policies import PPOAgent
from urgym.commands.train import main as train_main
from urgym.evaluation.scoring.positions import benchmark_positions, score_positions
from urgym.evaluation.scoring.runner import RunOptions
from urgym.evaluation.training.ppo import MASKABLE_PPO, LearnerOpponent, PPOSettings, regret_callback, slot_opponents
from urgym.evaluation.training.run import RunPlan, train
from urgym.evaluation.training.td_lambda import TD_LAMBDA, TDLambda, TDLambdaSettings

import urgym
from tests.agents.positions import decision_positions
from urgym import Position, get_rules
from urgym.env import UrEnv

RULES = get_rules("finkel", 3)


def test_td_network_save_and_reload_is_identical(tmp_path):
    learner = TDLambda.initial(RULES, hidden=16, seed=3)
    learner.train(50, seed=1, first_game=0, alpha=0.1, lam=0.7)
    network = learner.network()
    again = ValueNetwork.load(network.save(tmp_path / "net.npz"))
    for (w, b), (w2, b2) in zip(network.layers, again.layers, strict=True):
        assert np.array_equal(w, w2) and np.array_equal(b, b2)
    assert again.rules == RULES and again.activation == "sigmoid"
    position = Position.start(RULES)
    assert again.value(position) == network.value(position)


def test_td_training_changes_the_weights_and_is_deterministic():
    first, second = (TDLambda.initial(RULES, hidden=8, seed=2) for _ in range(2))
    before = first.arrays.flat.copy()
    for learner in (first, second):
        assert learner.train(30, seed=5, first_game=0, alpha=0.1, lam=0.7) > 0
    assert not np.array_equal(first.arrays.flat, before)
    assert np.array_equal(first.arrays.flat, second.arrays.flat)


def test_td_agent_plays_the_move_its_network_rates_best():
    learner = TDLambda.initial(RULES, hidden=16, seed=4)
    learner.train(100, seed=2, first_game=0, alpha=0.1, lam=0.7)
    network = learner.network()
    agent = TDAgent(network)
    for position, roll in decision_positions("finkel", 40, seed=5, pieces=3):
        values = {}
        for move in position.legal_moves(roll):
            result = position.move_result(roll, move)
            v = 1.0 if result.won else network.value(result.position)
            values[move] = v if result.extra_roll else 1.0 - v
        assert agent.select_move(position, roll) == max(values, key=lambda m: (values[m], -m))


def test_td_learning_beats_random_play(finkel3_table):
    learner = TDLambda.initial(RULES, hidden=32, seed=0)
    positions = benchmark_positions(finkel3_table, 300)
    random = score_positions("random", finkel3_table, positions, run=RunOptions(workers=1, progress=False)).regret.mean
    learner.train(3000, seed=0, first_game=0, alpha=0.1, lam=0.7)
    learned = score_positions(
        TDAgent(learner.network()), finkel3_table, positions, run=RunOptions(workers=1, progress=False)
    ).regret.mean
    assert learned < 0.5 * random


def test_td_learning_on_two_threads_sharing_the_weights_beats_random_play(finkel3_table):
    learner = TDLambda.initial(RULES, hidden=32, seed=0)
    positions = benchmark_positions(finkel3_table, 300)
    random = score_positions("random", finkel3_table, positions, run=RunOptions(workers=1, progress=False)).regret.mean
    assert learner.train(3000, seed=0, first_game=0, alpha=0.1, lam=0.7, threads=2) > 3000 * 20  # every game played
    learned = score_positions(
        TDAgent(learner.network()), finkel3_table, positions, run=RunOptions(workers=1, progress=False)
    ).regret.mean
    assert learned < 0.5 * random


def test_a_shipped_students_card_repeats_its_teachers(tmp_path):
    from urgym.agents.models import write_model_card

    from tools.ship_model import teacher_card

    teacher = _teacher(20)
    teacher.info = {"algo": "td-lambda", "command": "train --algo td-lambda", "train_seconds": 12.5, "secret": 1}
    path = teacher.save(tmp_path / "teacher.npz")
    write_model_card(path, RULES, **teacher.info)
    student = _teacher(20)
    student.info = {"settings": {"teacher": str(path)}}
    assert teacher_card(student) == {"algo": "td-lambda", "command": "train --algo td-lambda", "train_seconds": 12.5}
    path.with_suffix(".json").unlink()
    assert teacher_card(student) is None  # a teacher without a card: nothing to repeat
    student.info = {"settings": {"teacher": None}}
    assert teacher_card(student) is None


def test_td_model_errors(tmp_path):
    bad = tmp_path / "bad.npz"
    np.savez(bad, w1=np.zeros(2))
    with pytest.raises(ValueError, match="not a urgym value network"):
        TDAgent(bad)
    with pytest.raises(FileNotFoundError, match="no value network"):
        TDAgent(tmp_path / "none.npz")
    with pytest.raises(ValueError, match="one sigmoid hidden layer"):
        TDLambda(ValueNetwork(RULES, "td-v1", [(np.zeros((32, 1)), np.zeros(1))], "sigmoid"))
    agent = TDAgent(TDLambda.initial(RULES, hidden=4).network())
    position, roll = decision_positions("finkel", 1, seed=1)[0]
    with pytest.raises(ValueError, match="trained on"):
        agent.select_move(position, roll)


def test_td_versions_keep_earlier_networks_playable(tmp_path, monkeypatch):
    """td:version=N plays the Nth shipped network; 0 (the default) the newest, td_finkel.npz."""
    from urgym.agents import models

    networks = {name: TDLambda.initial(RULES, hidden=4, seed=seed).network() for seed, name in enumerate(["v1", "new"])}
    networks["v1"].save(tmp_path / "td_finkel_v1.npz")
    networks["new"].save(tmp_path / "td_finkel.npz")
    (tmp_path / "td_finkel_vx.npz").write_bytes(b"not a version")  # a name that is no version is not one
    monkeypatch.setattr(models, "MODELS", tmp_path)
    monkeypatch.setattr(models, "DEFAULT_TD_MODEL", tmp_path / "td_finkel.npz")
    models.td_model_versions.cache_clear()
    monkeypatch.setattr("urgym.agents.networks.td.td_model", models.td_model)
    try:
        assert models.td_model_versions() == {1: tmp_path / "td_finkel_v1.npz", 2: tmp_path / "td_finkel.npz"}
        assert models.td_model(0) == models.td_model(2) == tmp_path / "td_finkel.npz"
        for spec, name in (("td", "new"), ("td:version=2", "new"), ("td:version=1", "v1")):
            agent = make_agent(spec)
            assert agent.spec == spec
            assert np.array_equal(agent.network(RULES).layers[0][0], networks[name].layers[0][0])
        with pytest.raises(ValueError, match=r"no shipped td network has version 3; versions: 1, 2"):
            make_agent("td:version=3")
        with pytest.raises(ValueError, match="not both"):
            TDAgent(tmp_path / "td_finkel.npz", version=1)
    finally:
        models.td_model_versions.cache_clear()


def test_train_td_writes_models_card_and_curve(finkel3_table, tmp_path):
    plan = RunPlan(tmp_path, 30_000, progress=False, eval_every=10_000, validation=50)
    result = train(TD_LAMBDA, RULES, plan, TDLambdaSettings(hidden=16), finkel3_table)
    assert result["timesteps"] >= 30_000
    for name in ("model.npz", "best_model.npz", "curve.csv"):
        assert (tmp_path / name).exists()
    best = ValueNetwork.load(tmp_path / "best_model.npz")
    assert best.info["algo"] == "td-lambda" and best.info["validation_regret"] == result["best_regret"]
    # the model cards beside both models, and the CSV log the help promises
    for name, network in (("best_model", best), ("model", ValueNetwork.load(tmp_path / "model.npz"))):
        card = json.loads((tmp_path / f"{name}.json").read_text())
        assert card["algo"] == "td-lambda" and card["rules"]["pieces"] == 3
        assert card["validation_regret"] == network.info["validation_regret"]
        assert card["regret_set"].startswith("validation set v1") and card["urgym"] == urgym.__version__
        assert card["table_hash"] == finkel3_table.header["checksum"]
    with (tmp_path / "logs" / "progress.csv").open() as f:
        log = list(csv.DictReader(f))
    assert int(log[-1]["timesteps"]) == result["timesteps"] and sum(row["eval/mean_regret"] != "" for row in log) >= 2
    agent = make_agent(f"td:model={tmp_path / 'model.npz'}")
    for position, roll in decision_positions("finkel", 20, seed=2, pieces=3):
        assert agent.select_move(position, roll) in position.legal_moves(roll)


@pytest.mark.parametrize("vec_env_cls", [DummyVecEnv, SubprocVecEnv])
def test_masks_reach_the_learner_under_both_vector_envs(vec_env_cls):
    env = make_vec_env(
        UrEnv,
        n_envs=2,
        seed=0,
        vec_env_cls=vec_env_cls,
        env_kwargs={"rules": RULES, "opponent": "greedy", "agent_side": "random"},
    )
    try:
        env.reset()
        rng = np.random.default_rng(0)
        for _ in range(60):
            masks = get_action_masks(env)
            legal = env.get_attr("legal_moves")
            for mask, moves in zip(masks, legal, strict=True):
                assert sorted(np.flatnonzero(mask)) == sorted(moves)
            actions = [int(rng.choice(np.flatnonzero(m))) for m in masks]
            _, _, _, infos = env.step(np.array(actions))
            assert not any(info["illegal_action"] for info in infos)
    finally:
        env.close()


@pytest.mark.parametrize("vec_env", ["native", "dummy"])
def test_ppo_trains_saves_reloads_and_plays_legal_moves(finkel3_table, tmp_path, vec_env):
    plan = RunPlan(tmp_path, 2048, progress=False, eval_every=1024, validation=30)
    result = train(MASKABLE_PPO, RULES, plan, PPOSettings(("self", "random"), 4, vec_env), finkel3_table)
    assert result["timesteps"] >= 2048
    card = model_card(tmp_path / "model.zip")
    assert card["algo"] == "maskable-ppo" and card["vec_env"] == vec_env and card["opponents"] == ["self", "random"]
    agent = make_agent(f"ppo:model={tmp_path / 'model.zip'}")
    again = PPOAgent(tmp_path / "model.zip")
    for position, roll in decision_positions("finkel", 30, seed=3, pieces=3):
        move = agent.select_move(position, roll)
        assert move in position.legal_moves(roll)
        assert again.select_move(position, roll) == move
    with pytest.raises(ValueError, match="trained on"):
        agent.select_move(*decision_positions("finkel", 1, seed=1)[0])


def test_ppo_on_subprocesses_refuses_the_live_learner(finkel3_table, tmp_path):
    with pytest.raises(ValueError, match="learner's process"):
        train(MASKABLE_PPO, RULES, RunPlan(tmp_path, 64, progress=False), PPOSettings(("self",), 2, "subproc"))
    plan = RunPlan(tmp_path, 512, progress=False, eval_every=512, validation=10)
    result = train(MASKABLE_PPO, RULES, plan, PPOSettings(("greedy",), 2, "subproc"), finkel3_table)
    assert result["timesteps"] >= 512


def test_opponents_are_dealt_to_the_environments_and_self_is_the_live_learner():
    learner = LearnerOpponent()
    dealt = slot_opponents(["self", "greedy", "expectimax:1"], 7, learner)
    assert dealt == [learner, "greedy", "expectimax:1", learner, "greedy", "expectimax:1", learner]
    with pytest.raises(ValueError, match="at least as many environments"):
        slot_opponents(["a", "b", "c"], 2, learner)
    position, roll = decision_positions("finkel", 1, seed=1, pieces=3)[0]
    with pytest.raises(RuntimeError, match="no model yet"):
        learner.select_move(position, roll)


def test_the_live_learner_samples_its_policy_in_the_native_env():
    from sb3_contrib import MaskablePPO

    from urgym.sb3 import SB3VecEnv

    learner = LearnerOpponent()
    env = SB3VecEnv(num_envs=4, rules=RULES, opponent=[learner, learner, "random", learner], agent_side="random")
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, seed=0, device="cpu")
    learner.set_model(model)
    env.seed(0)
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(200):  # the learner's games: its opponent's moves come from the live policy, all legal
        masks = env.action_masks()
        _, _, _, infos = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        assert not any(info.get("illegal_action") for info in infos)


def test_shipped_models_play_finkel():
    for spec in ("td", "ppo"):
        agent = make_agent(spec)
        for position, roll in decision_positions("finkel", 10, seed=4):
            assert agent.select_move(position, roll) in position.legal_moves(roll)


def test_train_command(finkel3_table, tmp_path, capsys):
    assert (
        train_main(
            [
                "--algo",
                "td-lambda",
                "--pieces",
                "3",
                "--timesteps",
                "5000",
                "--hidden",
                "8",
                "--eval-every",
                "5000",
                "--eval-positions",
                "20",
                "--out",
                str(tmp_path),
                "--no-progress",
            ]
        )
        == 0
    )
    assert "best mean regret" in capsys.readouterr().out
    assert (tmp_path / "curve.png").read_bytes()[:4] == b"\x89PNG"
    for argv in (["--algo", "td-lambda", "--opponent", "greedy"], ["--opponent", "nobody"], ["--rules", "go"]):
        with pytest.raises(SystemExit):
            train_main([*argv, "--pieces", "2", "--out", str(tmp_path / "bad")])
    assert not (tmp_path / "bad").exists()


def test_the_regret_callback_scores_any_sb3_model_while_it_trains(finkel3_table, tmp_path):
    from stable_baselines3 import PPO

    env = UrEnv(RULES, opponent="random")
    model = PPO(
        "MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=1, seed=0, device="cpu", policy_kwargs={"net_arch": [16]}
    )
    callback = regret_callback(RULES, every=128, count=60, csv=tmp_path / "regret.csv", table=finkel3_table)
    model.learn(384, callback=callback)
    assert len(callback.rows) >= 2 and all(0 <= row["mean_regret"] < 100 for row in callback.rows)
    lines = (tmp_path / "regret.csv").read_text().splitlines()
    assert lines[0] == "timesteps,seconds,mean_regret" and len(lines) == len(callback.rows) + 1
    assert callback.evaluate() == pytest.approx(callback.rows[-1]["mean_regret"])


def _regret(agent, table, count=400):
    positions = benchmark_positions(table, count)
    return score_positions(agent, table, positions, run=RunOptions(workers=1, progress=False)).regret.mean


def test_distillation_improves_the_validation_regret_and_plays_from_its_file(finkel3_table, tmp_path):
    from urgym.agents.networks.neural import NeuralAgent, ValueNetwork
    from urgym.evaluation.training.distill import DISTILL, DistillSettings

    settings = DistillSettings(hidden=(48, 16), decisions=30_000, threads=1)
    plan = RunPlan(tmp_path, 240_000, seed=2, progress=False, eval_every=60_000, validation=1000)
    result = train(DISTILL, RULES, plan, settings, finkel3_table)
    with (tmp_path / "curve.csv").open() as f:
        curve = [float(row["mean_regret"]) for row in csv.DictReader(f)]
    assert len(curve) >= 4 and min(curve[1:]) < curve[0]  # learning went on after the first evaluation
    best = ValueNetwork.load(tmp_path / "best_model.npz")
    assert best.info["algo"] == "distill" and best.info["validation_regret"] == result["best_regret"]
    assert (
        best.parameters == best.info["parameters"]
        and json.loads((tmp_path / "best_model.json").read_text())["features"] == "tactics-v1"
    )
    untrained = ValueNetwork(
        RULES, "tactics-v1", [(w * 0 + np.random.default_rng(0).normal(0, 0.1, w.shape), b * 0) for w, b in best.layers]
    )
    learned, before = _regret(NeuralAgent(best), finkel3_table), _regret(NeuralAgent(untrained), finkel3_table)
    assert learned < 0.3 < before and learned < before / 5, (learned, before)  # far better than a random network
    assert _regret(make_agent(f"neural:model={tmp_path / 'best_model.npz'}:depth=2"), finkel3_table) <= learned


def _teacher(games=3000):
    learner = TDLambda.initial(RULES, hidden=32, seed=0)
    learner.train(games, seed=0, first_game=0, alpha=0.1, lam=0.7)
    return learner.network()


def test_a_cards_figures_are_the_test_set_and_the_held_out_check_with_their_intervals(finkel3_table):
    from urgym.agents.networks.neural import NeuralAgent
    from urgym.evaluation.scoring.positions import held_out_positions, score_positions

    from tools.ship_model import measure

    network = _teacher(300)
    figures = measure(network, depths=(0,), speed_depths=(0,))
    held = score_positions(NeuralAgent(network), finkel3_table, held_out_positions(finkel3_table)).regret
    assert held.decisions == 20_000
    assert figures["held_out_regret_depth0"] == pytest.approx(held.mean)
    assert figures["held_out_regret_depth0_low95"] == pytest.approx(held.low95) and held.low95 < held.mean
    assert figures["test_regret_depth0_low95"] < figures["test_regret_depth0"] < figures["test_regret_depth0_high95"]
    assert figures["decisions_per_second_depth0"] > 0


def test_the_relative_loss_weighs_the_gaps_a_choice_is_made_on():
    torch = pytest.importorskip("torch")
    from urgym.evaluation.training.distill import relative_errors

    target = torch.tensor([[0.6, 0.5, 0.2, 0.0], [0.3, 0.9, 0.0, 0.0]])
    mask = torch.tensor([[True, True, True, False], [True, True, False, False]])
    shifted = relative_errors(target + 0.1, target, mask)  # every move off by the same: no choice changes
    assert torch.allclose(shifted, torch.zeros(2))
    values = target.clone()
    values[0, 2], values[1, 0] = 0.5, 0.4  # a worse move rated 0.3 higher; the second's gap 0.1 smaller
    assert torch.allclose(relative_errors(values, target, mask), torch.tensor([0.3**2 / 2, 0.1**2]))


def test_a_teachers_labels_are_what_its_search_makes_of_each_move():
    from urgym.agents.networks.neural import NetworkEstimate
    from urgym.evaluation.training.distill import SearchTeacher, sample_labelled_decisions

    from urgym import core

    network = _teacher(300)
    for depth in (0, 2):
        data = sample_labelled_decisions(SearchTeacher(network, depth), 400, seed=4, threads=2)
        again = sample_labelled_decisions(SearchTeacher(network, depth), 400, seed=4, threads=2)
        assert all(np.array_equal(a, b) for a, b in zip(data, again, strict=True))  # the same on every call
        assert len(data) == 400 and (data.counts >= 2).all()
        searched = NetworkEstimate(network, depth=depth)
        for i in range(0, 400, 9):
            for k in range(data.counts[i]):
                after, flags = Position(RULES, int(data.after[i, k])), int(data.flags[i, k])
                if flags & core.WIN:
                    expected = 1.0
                else:
                    chance = network.value(after) if depth == 0 else searched.win_probability(after)
                    expected = chance if flags & core.EXTRA_ROLL else 1.0 - chance
                assert data.values[i, k] == pytest.approx(expected, abs=1e-6)
    shallow = sample_labelled_decisions(SearchTeacher(network, 0), 400, seed=4)
    assert not np.array_equal(shallow.values, data.values)  # depth 2 is not the network alone


def test_distilling_a_td_networks_search_learns_without_the_table(finkel3_table, tmp_path, monkeypatch):
    from urgym.agents.networks.neural import NeuralAgent, ValueNetwork
    from urgym.evaluation.training import distill

    teacher = _teacher()
    teacher_path = teacher.save(tmp_path / "teacher.npz")
    sources = []
    sample = distill.sample_labelled_decisions
    monkeypatch.setattr(
        distill, "sample_labelled_decisions", lambda source, *a: sources.append(source) or sample(source, *a)
    )
    settings = distill.DistillSettings(
        hidden=(48, 16), decisions=20_000, threads=2, teacher=str(teacher_path), teacher_depth=1
    )
    out = tmp_path / "student"
    plan = RunPlan(out, 180_000, seed=2, progress=False, eval_every=60_000, validation=500)
    result = train(distill.DISTILL, RULES, plan, settings, finkel3_table)
    assert [type(s) for s in sources] == [distill.SearchTeacher]  # the labels came from the teacher, not the table
    best = ValueNetwork.load(out / "best_model.npz")
    assert best.info["settings"]["teacher"] == str(teacher_path) and best.info["settings"]["teacher_depth"] == 1
    assert best.info["validation_regret"] == result["best_regret"]
    student, before = _regret(NeuralAgent(best), finkel3_table), _regret(TDAgent(teacher), finkel3_table)
    untrained = _regret(
        NeuralAgent(ValueNetwork(RULES, "tactics-v1", [(w * 0, b * 0) for w, b in best.layers])), finkel3_table
    )
    assert student < untrained / 5, (student, untrained)
    assert student < 1.5 * before, (student, before)  # about as good as its teacher, or better


def test_rounds_of_distillation_each_taught_by_the_last_ones_best_network(finkel3_table, tmp_path, capsys):
    from urgym.agents.networks.neural import ValueNetwork
    from urgym.commands.train import main as train_main

    teacher = _teacher(300).save(tmp_path / "teacher.npz")
    out = tmp_path / "rounds"
    argv = ["--algo", "distill", "--pieces", "3", "--teacher", str(teacher), "--teacher-depth", "1", "--rounds", "2"]
    argv += ["--decisions", "3000", "--layers", "16", "--timesteps", "6000", "--eval-every", "3000"]
    argv += ["--eval-positions", "50", "--threads", "1", "--seed", "5", "--out", str(out), "--no-progress"]
    assert train_main(argv) == 0
    first, second = (ValueNetwork.load(out / f"round-{n}" / "best_model.npz").info for n in (1, 2))
    assert first["settings"]["teacher"] == str(teacher) and first["seed"] == 5
    assert second["settings"]["teacher"] == str(out / "round-1" / "best_model.npz") and second["seed"] == 6
    assert "the last round's best network: " + str(out / "round-2" / "best_model.npz") in capsys.readouterr().out
    before = (out / "round-2" / "model.npz").stat().st_mtime_ns
    assert train_main(argv) == 0  # the same command again: both rounds finished, nothing trained
    assert capsys.readouterr().out.count("finished before") == 2
    assert (out / "round-2" / "model.npz").stat().st_mtime_ns == before


def test_select_last_chooses_nothing_with_the_table_and_teaches_each_round_with_the_last_model(
    finkel3_table, tmp_path, capsys
):
    from urgym.agents.networks.neural import ValueNetwork
    from urgym.commands.train import main as train_main

    teacher = _teacher(300).save(tmp_path / "teacher.npz")
    out = tmp_path / "rounds"
    argv = ["--algo", "distill", "--pieces", "3", "--teacher", str(teacher), "--teacher-depth", "1", "--rounds", "2"]
    argv += ["--decisions", "3000", "--layers", "16", "--timesteps", "6000", "--eval-every", "3000", "--select", "last"]
    argv += ["--eval-positions", "50", "--threads", "1", "--seed", "5", "--out", str(out), "--no-progress"]
    assert train_main(argv) == 0
    for number in (1, 2):
        folder = out / f"round-{number}"
        assert not list(folder.glob("best_model.*"))  # the table measured the curve and chose nothing
        assert ValueNetwork.load(folder / "model.npz").info["selection"].startswith("last")
        with open(folder / "curve.csv") as handle:
            assert [row["mean_regret"] for row in csv.DictReader(handle)]  # still measured
    second = ValueNetwork.load(out / "round-2" / "model.npz").info
    assert second["settings"]["teacher"] == str(out / "round-1" / "model.npz")
    printed = capsys.readouterr().out
    assert "the last round's network: " + str(out / "round-2" / "model.npz") in printed
    assert "the last model's mean regret" in printed and "best mean regret" not in printed


def test_a_run_is_finished_only_with_its_last_model_and_no_checkpoint(tmp_path):
    from urgym.evaluation.training.checkpoint import CHECKPOINT
    from urgym.evaluation.training.run import finished_run

    assert not finished_run(tmp_path, ".npz")
    (tmp_path / "best_model.npz").write_bytes(b"")  # a run stopped after an evaluation: it resumes
    (tmp_path / "curve.csv").write_text("timesteps\n")
    assert not finished_run(tmp_path, ".npz")
    assert finished_run(tmp_path, None)  # a learner that saves no model: its curve is all it leaves
    (tmp_path / "model.npz").write_bytes(b"")
    (tmp_path / CHECKPOINT).write_bytes(b"")  # stopped between the last model and the checkpoint's removal
    assert not finished_run(tmp_path, ".npz") and not finished_run(tmp_path, None)
    (tmp_path / CHECKPOINT).unlink()
    assert finished_run(tmp_path, ".npz")


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--rounds", "2"], "--rounds needs --teacher"),
        (["--rounds", "0", "--teacher", "t.npz"], "--rounds must be from 1 to 20, got 0"),
    ],
)
def test_rounds_without_a_teacher_or_out_of_range_are_refused(extra, message, tmp_path, capsys):
    from urgym.commands.train import main as train_main

    with pytest.raises(SystemExit):
        train_main(["--algo", "distill", "--pieces", "3", *extra, "--out", str(tmp_path / "r")])
    assert message in capsys.readouterr().err


def test_expected_td_learns_by_self_play_alone(tmp_path):
    from urgym.agents.networks.neural import NeuralAgent, ValueNetwork
    from urgym.evaluation.training.expected_td import EXPECTED_TD, ExpectedTDSettings
    from urgym.solver.cache import load_or_solve

    rules = get_rules("finkel", 2)
    table = load_or_solve(rules, progress=False)
    settings = ExpectedTDSettings(hidden=(32,), generate=20_000, buffer=60_000, threads=1)
    plan = RunPlan(tmp_path, 600_000, seed=1, progress=False, eval_every=100_000, validation=300)
    result = train(EXPECTED_TD, rules, plan, settings, table)
    network = ValueNetwork.load(tmp_path / "best_model.npz")
    assert network.info["algo"] == "expected-td" and network.info["games"] > 0
    learned = _regret(NeuralAgent(network), table, 300)
    assert learned == pytest.approx(result["best_regret"], abs=1.0) and learned < 0.5 * _regret("random", table, 300)


def test_td_with_tactics_features_trains_saves_and_searches(tmp_path, finkel3_table):
    learner = TDLambda.initial(RULES, hidden=24, seed=1, features="tactics-v1")
    learner.train(300, seed=3, first_game=0, alpha=0.1, lam=0.7)
    network = learner.network()
    again = ValueNetwork.load(network.save(tmp_path / "td.npz"))
    assert again.features == "tactics-v1" and np.array_equal(again.layers[0][0], network.layers[0][0])
    position = Position.start(RULES).play(2, 0)
    assert again.value(position) == network.value(position)
    for depth in (0, 1, 2):
        agent = make_agent(f"td:model={tmp_path / 'td.npz'}:depth={depth}")
        for position, roll in decision_positions("finkel", 10, seed=3, pieces=3):
            assert agent.select_move(position, roll) in position.legal_moves(roll)


def _old_td_file(path, learner, drop_features=False):
    """A TD(lambda) file as urgym 0.4 and 0.5 wrote them (format urgym-td: w1 (hidden, features), b1, w2, b2)."""
    (w1, b1), (w2, b2) = learner.network().layers
    meta = {
        "format": "urgym-td",
        "features_version": 1,
        "rules": RULES.to_dict(),
        "features": learner.features,
        "algo": "td-lambda",
    }
    if drop_features:
        del meta["features"]  # as urgym 0.4 wrote its files
    np.savez(
        path,
        w1=w1.T.astype(np.float64),
        b1=b1.astype(np.float64),
        w2=w2[:, 0].astype(np.float64),
        b2=b2.astype(np.float64),
        meta=np.array(json.dumps(meta)),
    )
    return path


@pytest.mark.parametrize("drop_features", [False, True])
def test_td_files_of_urgym_0_4_and_0_5_read_as_value_networks(tmp_path, drop_features):
    learner = TDLambda.initial(RULES, hidden=4, seed=1)
    old = ValueNetwork.load(_old_td_file(tmp_path / "old.npz", learner, drop_features))
    network = learner.network()
    assert old.features == "td-v1" and old.activation == "sigmoid" and old.info["algo"] == "td-lambda"
    assert np.array_equal(old.layers[0][0], network.layers[0][0])
    assert (
        make_agent(f"td:model={tmp_path / 'old.npz'}").select_move(
            *decision_positions("finkel", 1, seed=2, pieces=3)[0]
        )
        >= 0
    )


def test_td_model_plays_every_network_train_writes(tmp_path):
    """td:model= takes the value networks of every algorithm (expected-td's were refused: issue 37)."""
    from tests.agents.networks.test_value_networks import random_network

    path = random_network(RULES).save(tmp_path / "expected_td.npz")
    agent = make_agent(f"td:model={path}:depth=1")
    position, roll = decision_positions("finkel", 1, seed=4, pieces=3)[0]
    assert agent.select_move(position, roll) in position.legal_moves(roll)


def test_td_files_with_unknown_features_or_non_finite_weights_are_refused(tmp_path):
    path = _old_td_file(tmp_path / "td.npz", TDLambda.initial(RULES, hidden=4, seed=1))
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(str(arrays["meta"]))
    for key, value, message in (("features", "rm -rf", "unknown feature set"), ("w1", np.nan, "not finite")):
        changed = dict(arrays)
        if key == "features":
            changed["meta"] = np.array(json.dumps({**meta, "features": value}))
        else:
            changed["w1"] = arrays["w1"] * value
        np.savez(tmp_path / "bad.npz", **changed)
        with pytest.raises(ValueError, match=message):
            ValueNetwork.load(tmp_path / "bad.npz")


def test_plot_curves_against_steps_or_minutes(tmp_path):
    from urgym.evaluation.training.run import plot_curves

    curve = tmp_path / "curve.csv"
    curve.write_text("timesteps,seconds,mean_regret\n100,6.0,0.5\n200,12.0,0.25\n")
    for x in ("timesteps", "minutes"):
        out = plot_curves({"a": curve}, tmp_path / f"{x}.png", x=x, log=True)
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="'timesteps' or 'minutes'"):
        plot_curves({"a": curve}, tmp_path / "x.png", x="hours")


def test_train_takes_the_agent_specs_names_and_minutes_alone_have_no_cap_of_moves(tmp_path, monkeypatch, finkel3_table):
    import urgym.commands.train as train_command
    from urgym.evaluation.training.run import UNCAPPED

    plans = []

    def capture(algorithm, rules, plan, settings, table):
        assert algorithm.name == "td-lambda"
        plans.append(plan)
        (plan.out / "curve.csv").write_text("timesteps,seconds,mean_regret\n1,0.1,1.0\n")
        return {"timesteps": 1, "seconds": 0.1, "best_regret": 1.0}

    monkeypatch.setattr(train_command, "train", capture)
    assert train_main(["--algo", "td", "--pieces", "3", "--minutes", "4", "--out", str(tmp_path / "a")]) == 0
    assert plans[-1].timesteps == UNCAPPED and plans[-1].minutes == 4  # the minutes alone end it
    assert train_main(["--algo", "td", "--pieces", "3", "--out", str(tmp_path / "b")]) == 0
    assert plans[-1].timesteps == train_command.DEFAULT_TIMESTEPS and plans[-1].minutes is None
    assert "no cap with --minutes" in " ".join(train_command._parser().format_help().split())


def test_dqn_acts_and_bootstraps_over_legal_actions_only(tmp_path, finkel3_table):
    import torch
    from urgym.evaluation.training.dqn import DQN, DQNSettings, masked_dqn_class

    from urgym.sb3 import SB3VecEnv

    settings = DQNSettings(learning_starts=500, buffer=5_000, target_update=500)
    plan = RunPlan(tmp_path, 6_000, seed=2, progress=False, eval_every=4_000, validation=50)
    result = train(DQN, RULES, plan, settings, finkel3_table)
    assert result["timesteps"] >= 6_000 and (tmp_path / "model.zip").exists()
    card = json.loads((tmp_path / "model.json").read_text())
    assert card["algo"] == "dqn" and card["rules"]["pieces"] == 3
    position, roll = decision_positions("finkel", 1, seed=4, pieces=3)[0]
    assert make_agent(f"sb3:{tmp_path / 'model.zip'}").select_move(position, roll) in position.legal_moves(roll)

    env = SB3VecEnv(num_envs=8, rules=RULES, opponent="greedy")
    model = masked_dqn_class()("MlpPolicy", env, seed=0, learning_starts=0, exploration_initial_eps=0.5)
    model._last_obs = env.reset()
    for _ in range(50):  # greedy and exploring moves alike are legal
        masks = env.action_masks()
        action, _ = model._sample_action(0, n_envs=8)
        assert masks[np.arange(8), action].all()
        model._last_obs, *_ = env.step(action)
    # A target never bootstraps from an illegal action, however high its value.
    buffer = model.replay_buffer
    buffer.pending_masks = np.zeros((8, RULES.length + 1), dtype=bool)
    buffer.pending_masks[:, 1] = True  # the one legal action of every next state
    obs = env.reset()
    buffer.add(obs, obs, np.zeros((8, 1)), np.zeros(8), np.zeros(8), [{}] * 8)
    sample = buffer._get_samples(np.array([0, 0, 0]))
    with torch.no_grad():
        q = model.q_net_target(sample.next_observations)
        best_legal = q[:, 1]
        assert (sample.next_masks.sum(dim=1) == 1).all() and (q.max(dim=1).values >= best_legal).all()
        masked = q.masked_fill(~sample.next_masks, -torch.inf).max(dim=1).values
    assert torch.equal(masked, best_legal)


def test_the_td_recipe_curve_puts_the_stages_on_one_clock(tmp_path):
    from tools import td_recipe

    stages = {
        "teacher": (0.0, 100.0),
        "round-1": (30.0, 50.0),
        "rounds/round-2": (10.0, 20.0),
        "rounds/round-1": (5.0, 40.0),
    }
    for folder, (labels, fitting) in stages.items():
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "model.npz").write_bytes(b"")
        (tmp_path / folder / "model.json").write_text(
            json.dumps({"label_seconds": labels, "train_seconds": fitting, "command": "train"})
        )
        (tmp_path / folder / "curve.csv").write_text(f"timesteps,seconds,mean_regret\n7,{fitting},0.5\n")
    (tmp_path / "rounds" / "round-3").mkdir()  # a stage under way is left out
    (tmp_path / "rounds" / "round-3" / "checkpoint.pkl").write_bytes(b"")
    out = td_recipe.recipe_curve(tmp_path, tmp_path / "recipe.csv")
    with out.open(newline="") as f:
        rows = list(csv.DictReader(f))
    # each point after every earlier stage's labels and fitting, and its own stage's labels
    assert [(r["stage"], float(r["seconds"])) for r in rows] == [
        ("teacher", 100.0), ("first student", 180.0), ("round 1", 225.0), ("round 2", 255.0)
    ]  # fmt: skip
    assert out.with_suffix(".png").stat().st_size > 0
    facts = td_recipe.recipe_facts(tmp_path)  # what the shipped network's card says of the recipe
    assert [stage["stage"] for stage in facts["stages"]] == ["teacher", "first student", "round 1", "round 2"]
    assert facts["seconds"] == 255.0


def test_the_td_recipe_skips_finished_stages_and_resumes_a_stopped_one(tmp_path, monkeypatch, capsys):
    from urgym.evaluation.training.run import CHECKPOINT

    from tools import td_recipe

    (tmp_path / "teacher").mkdir()
    (tmp_path / "teacher" / "model.npz").write_bytes(b"")  # finished: its last model, no checkpoint
    (tmp_path / "round-1").mkdir()
    (tmp_path / "round-1" / CHECKPOINT).write_bytes(b"")  # stopped
    monkeypatch.setattr("sys.argv", ["td_recipe", str(tmp_path), "--rounds", "3", "--dry-run"])
    td_recipe.main()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"teacher: finished before, in {tmp_path / 'teacher'}"
    assert lines[1].startswith("first student: train --algo distill --teacher-depth 2")
    assert lines[1].endswith("--resume")
    assert f"--teacher {tmp_path / 'teacher' / 'model.npz'}" in lines[1]
    assert lines[2].startswith("3 more rounds: train --algo distill --teacher-depth 1")
    assert f"--teacher {tmp_path / 'round-1' / 'model.npz'} --rounds 3" in lines[2] and "--resume" not in lines[2]
    assert all("--select last" in line for line in lines[1:])  # nothing in the recipe chosen with the table
