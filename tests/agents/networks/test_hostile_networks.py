"""Networks from strangers.

NaN or infinite scores are named (never an illegal move), networks of the wrong shape are one-line errors, fixed-batch
ONNX exports play, and model archives that inflate past what a model needs are refused before they are inflated.
"""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest
from urgym.agents import make_agent
from urgym.agents.outside.policies import MAX_SB3_DATA, PolicyAgent, ScoringAgent, observations

from tests.agents.outside.test_outside_agents import (
    RULES,
    _sb3_model,
    _weights,
    some_decisions,
)
from urgym.batch import Decisions

BAD_VALUES = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}


class Constant(ScoringAgent):
    """Scores every action with the same value, except action 0 (the one an unmasked argmax would take)."""

    def __init__(self, value: float) -> None:
        super().__init__(f"constant:{value}", None, None, None)
        self.value = value

    def scores(self, observations):
        scores = np.full((len(observations), RULES.length + 1), self.value)
        scores[:, 0] = 1.0
        return scores


@pytest.mark.parametrize("bad", BAD_VALUES)
def test_non_finite_scores_are_named_not_played(bad):
    decisions = Decisions.of_positions(some_decisions())
    with pytest.raises(ValueError, match=r"constant:.*: the network's scores are not finite for \d+ of 60 decisions"):
        Constant(BAD_VALUES[bad]).select_moves(RULES, decisions)


def test_a_non_finite_score_of_an_illegal_action_is_harmless():
    decisions = Decisions.of_positions(some_decisions())
    masks = decisions.masks(RULES.length + 1)

    class IllegalNaN(ScoringAgent):
        def scores(self, observations):
            return np.where(masks, np.arange(RULES.length + 1, dtype=float)[None, :], np.nan)

    chosen = IllegalNaN("illegal-nan", None, None, None).select_moves(RULES, decisions)
    assert all(int(m) == max(decisions.legal(i)) for i, m in enumerate(chosen))


def _nan_onnx(path, value):
    onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
    from onnx import TensorProto, helper, numpy_helper

    w1 = np.full((36, 15), value, dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["obs", "w"], ["scores"])],
        "bad",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, [None, 36])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [None, 15])],
        [numpy_helper.from_array(w1, "w")],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return f"onnx:{path}"


def _nan_torchscript(path, value):
    import torch

    net = torch.nn.Linear(36, 15)
    with torch.no_grad():
        net.bias.fill_(value)
    torch.jit.script(net).save(str(path))
    return f"torchscript:{path}"


def _nan_sb3(path, value):
    import torch

    model = _sb3_model("ppo")
    with torch.no_grad():
        model.policy.action_net.bias.fill_(value)
    model.save(path)
    return f"sb3:{path}"


@pytest.mark.parametrize("bad", BAD_VALUES)
@pytest.mark.parametrize("make", [_nan_onnx, _nan_torchscript, _nan_sb3], ids=["onnx", "torchscript", "sb3"])
def test_every_format_names_a_network_with_non_finite_scores(make, bad, tmp_path):
    spec = make(tmp_path / f"net-{bad}.model", BAD_VALUES[bad])
    agent = make_agent(spec)
    with pytest.raises(ValueError, match="scores are not finite"):
        agent.select_moves(RULES, Decisions.of_positions(some_decisions(count=8)))


def test_a_policy_that_answers_an_illegal_action_is_named():
    agent = PolicyAgent(lambda obs, masks: np.zeros(len(obs), dtype=np.int64), spec="policy:zeros")
    decisions = Decisions.of_positions(some_decisions())
    with pytest.raises(ValueError, match=r"policy:zeros chose illegal move 0 for roll \d"):
        agent.select_moves(RULES, decisions)


def test_a_fixed_batch_onnx_export_plays_like_a_dynamic_one(tmp_path):
    onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
    from onnx import TensorProto, helper, numpy_helper

    weights = _weights()
    paths = {}
    for batch in (None, 1, 7):
        graph = helper.make_graph(
            [
                helper.make_node("Gemm", ["obs", "w1", "b1"], ["h"], transB=1),
                helper.make_node("Relu", ["h"], ["r"]),
                helper.make_node("Gemm", ["r", "w2", "b2"], ["scores"], transB=1),
            ],
            "mlp",
            [helper.make_tensor_value_info("obs", TensorProto.FLOAT, [batch, 36])],
            [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [batch, 15])],
            [numpy_helper.from_array(a, n) for a, n in zip(weights, ("w1", "b1", "w2", "b2"), strict=True)],
        )
        paths[batch] = tmp_path / f"net-{batch}.onnx"
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), paths[batch])
    decisions = Decisions.of_positions(some_decisions())
    expected = make_agent(f"onnx:{paths[None]}").select_moves(RULES, decisions)
    for batch in (1, 7):  # 60 decisions: 60 runs of 1, and 9 runs of 7 with the last one padded
        assert np.array_equal(make_agent(f"onnx:{paths[batch]}").select_moves(RULES, decisions), expected)


def test_a_torchscript_network_of_the_wrong_size_is_one_line(tmp_path):
    import torch

    path = tmp_path / "small.pt"
    torch.jit.script(torch.nn.Linear(10, 15)).save(str(path))
    agent = make_agent(f"torchscript:{path}")
    with pytest.raises(
        ValueError,
        match=r"the network fails on observations float32\[60, 36\] \(it must map "
        r"float32\[batch, 36\] to scores \[batch, 15\]\)",
    ) as caught:
        agent.select_moves(RULES, Decisions.of_positions(some_decisions()))
    assert "\n" not in str(caught.value)


def _rewrite_zip(source, target, change):
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            data = old.read(info.filename)
            new.writestr(info.filename, change(info.filename, data))


def test_an_sb3_bias_of_the_wrong_shape_is_refused(tmp_path):
    import torch

    model = _sb3_model("ppo")
    with torch.no_grad():
        model.policy.action_net.bias = torch.nn.Parameter(torch.zeros(1))  # would broadcast to every action
    model.save(tmp_path / "bias.zip")
    with pytest.raises(ValueError, match=r"its layer 2 has a bias of shape \[1\], expected \[15\]"):
        make_agent(f"sb3:{tmp_path / 'bias.zip'}")


def test_an_sb3_zip_bomb_is_refused_before_it_is_inflated(tmp_path):
    model = _sb3_model("ppo")
    model.save(tmp_path / "real.zip")
    padding = " " * (MAX_SB3_DATA + 1)  # deflates to a few kilobytes

    def inflate(name, data):
        if name != "data":
            return data
        text = json.loads(data)
        return (json.dumps(text)[:-1] + ', "padding": "' + padding + '"}').encode()

    _rewrite_zip(tmp_path / "real.zip", tmp_path / "bomb.zip", inflate)
    assert (tmp_path / "bomb.zip").stat().st_size < 1 << 20
    with pytest.raises(ValueError, match=r"its member 'data' inflates to [\d,]+ bytes, more than a model's"):
        make_agent(f"sb3:{tmp_path / 'bomb.zip'}")


def test_a_weights_bomb_is_refused(tmp_path):
    from urgym.agents.outside.weights import MAX_WEIGHTS_BYTES, read_state_dict

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("archive/data.pkl", b"\0" * (MAX_WEIGHTS_BYTES + 1))
    assert len(buffer.getvalue()) < 2 << 20
    with pytest.raises(ValueError, match="larger than"):
        read_state_dict(buffer.getvalue())


def test_observations_helper_matches_the_batch():
    decisions = Decisions.of_positions(some_decisions(count=5))
    assert observations(RULES, decisions).shape == (5, 36)


def _value_network_with(w0_scale, rules=None):
    from urgym.agents.networks.value import ValueNetwork

    from urgym import get_rules
    from urgym.features import feature_size

    rules = rules or get_rules("finkel", 3)
    n = feature_size(rules, "td-v1")
    w0 = np.full((n, 8), w0_scale)
    w0[::2] *= -1  # mixed signs into every unit: an overflow would become inf - inf
    return ValueNetwork(rules, "td-v1", [(w0, np.zeros(8)), (np.ones((8, 1)), np.zeros(1))], "relu", {})


def test_finite_weights_whose_activations_could_overflow_are_refused_when_loaded(tmp_path):
    """Weights that are finite float32 numbers but whose sums can pass float32's largest are refused in one line."""
    with pytest.raises(ValueError, match=r"layer 0's activations can reach .*beyond float32's"):
        _value_network_with(3e37)
    with pytest.raises(ValueError, match="not finite float32 numbers"):
        _value_network_with(1e39)  # finite in float64, inf in float32: no overflow warning, one error
    _value_network_with(1e30)  # large but bounded: accepted and plays a finite value everywhere
    from urgym.agents.networks.value import network_values

    from urgym.game import Game

    game = Game("finkel", seed=0, pieces=3)
    game.play(game.legal_moves[0])
    assert np.isfinite(network_values(_value_network_with(1e30), np.array([game.position.code]))).all()


def test_a_network_file_with_overflowing_weights_is_one_line_in_a_command(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    from urgym.agents.networks.value import ValueNetwork

    net = _value_network_with(1.0)
    net.layers[0] = (
        np.full_like(net.layers[0][0], 3e37) * np.where(np.arange(len(net.layers[0][0])) % 2, 1, -1)[:, None],
        net.layers[0][1],
    )
    path = tmp_path / "overflow.npz"
    ValueNetwork.save(net, path)  # save does not re-check; a stranger's file is checked when loaded
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "evaluate"),
            "--agent",
            f"neural:model={path}",
            "--opponent",
            "random",
            "--pieces",
            "3",
            "--games",
            "2",
            "--no-table",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and "overflow while playing" in lines[0], result.stderr
    assert "Warning" not in result.stderr
