"""Agents from outside the package.

Plug-in files and modules, entry points, stable-baselines3, ONNX and TorchScript networks, plain batch policies, and
engines over UEI (the reference engine and broken ones).
"""

import base64
import json
import os
import pickle
import re
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest
from urgym.agents import Agent, make_agent
from urgym.agents.outside.engine import EngineAgent, EngineError, position_line
from urgym.agents.outside.policies import SB3Agent, ScoringAgent, observations
from urgym.evaluation.scoring.match import play_match
from urgym.evaluation.scoring.runner import RunOptions

from urgym import Game, Position, get_rules
from urgym.batch import Decisions

RULES = get_rules("finkel", 3)
ROOT = Path(__file__).resolve().parents[3]
REFERENCE_ENGINE = f"{sys.executable} -m urgym.examples.uei_engine"
BROKEN_ENGINE = f"{sys.executable} {Path(__file__).with_name('broken_engine.py')}"

PLUGIN = textwrap.dedent('''
    from urgym.agents import Agent

    class Safety(Agent):
        """Plays the least advanced piece, or with bias=1 the most advanced."""

        def __init__(self, bias=0, seed=None):
            self.bias = bias
            super().__init__(seed)

        def select_move(self, position, roll):
            moves = position.legal_moves(roll)
            return moves[-1] if self.bias else moves[0]

    def make(bias=1):
        return Safety(bias=bias)

    PLAYER = Safety(bias=1)
    NOT_AN_AGENT = 42

    def policy_factory():
        return lambda observations, masks: masks.argmax(axis=1)
''')


@pytest.fixture
def plugin(tmp_path):
    path = tmp_path / "myagents.py"
    path.write_text(PLUGIN)
    return path


def some_decisions(rules=RULES, count=60, seed=0):
    rng = np.random.default_rng(seed)
    found = []
    game, g = Game(rules, seed, 0), 0
    while len(found) < count:
        if game.is_over:
            g += 1
            game = Game(rules, seed, g)
            continue
        if len(game.legal_moves) > 1:
            found.append((game.position, game.roll))
        game.play(game.legal_moves[int(rng.integers(len(game.legal_moves)))])
    return found


# --- plug-ins --------------------------------------------------------------------------------------------------
def test_a_plugin_file_names_a_class_a_factory_or_an_instance(plugin):
    position, roll = some_decisions()[0]
    legal = position.legal_moves(roll)
    assert make_agent(f"{plugin}:Safety").select_move(position, roll) == legal[0]
    agent = make_agent(f"{plugin}:Safety:bias=1")
    assert agent.select_move(position, roll) == legal[-1] and agent.bias == 1
    assert agent.spec == f"{plugin}:Safety:bias=1"
    assert make_agent(f"{plugin}:make").select_move(position, roll) == legal[-1]
    assert make_agent(f"{plugin}:PLAYER").select_move(position, roll) == legal[-1]
    policy = make_agent(f"{plugin}:policy_factory")
    assert policy.select_move(position, roll) == legal[0]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("{dir}/missing.py:Safety", "no such file"),
        ("{plugin}:Nobody", "has no 'Nobody'; it has"),
        ("{plugin}:NOT_AN_AGENT", "is a int, not an agent"),
        ("{plugin}:Safety:colour=3", "failed"),
        ("{plugin}:PLAYER:bias=1", "takes no parameters"),
        ("{plugin}:Safety:bias", "should be key=value"),
        ("no_such_module_xyz:Safety", "cannot import 'no_such_module_xyz'"),
    ],
)
def test_bad_plugin_specs_name_the_spec(plugin, spec, message):
    spec = spec.format(plugin=plugin, dir=plugin.parent)
    with pytest.raises(ValueError, match=message) as info:
        make_agent(spec)
    assert spec.split(":")[0] in str(info.value) or "no_such_module" in str(info.value)


def test_a_plugin_module_and_an_entry_point(plugin, monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(tmp_path))
    agent = make_agent("myagents:Safety:bias=1")
    assert agent.spec == "myagents:Safety:bias=1"
    dist = tmp_path / "urgym_test_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: urgym-test-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[urgym.agents]\nsafety = myagents:make\n")
    from urgym.agents import registry

    assert "safety" in registry.entry_point_names()
    position, roll = some_decisions()[0]
    assert make_agent("safety").select_move(position, roll) == position.legal_moves(roll)[-1]
    assert make_agent("safety:bias=0").select_move(position, roll) == position.legal_moves(roll)[0]


def test_a_plugin_plays_in_spawned_workers_and_the_command_line(plugin, finkel3_table, tmp_path, capsys):
    from urgym.commands import evaluate as cli

    spec = f"{plugin}:Safety:bias=1"
    two = play_match(
        spec, "random", RULES, games=16, seed=2, table=finkel3_table, run=RunOptions(workers=2, progress=False)
    )
    one = play_match(
        spec, "random", RULES, games=16, seed=2, table=finkel3_table, run=RunOptions(workers=1, progress=False)
    )
    assert np.array_equal(one.winners, two.winners)
    last = play_match(
        "last", "random", RULES, games=16, seed=2, table=finkel3_table, run=RunOptions(workers=1, progress=False)
    )
    assert np.array_equal(one.winners, last.winners)  # bias=1 plays as the built-in "last"
    assert (
        cli.main(
            ["--agent", spec, "--pieces", "3", "--games", "4", "--positions", "20", "--no-progress", "--workers", "1"]
        )
        == 0
    )
    assert "Safety:bias=1" in capsys.readouterr().out


def test_a_batch_policy_callable_is_an_agent(finkel3_table):
    def first_legal(observations, masks):
        assert observations.dtype == np.float32 and masks.dtype == bool
        return masks.argmax(axis=1)

    agent = make_agent(first_legal)
    match = play_match(agent, "random", RULES, games=8, seed=1, table=finkel3_table, run=RunOptions(progress=False))
    first = play_match(
        "first", "random", RULES, games=8, seed=1, table=finkel3_table, run=RunOptions(workers=1, progress=False)
    )
    assert np.array_equal(match.winners, first.winners)


# --- stable-baselines3 -------------------------------------------------------------------------------------------
def _sb3_model(algo, rules=RULES):
    from sb3_contrib import QRDQN, MaskablePPO
    from stable_baselines3 import A2C, DQN, PPO

    from urgym.env import UrEnv

    env = UrEnv(rules, opponent="random")
    cls = {"ppo": PPO, "a2c": A2C, "dqn": DQN, "qrdqn": QRDQN, "maskable": MaskablePPO}[algo]
    kwargs = {"policy_kwargs": {"net_arch": [32, 32]}, "seed": 0, "device": "cpu"}
    if algo in ("dqn", "qrdqn"):
        kwargs["learning_starts"] = 0
    if algo == "a2c":
        import torch

        kwargs["policy_kwargs"]["activation_fn"] = torch.nn.ReLU
    return cls("MlpPolicy", env, **kwargs)


def _sb3_scores(model, obs):
    import torch

    with torch.no_grad():
        tensor = torch.as_tensor(obs)
        if hasattr(model.policy, "get_distribution"):
            return model.policy.get_distribution(tensor).distribution.logits.numpy()
        if hasattr(model.policy, "quantile_net"):
            return model.policy.quantile_net(tensor).mean(dim=1).numpy()
        return model.policy.q_net(tensor).numpy()


@pytest.mark.parametrize("algo", ["ppo", "a2c", "dqn", "qrdqn", "maskable"])
def test_sb3_models_are_read_without_unpickling_and_play_their_best_legal_action(algo, tmp_path):
    model = _sb3_model(algo)
    path = tmp_path / f"{algo}.zip"
    model.save(path)
    agent = make_agent(f"sb3:{path}")
    assert isinstance(agent, SB3Agent) and agent.in_process
    positions = some_decisions(count=80)
    decisions = Decisions.of_positions(positions)
    obs = observations(RULES, decisions)
    ours = agent.scores(obs)
    theirs = _sb3_scores(model, obs)

    def centred(scores):  # torch's Categorical normalises its logits: equal up to a constant per row
        return scores - scores.mean(axis=1, keepdims=True)

    assert np.allclose(centred(ours), centred(theirs), atol=1e-5)
    chosen = agent.select_moves(RULES, decisions)
    masks = decisions.masks(RULES.length + 1)
    assert np.array_equal(chosen, np.where(masks, theirs, -np.inf).argmax(axis=1))
    assert all(int(c) in p.legal_moves(r) for c, (p, r) in zip(chosen, positions, strict=True))


def test_sb3_spaces_that_do_not_fit_the_rules_are_refused(tmp_path):
    path = tmp_path / "masters.zip"
    _sb3_model("ppo", get_rules("masters", 2)).save(path)
    with pytest.raises(ValueError, match="observations of 40 numbers, but finkel"):
        make_agent(f"sb3:{path}").check_rules(RULES)
    (tmp_path / "masters.json").write_text(json.dumps({"rules": get_rules("masters", 2).to_dict()}))
    with pytest.raises(ValueError, match="trained on 'masters: path of 16, 2 pieces"):
        make_agent(f"sb3:{path}").check_rules(get_rules("masters", 3))


def test_a_crafted_sb3_zip_runs_no_code(tmp_path):
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    good = tmp_path / "good.zip"
    _sb3_model("ppo").save(good)
    crafted = tmp_path / "crafted.zip"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(crafted, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "data":
                content = json.loads(data)
                content["policy_kwargs"] = {
                    ":type:": "<class 'dict'>",
                    ":serialized:": base64.b64encode(pickle.dumps(Payload())).decode(),
                }
                data = json.dumps(content).encode()
            if item.filename == "policy.pth":
                data = pickle.dumps(Payload())  # weights that would run code if unpickled freely
            dst.writestr(item, data)
    with pytest.raises(ValueError, match=r"crafted\.zip"):
        make_agent(f"sb3:{crafted}")
    assert not marker.exists()


@pytest.mark.parametrize(
    ("content", "message"), [(b"not a zip", "not a stable-baselines3 model"), (None, "no stable-baselines3 model")]
)
def test_bad_sb3_files(tmp_path, content, message):
    path = tmp_path / "model.zip"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        make_agent(f"sb3:{path}")


def test_the_shipped_ppo_plays_batched_and_one_by_one_alike(tmp_path):
    from tests.evaluation.scoring.test_match import OneByOne

    finkel = get_rules("finkel")
    batched = play_match(
        "ppo", "greedy", finkel, games=20, seed=4, run=RunOptions(progress=False, save_games=tmp_path / "a")
    )
    single = play_match(
        OneByOne(make_agent("ppo")),
        "greedy",
        finkel,
        games=20,
        seed=4,
        run=RunOptions(workers=1, progress=False, save_games=tmp_path / "b"),
    )
    assert np.array_equal(batched.winners, single.winners)
    for g in range(20):
        a = json.loads((tmp_path / "a" / f"game-{g:06d}.json").read_text())["steps"]
        assert a == json.loads((tmp_path / "b" / f"game-{g:06d}.json").read_text())["steps"]


# --- ONNX and TorchScript ----------------------------------------------------------------------------------------
def _weights(rules=RULES, hidden=16, seed=0):
    rng = np.random.default_rng(seed)
    n_in, n_out = 2 * rules.length + 4 + rules.max_roll, rules.length + 1
    return (
        rng.normal(size=(hidden, n_in)).astype(np.float32),
        rng.normal(size=hidden).astype(np.float32),
        rng.normal(size=(n_out, hidden)).astype(np.float32),
        rng.normal(size=n_out).astype(np.float32),
    )


def _numpy_scores(weights, obs):
    w1, b1, w2, b2 = weights
    return np.maximum(obs @ w1.T + b1, 0.0) @ w2.T + b2


def test_an_onnx_network_plays_its_best_legal_action(tmp_path):
    onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
    from onnx import TensorProto, helper, numpy_helper

    weights = _weights()
    w1, w2 = weights[0], weights[2]
    graph = helper.make_graph(
        [
            helper.make_node("Gemm", ["obs", "w1", "b1"], ["h"], transB=1),
            helper.make_node("Relu", ["h"], ["r"]),
            helper.make_node("Gemm", ["r", "w2", "b2"], ["scores"], transB=1),
        ],
        "mlp",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, [None, w1.shape[1]])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [None, w2.shape[0]])],
        [numpy_helper.from_array(a, name) for a, name in zip(weights, ("w1", "b1", "w2", "b2"), strict=True)],
    )
    path = tmp_path / "net.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    agent = make_agent(f"onnx:{path}")
    decisions = Decisions.of_positions(some_decisions())
    obs = observations(RULES, decisions)
    assert np.allclose(agent.scores(obs), _numpy_scores(weights, obs), atol=1e-4)
    expected = np.where(decisions.masks(15), _numpy_scores(weights, obs), -np.inf).argmax(axis=1)
    assert np.array_equal(agent.select_moves(RULES, decisions), expected)
    with pytest.raises(ValueError, match="takes observations of 36 numbers, but blitz with 2 pieces has 40"):
        agent.check_rules(get_rules("blitz", 2))
    (tmp_path / "junk.onnx").write_bytes(b"junk")
    with pytest.raises(ValueError, match="not an ONNX model"):
        make_agent(f"onnx:{tmp_path / 'junk.onnx'}")


def test_a_torchscript_network_plays_its_best_legal_action(tmp_path):
    import torch

    weights = _weights(seed=1)
    net = torch.nn.Sequential(torch.nn.Linear(36, 16), torch.nn.ReLU(), torch.nn.Linear(16, 15))
    with torch.no_grad():
        net[0].weight.copy_(torch.from_numpy(weights[0]))
        net[0].bias.copy_(torch.from_numpy(weights[1]))
        net[2].weight.copy_(torch.from_numpy(weights[2]))
        net[2].bias.copy_(torch.from_numpy(weights[3]))
    path = tmp_path / "net.pt"
    torch.jit.script(net).save(str(path))
    agent = make_agent(f"torchscript:{path}")
    decisions = Decisions.of_positions(some_decisions())
    obs = observations(RULES, decisions)
    assert np.allclose(agent.scores(obs), _numpy_scores(weights, obs), atol=1e-4)


def test_network_scores_of_the_wrong_shape_are_refused():
    class Broken(ScoringAgent):
        def scores(self, observations):
            return np.zeros((len(observations), 3))

    agent = Broken("broken", None, None, None)
    with pytest.raises(ValueError, match=r"scores of shape \(60, 3\)"):
        agent.select_moves(RULES, Decisions.of_positions(some_decisions()))


# --- engines -----------------------------------------------------------------------------------------------------
def test_position_lines_follow_the_protocol():
    position = Position.from_pieces(RULES, light=[3], dark=[5, 9], light_home=1, dark_home=0)
    assert position_line(position, 2, (0, 3)) == "position turn light light 0,3,15 dark 5,9,15 roll 2 moves 0,3"


def test_the_reference_engine_plays_greedy_games(finkel3_table, tmp_path):
    """The reference engine, written from the protocol alone, plays what the built-in greedy policy plays."""
    engine = make_agent(f"engine:{REFERENCE_ENGINE}")
    assert isinstance(engine, EngineAgent) and engine.name == "greedy-reference"
    for rules in (RULES, get_rules("blitz", 3), get_rules("masters", 2)):
        a = play_match(
            f"engine:{REFERENCE_ENGINE}",
            "random",
            rules,
            games=6,
            seed=3,
            run=RunOptions(workers=1, progress=False, save_games=tmp_path / rules.name / "engine"),
        )
        b = play_match(
            "greedy",
            "random",
            rules,
            games=6,
            seed=3,
            run=RunOptions(workers=1, progress=False, save_games=tmp_path / rules.name / "greedy"),
        )
        assert np.array_equal(a.winners, b.winners)
    engine.close()


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("crash", "exited"),
        ("hang", "did not answer within 3 s"),
        ("illegal", "played the illegal move 99"),
        ("early", "out of turn"),
        ("garbage", "answered 'I resign' to go"),
        ("mute", "did not answer within 3 s"),
        ("exit", "exited"),
    ],
)
def test_a_broken_engine_is_named_with_the_position_and_stopped(mode, message):
    position, roll = some_decisions(count=1)[0]
    try:
        agent = EngineAgent(f"{BROKEN_ENGINE} {mode}", move_time=3.0)
    except EngineError as err:  # broken before the first move
        assert message in str(err) and "broken_engine.py" in str(err)
        return
    process = agent._process
    with pytest.raises(EngineError, match=message) as info:
        agent.check_rules(RULES)
        agent.select_move(position, roll)
    assert "broken_engine.py" in str(info.value)
    if mode not in ("crash",):
        assert "position turn" in str(info.value) or mode in ("mute", "exit")
    assert process.poll() is not None  # no process left behind


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("no-such-engine-program --flag", "does not start: no such program: no-such-engine-program"),
        ("./engines/missing", "does not start: no such program: ./engines/missing"),
        (f"{sys.executable} examples/uei_engine.py", "does not start: no such file: examples/uei_engine.py"),
    ],
)
def test_a_missing_engine_is_named_as_missing(command, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where no examples/ folder is, as for an installed package
    with pytest.raises(EngineError, match=re.escape(message)):
        EngineAgent(command)


def test_an_engine_that_dies_is_quoted_from_its_stderr():
    command = [sys.executable, "-c", "import sys; sys.stderr.write('engine: bad configuration\\n'); sys.exit(3)"]
    with pytest.raises(EngineError, match=r"exited .*its last line on stderr: 'engine: bad configuration'"):
        EngineAgent(command)


def test_the_reference_engine_runs_from_the_package(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    agent = EngineAgent(REFERENCE_ENGINE)
    assert agent.name == "greedy-reference"
    agent.close()


def test_an_engine_may_talk_in_info_lines():
    agent = EngineAgent(f"{BROKEN_ENGINE} chatty", move_time=5.0)
    position, roll = some_decisions(count=1)[0]
    assert agent.select_move(position, roll) == position.legal_moves(roll)[0]
    agent.close()


def test_engine_check(capsys):
    from urgym.commands.engine_check import main as engine_check_main

    assert engine_check_main(["--positions", "40", *REFERENCE_ENGINE.split()]) == 0
    out = capsys.readouterr().out
    assert "handshake: 'greedy-reference'" in out and "conformant: UEI 1 on finkel, blitz, masters, aseb" in out
    assert engine_check_main(["--positions", "40", "--move-time", "2", *BROKEN_ENGINE.split(), "illegal"]) == 1
    assert "not conformant" in capsys.readouterr().out


def test_an_agent_is_an_agent():
    assert issubclass(EngineAgent, Agent) and issubclass(SB3Agent, Agent)


def test_a_model_without_a_card_says_so_once_and_one_with_a_card_does_not(tmp_path):
    """Issue 42: a plain SB3 zip played on any rules its observation fits, with a word that nothing checked them."""
    import warnings

    path = tmp_path / "plain.zip"
    _sb3_model("ppo").save(path)
    agent = make_agent(f"sb3:{path}")
    with pytest.warns(UserWarning, match=r"no model card \(plain\.json\) beside it, so the rules it learned") as said:
        agent.check_rules(RULES)
    assert "write_model_card(" in str(said[0].message) and str(path) in str(said[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agent.check_rules(RULES)  # said once
        (tmp_path / "plain.json").write_text(json.dumps({"rules": RULES.to_dict()}))
        make_agent(f"sb3:{path}").check_rules(RULES)  # a card: nothing to say
        (tmp_path / "plain.json").unlink()
        make_agent(f"sb3:{path}").check_rules(RULES)  # built again: the model was named already
