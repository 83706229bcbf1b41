"""After-state value networks: inference, the search over them, files from strangers, and the ``neural`` agent."""

from __future__ import annotations

import itertools
import json
import zipfile

import numpy as np
import pytest
from urgym.agents import make_agent
from urgym.agents.models import shipped_model
from urgym.agents.networks.neural import (
    MAX_NETWORK_BYTES,
    NeuralAgent,
    ValueNetwork,
    network_values,
    table_search_choices,
)
from urgym.agents.networks.td import TDAgent
from urgym.evaluation.scoring.positions import benchmark_positions
from urgym.evaluation.training.td_lambda import TDLambda
from urgym.solver.cache import load_or_solve

from tests.agents.positions import decision_positions
from urgym import Position, get_rules
from urgym.batch import Decisions
from urgym.core import geometry
from urgym.features import FEATURE_SETS, feature_set_id, feature_size, write_value_features_batch


def random_network(rules, features="tactics-v1", hidden=(24, 8), activation="relu", seed=0):
    rng = np.random.default_rng(seed)
    sizes = [feature_size(rules, features), *hidden, 1]
    layers = [(rng.normal(0, 1 / np.sqrt(a), (a, b)), rng.normal(0, 0.3, b)) for a, b in itertools.pairwise(sizes)]
    return ValueNetwork(rules, features, layers, activation)


def numpy_forward(network, states):
    """The plain forward pass: features, then every layer as a matrix product."""
    x = np.zeros((len(states), network.sizes[0]), np.float32)
    write_value_features_batch(states, geometry(network.rules), feature_set_id(network.features), x)
    h = x.astype(np.float64)
    for k, (w, b) in enumerate(network.layers):
        h = h @ w.astype(np.float64) + b
        if k < len(network.layers) - 1:
            h = np.maximum(h, 0) if network.activation == "relu" else 1 / (1 + np.exp(-h))
    return 1 / (1 + np.exp(-h[:, 0]))


def random_states(rules, count, seed=0):
    """Positions of random games (every stage, both sides to move)."""
    from urgym import Game

    rng = np.random.default_rng(seed)
    states = []
    while len(states) < count:
        game = Game(rules, int(rng.integers(1 << 30)))
        while not game.is_over and len(states) < count:
            states.append(game.position.code)
            game.play(game.legal_moves[int(rng.integers(len(game.legal_moves)))])
    return np.array(states, np.int64)


@pytest.mark.parametrize(("name", "pieces"), [("finkel", 7), ("blitz", 5), ("masters", 3), ("murray", 2)])
@pytest.mark.parametrize(
    ("features", "activation"),
    [("tactics-v1", "relu"), ("td-v1", "sigmoid"), ("tactics-v1", "sigmoid"), ("tactics-v2", "relu")],
)
def test_inference_equals_a_plain_numpy_forward_pass(name, pieces, features, activation):
    rules = get_rules(name, pieces)
    network = random_network(rules, features, (32, 16), activation, seed=pieces)
    states = random_states(rules, 400)
    assert np.allclose(network_values(network, states), numpy_forward(network, states), atol=2e-6)


@pytest.mark.parametrize("features", ["tactics-v1", "tactics-v2"])
@pytest.mark.parametrize(("name", "pieces"), [("blitz", 3), ("masters", 3)])
def test_tactics_features_follow_the_core_moves(features, name, pieces):
    """Blitz: captures give an extra roll, rosettes are not safe; masters: its own path and shared tiles."""
    rules = get_rules(name, pieces)
    size = feature_size(rules, features)
    states = random_states(rules, 300, seed=2)
    x = np.zeros((len(states), size), np.float32)
    write_value_features_batch(states, geometry(rules), FEATURE_SETS[features], x)
    length, pieces, rolls = rules.length, rules.pieces, rules.max_roll
    for state, row in zip(states, x, strict=True):
        position = Position(rules, int(state))
        mover, other = position.turn, "dark" if position.turn == "light" else "light"
        expected = np.zeros(size, np.float32)
        for p in position.pieces(mover):
            expected[p - 1] = 1
        for p in position.pieces(other):
            expected[length + p - 1] = 1
        base = 2 * length
        for k, count in enumerate(
            (position.home(mover), position.home(other), position.scored(mover), position.scored(other))
        ):
            expected[base + k * (pieces + 1) + count] = 1
        base += 4 * (pieces + 1)
        facing = Position.from_pieces(
            rules,
            position.pieces("light"),
            position.pieces("dark"),
            position.home("light"),
            position.home("dark"),
            turn=other,
        )
        for side, seen in enumerate((position, facing)):
            for r in range(1, rolls + 1):
                results = [seen.move_result(r, m) for m in seen.legal_moves(r)]
                at = base + 4 * rolls * side + 4 * (r - 1)
                expected[at : at + 4] = [
                    bool(results),
                    any(m.captured for m in results),
                    any(m.landed_on_rosette for m in results),
                    any(m.scored for m in results),
                ]
                if features == "tactics-v2":
                    at = base + 8 * rolls + 2 * rolls * side + 2 * (r - 1)
                    expected[at : at + 2] = [
                        max((captured_progress(seen, r, m) for m in seen.legal_moves(r)), default=0.0),
                        len(results) / pieces,
                    ]
        assert np.allclose(row, expected, atol=1e-7), position


def captured_progress(position, roll, move):
    """How far along its path the piece ``move`` captures stood, over the path's length (0: no capture).

    Read from the pieces before and after the move, not from the tiles the features use.
    """
    victim = "dark" if position.turn == "light" else "light"
    before, after = list(position.pieces(victim)), position.play(roll, move).pieces(victim)
    for p in after:
        before.remove(p)
    return max(before, default=0) / position.rules.length


def test_td_training_plays_through_the_one_forward_pass_and_search():
    """TD(lambda) trains in float64 through the same kernels that play the saved float32 network."""
    rules = get_rules("finkel", 3)
    learner = TDLambda.initial(rules, 20, seed=4)
    learner.train(20, seed=1, first_game=0, alpha=0.1, lam=0.7)
    network = learner.network()
    states = random_states(rules, 200, seed=1)
    assert np.allclose(network_values(network, states), numpy_forward(network, states), atol=1e-6)
    pairs = [
        (Position(rules, int(s)), r)
        for s in states[:150]
        for r in (1, 2, 3)
        if len(Position(rules, int(s)).legal_moves(r)) > 1
    ]
    decisions = Decisions.of_positions(pairs)
    played = NeuralAgent(network).select_moves(rules, decisions)
    assert (TDAgent(network).select_moves(rules, decisions) == played).all()


@pytest.mark.parametrize(("name", "pieces"), [("finkel", 3), ("blitz", 3), ("masters", 2)])
def test_search_over_a_perfect_evaluation_returns_the_tables_moves(private_cache, name, pieces):
    table = load_or_solve(get_rules(name, pieces), progress=False)
    pairs = benchmark_positions(table, 150)
    decisions = Decisions.of_positions(pairs)
    values = [table.move_values(p, r) for p, r in pairs]
    for depth in range(4):
        for prune in (True, False):
            chosen = table_search_choices(table, decisions, depth, prune=prune)
            regrets = [max(v.values()) - v[int(m)] for v, m in zip(values, chosen, strict=True)]
            assert max(regrets) < 1e-12, (depth, prune)


@pytest.mark.parametrize("seed", [9, 10])
def test_pruning_never_changes_the_move(seed):
    rules = get_rules("finkel", 3)
    network = random_network(rules, seed=seed)
    states = random_states(rules, 300, seed=5)
    pairs = [(Position(rules, int(s)), 2) for s in states if len(Position(rules, int(s)).legal_moves(2)) > 1]
    decisions = Decisions.of_positions(pairs[:120])
    for depth in (1, 2, 3):
        pruned = NeuralAgent(network, depth=depth, threads=1)
        plain = NeuralAgent(network, depth=depth, threads=1, prune=False)
        assert (pruned.select_moves(rules, decisions) == plain.select_moves(rules, decisions)).all(), depth
        if depth >= 2:  # at depth 1 the root's only chance nodes have the full window: nothing to cut
            assert pruned.search_stats(rules).leaves < plain.search_stats(rules).leaves


def test_threads_and_batches_play_the_same_moves():
    rules = get_rules("finkel", 3)
    network = random_network(rules, seed=3)
    states = random_states(rules, 2000, seed=8)
    pairs = [(Position(rules, int(s)), 1) for s in states if len(Position(rules, int(s)).legal_moves(1)) > 1]
    decisions = Decisions.of_positions(pairs)
    single = NeuralAgent(network, depth=1, threads=1).select_moves(rules, decisions)
    threaded = NeuralAgent(network, depth=1, threads=3).select_moves(rules, decisions)
    assert len(pairs) > 200 and (threaded == single).all()
    agent = NeuralAgent(network, depth=1)
    assert [agent.select_move(p, r) for p, r in pairs[:30]] == single[:30].tolist()


def test_a_network_file_round_trips(tmp_path):
    rules = get_rules("aseb", 2)
    network = random_network(rules, seed=1)
    network.info["note"] = "x"
    loaded = ValueNetwork.load(network.save(tmp_path / "net.npz"))
    assert loaded.rules == rules and loaded.features == "tactics-v1" and loaded.info["note"] == "x"
    assert all((a == c).all() and (b == d).all() for (a, b), (c, d) in zip(loaded.layers, network.layers, strict=True))
    agent = make_agent(f"neural:model={tmp_path / 'net.npz'}:depth=1")
    assert agent.spec == f"neural:model={tmp_path / 'net.npz'}:depth=1"
    with pytest.raises(ValueError, match=r"this network learned .aseb: path of 16, 2 pieces"):
        agent.check_rules(get_rules("finkel", 2))


def _write(path, meta, arrays):
    with open(path, "wb") as f:
        np.savez(f, meta=np.array(json.dumps(meta)), **arrays)
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda m, a: a.__setitem__("w0", a["w0"] * np.nan), "not finite"),
        (lambda m, a: a.__setitem__("b1", np.full(1, np.inf, np.float32)), "not finite"),
        (lambda m, a: a.__setitem__("w1", a["w1"][:3]), "layer 1 has weights"),
        (lambda m, a: a.__setitem__("w0", a["w0"][:-1]), "must take"),
        (lambda m, a: m.__setitem__("layers", 9), "1 to 8 layers"),
        (lambda m, a: m.__setitem__("layers", True), "1 to 8 layers"),
        (lambda m, a: m.__setitem__("features", "../../etc"), "unknown feature set"),
        (lambda m, a: m.__setitem__("activation", "tanh"), "unknown activation"),
        (lambda m, a: m.__setitem__("format", "pickle"), "does not name the format"),
        (lambda m, a: m.__setitem__("version", 7), "format version 7"),
        (lambda m, a: m.__setitem__("version", True), "format version True"),  # a boolean is not version 1
        (lambda m, a: m.__setitem__("rules", {"name": "x"}), "not a urgym value network"),
        (lambda m, a: a.__setitem__("w1", a["w1"].astype(object)), "not a urgym value network"),
        (lambda m, a: a.__setitem__("w1", a["w1"].astype(np.int64)), "not floating-point"),
    ],
)
def test_hostile_network_files_are_refused_with_one_line(tmp_path, change, message):
    rules = get_rules("finkel", 2)
    network = random_network(rules, hidden=(4,))
    meta = {
        "format": "urgym-value-network",
        "version": 1,
        "rules": rules.to_dict(),
        "features": "tactics-v1",
        "activation": "relu",
        "layers": 2,
    }
    arrays = {
        "w0": network.layers[0][0],
        "b0": network.layers[0][1],
        "w1": network.layers[1][0],
        "b1": network.layers[1][1],
    }
    change(meta, arrays)
    try:
        path = _write(tmp_path / "bad.npz", meta, arrays)
    except ValueError:  # numpy refuses to save object arrays without pickle: such a file cannot be made this way
        return
    with pytest.raises(ValueError, match=message) as info:
        ValueNetwork.load(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


def test_a_network_archive_bomb_is_refused_before_inflating(tmp_path):
    path = tmp_path / "bomb.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("w0.npy", b"\0" * (MAX_NETWORK_BYTES + 1))
        archive.writestr("meta.npy", b"")
    assert path.stat().st_size < 1 << 20
    with pytest.raises(ValueError, match="inflate to"):
        ValueNetwork.load(path)
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a urgym value network"):
        ValueNetwork.load(tmp_path / "junk.npz")
    with pytest.raises(ValueError, match="no value network at"):
        make_agent(f"neural:model={tmp_path / 'missing.npz'}")


def test_bad_agent_parameters_are_clear():
    with pytest.raises(ValueError, match="depth must be an integer from 0 to 8"):
        make_agent("neural:depth=9")
    with pytest.raises(ValueError, match="no shipped neural model plays aseb with 5 pieces"):
        make_agent("neural").check_rules(get_rules("aseb"))
    with pytest.raises(ValueError, match="no shipped neural model plays finkel with 3 pieces"):
        shipped_model(get_rules("finkel", 3))


@pytest.mark.parametrize(("name", "pieces"), [("finkel", 7), ("blitz", 5), ("masters", 7)])
def test_each_solved_rule_set_has_a_shipped_network_with_its_card(name, pieces):
    rules = get_rules(name, pieces)
    path = shipped_model(rules)
    assert path.stat().st_size <= 1_000_000  # small enough to ship
    network = ValueNetwork.load(path)
    card = json.loads(path.with_suffix(".json").read_text())
    assert network.rules == rules and card["rules"]["pieces"] == pieces and card["algo"] == "distill"
    for fact in (
        "command",
        "train_seconds",
        "test_regret_depth0",
        "test_regret_depth2",
        "decisions_per_second_depth0",
        "decisions_per_second_depth2",
    ):  # the card says what the file's header says
        assert card[fact] == network.info[fact], fact
    assert card["parameters"] == network.parameters and card["file_bytes"] == path.stat().st_size
    for depth in (0, 1):
        agent = NeuralAgent(depth=depth)
        for position, roll in decision_positions(name, 20, seed=4, pieces=pieces):
            assert agent.select_move(position, roll) in position.legal_moves(roll)


def test_network_files_that_are_not_files_or_hold_too_many_arrays_are_refused(tmp_path):
    (tmp_path / "folder.npz").mkdir()
    (tmp_path / "device.npz").symlink_to("/dev/zero")
    with zipfile.ZipFile(tmp_path / "many.npz", "w") as archive:  # a zip of thousands of empty members
        for i in range(5000):
            archive.writestr(f"a{i}.npy", b"")
    for name, message in (
        ("folder.npz", "not a regular file"),
        ("device.npz", "not a regular file"),
        ("many.npz", "holds 5,000 arrays, more than a network's 64"),
    ):
        with pytest.raises(ValueError, match=message):
            ValueNetwork.load(tmp_path / name)
        with pytest.raises(ValueError, match=message):
            TDAgent(tmp_path / name)  # td:model= reads the same format
    network = random_network(get_rules("finkel", 3))
    with np.load(network.save(tmp_path / "net.npz")) as data:
        arrays = {k: data[k] for k in data.files if k != "w1"}
    np.savez(tmp_path / "short.npz", **arrays)
    with pytest.raises(ValueError, match="it has no 'w1'"):
        ValueNetwork.load(tmp_path / "short.npz")


@pytest.mark.parametrize("threads", [-1, 257, 2.5, True, "2"])
def test_a_bad_thread_count_is_refused(threads):
    with pytest.raises(ValueError, match="threads must be an integer from 0"):
        NeuralAgent(depth=1, threads=threads)
