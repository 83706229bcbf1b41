"""urgym.jax, the JAX port of the rules, checked transition for transition against the numba core."""

from itertools import combinations
from typing import Literal

import numpy as np
import pytest
from numba import njit

pytest.importorskip("jax", reason="the jax extra is not installed")
pytest.importorskip("pgx", reason="the jax extra is not installed")

import jax
import jax.numpy as jnp
from pgx._src import api_test
from pgx.experimental import act_randomly, auto_reset

from urgym import RULE_SET_NAMES, core, get_rules
from urgym.jax import ENV_ID, UrJaxEnv, from_code, to_code

CHUNK = 1 << 16


# --- the core's answers ---------------------------------------------------------------------------------------
@njit(cache=True)
def _core_transitions(codes, rolls, geom, masks, successors, flags):
    """For each (code, roll): its legal-move mask, and per move the successor code and flags (-1: not legal)."""
    moves = np.zeros(core.MAX_MOVES, dtype=np.int64)
    for i in range(codes.shape[0]):
        n = core.legal_moves(codes[i], rolls[i], geom, moves)
        for k in range(n):
            masks[i, moves[k]] = True
            successors[i, moves[k]], flags[i, moves[k]] = core.apply_move(codes[i], rolls[i], moves[k], geom)


@njit(cache=True)
def _random_decisions(flows, geom, steps, codes, rolls, seed):
    """Play random games on the core's batched flow; record every decision (code, roll) until ``codes`` is full."""
    policies = np.array([core.POLICY_EXTERNAL, core.POLICY_EXTERNAL])
    chosen = np.full(flows.shape[0], -1, dtype=np.int64)
    rng = np.zeros(1, dtype=np.uint64)
    core.seed_stream(rng, seed, 99)
    filled = 0
    next_game = flows.shape[0]
    for _ in range(steps):
        core.step_games(flows, chosen, policies, geom)
        for i in range(flows.shape[0]):
            f = flows[i]
            if f.n == 0:  # over: start a new game in its place
                core.start_game(flows, i, geom[0].pieces, seed, next_game)
                next_game += 1
                chosen[i] = -1
                continue
            if filled < codes.shape[0]:
                codes[filled] = f.state
                rolls[filled] = f.roll
                filled += 1
            chosen[i] = f.moves[core.next_below(rng, f.n)]
        if filled == codes.shape[0]:
            return filled
    return filled


def random_decisions(rules, count, seed=1, games=4096):
    geom = core.geometry(rules)
    flows = core.flow_buffers(games)
    core.start_games(flows, rules.pieces, seed, 0)
    codes = np.zeros(count, dtype=np.int64)
    rolls = np.zeros(count, dtype=np.int64)
    filled = _random_decisions(flows, geom, 10 * count, codes, rolls, seed)
    assert filled == count
    return codes, rolls


def all_positions(rules):
    """Every position of ``rules`` (light to move and dark to move), by brute force over both sides' pieces."""
    length, pieces = rules.length, rules.pieces
    sides = []
    for on_board in range(pieces + 1):
        for places in combinations(range(1, length + 1), on_board):
            for home in range(pieces - on_board + 1):
                sides.append((places, home))
    codes = []
    for light, light_home in sides:
        light_tiles = [rules.path[p - 1] for p in light]
        for dark, dark_home in sides:
            tiles = light_tiles + [rules.dark_path[p - 1] for p in dark]
            if len(set(tiles)) < len(tiles):  # two pieces never share a tile (Murray's path visits some twice)
                continue
            if not light and not light_home and not dark and not dark_home:
                continue
            for mover, other, turn in (
                ((light, light_home), (dark, dark_home), 0),
                ((dark, dark_home), (light, light_home), 1),
            ):
                codes.append(
                    core.pack(core.positions_mask(mover[0]), core.positions_mask(other[0]), mover[1], other[1], turn)
                )
    return np.array(codes, dtype=np.int64)


# --- the JAX side -----------------------------------------------------------------------------------------------
def assert_equal_transitions(rules, codes, rolls):
    """Masks of (code, roll), and every legal move's successor code, win and extra roll, equal to the core's."""
    env = UrJaxEnv(rules)
    actions = rules.length + 1
    masks = np.zeros((len(codes), actions), dtype=bool)
    successors = np.full((len(codes), actions), -1, dtype=np.int64)
    flags = np.zeros((len(codes), actions), dtype=np.int64)
    _core_transitions(codes, rolls, core.geometry(rules), masks, successors, flags)
    decide = jax.jit(
        lambda state, rows, moves: jax.vmap(env.decision_step)(jax.tree_util.tree_map(lambda x: x[rows], state), moves)
    )
    for start in range(0, len(codes), CHUNK):
        part = slice(start, start + CHUNK)
        state = from_code(rules, codes[part], rolls[part])
        can_move = masks[part].any(axis=1)
        assert np.array_equal(np.asarray(state.legal_action_mask), masks[part]), rules.name
        # a roll without a legal move passes: the other side's chance node
        assert np.array_equal(np.asarray(state._is_chance), ~can_move)
        passed = core_swap(codes[part][~can_move])
        assert np.array_equal(np.asarray(to_code(state))[~can_move], passed)
        all_rows, all_moves = np.nonzero(masks[part])
        turns = np.asarray(state._turn)
        for block in range(0, len(all_rows), CHUNK):  # fixed-size blocks: one compilation
            rows = np.resize(all_rows[block : block + CHUNK], CHUNK)
            moves = np.resize(all_moves[block : block + CHUNK], CHUNK)
            after = decide(state, rows, jnp.asarray(moves, dtype=jnp.int32))
            expected_flags = flags[part][rows, moves]
            assert np.array_equal(to_code(after), successors[part][rows, moves]), rules.name
            assert np.array_equal(np.asarray(after.terminated), (expected_flags & core.WIN) != 0)
            assert np.array_equal(np.asarray(after._is_chance), (expected_flags & core.WIN) == 0)
            extra = (expected_flags & core.EXTRA_ROLL) != 0
            assert np.array_equal(np.asarray(after._turn) == turns[rows], extra)


@njit(cache=True)
def core_swap(codes):
    out = np.empty_like(codes)
    for i in range(codes.shape[0]):
        out[i] = core.swap_sides(codes[i])
    return out


@pytest.mark.parametrize("name", RULE_SET_NAMES)
def test_every_transition_of_every_two_piece_position_equals_the_core(name):
    rules = get_rules(name, 2)
    codes = np.array([c for c in all_positions(rules) if not core.is_over(int(c))], dtype=np.int64)
    rolls = np.array(rules.rolls)
    assert_equal_transitions(rules, np.repeat(codes, len(rolls)), np.tile(rolls, len(codes)))


@pytest.mark.parametrize("name", RULE_SET_NAMES)
def test_a_million_random_decisions_of_full_games_equal_the_core(name):
    rules = get_rules(name)
    codes, rolls = random_decisions(rules, 1_000_000)
    assert_equal_transitions(rules, codes, rolls)


# --- observations, chance and the pgx API --------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["finkel", "masters", "skiriuk"])
def test_observations_equal_the_core_encoder_from_both_sides(name):
    rules = get_rules(name, 4)
    env = UrJaxEnv(rules)
    codes, rolls = random_decisions(rules, 2000, seed=3)
    state = from_code(rules, codes, rolls, light_player=1)
    for player in (0, 1):
        observed = np.asarray(jax.vmap(env._observe, in_axes=(0, None))(state, player))
        for i, (code, roll) in enumerate(zip(codes, rolls, strict=True)):
            side = 1 - player  # player 1 plays light
            expected = np.zeros(core.observation_size(rules))
            core.write_observation(
                code, side, roll if core.turn_of(code) == side else 0, core.geometry(rules), expected
            )
            assert np.array_equal(observed[i], expected.astype(np.float32)), (i, player)
    assert np.array_equal(
        np.asarray(state.observation), np.asarray(jax.vmap(env._observe)(state, state.current_player))
    )


def test_step_is_chance_step_of_decision_step_with_the_rolls_drawn_from_the_key():
    env = UrJaxEnv("blitz", 3)
    step = jax.jit(env.step)
    decide, roll = jax.jit(env.decision_step), jax.jit(env.chance_step)
    key = jax.random.PRNGKey(5)
    state = env.init(key)
    for _ in range(300):
        key, act_key, step_key = jax.random.split(key, 3)
        action = jax.random.categorical(act_key, jnp.log(state.legal_action_mask.astype(jnp.float32)))
        expected = decide(state, action)
        k = 0
        while bool(expected._is_chance):
            expected = roll(expected, env.draw_roll(step_key, k))
            k += 1
        state = step(state, action, step_key)
        for field in (
            "_board",
            "_home",
            "_turn",
            "_roll",
            "legal_action_mask",
            "terminated",
            "rewards",
            "current_player",
        ):
            got, want = getattr(state, field), getattr(expected, field)
            if field == "legal_action_mask" and bool(state.terminated):
                want = jnp.ones_like(want)  # pgx: every action "legal" at a terminal state
            assert np.array_equal(np.asarray(got), np.asarray(want)), field
        if bool(state.terminated):
            state = env.init(step_key)


def test_the_rolls_drawn_from_a_key_follow_chance_probs():
    env = UrJaxEnv("finkel")
    rolls = np.asarray(jax.vmap(env.draw_roll, in_axes=(None, 0))(jax.random.PRNGKey(3), jnp.arange(200_000)))
    assert np.allclose(np.bincount(rolls, minlength=5) / len(rolls), env.rules.roll_probabilities, atol=0.004)


def test_chance_probs_are_the_rules_roll_distribution_and_step_draws_from_it():
    for name in ("finkel", "masters"):
        rules = get_rules(name)
        env = UrJaxEnv(rules)
        assert np.allclose(np.asarray(env.chance_probs), rules.roll_probabilities)
        assert abs(float(env.chance_probs.sum()) - 1) < 1e-6
    # the first roll of a game: light's first decision, unless it rolled 0 (finkel) and passed
    env = UrJaxEnv("masters")
    states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), 40_000))
    rolls = np.asarray(states._roll)[np.asarray(states._turn) == 0]
    frequencies = np.bincount(rolls, minlength=5) / len(rolls)
    assert np.allclose(frequencies, env.rules.roll_probabilities, atol=0.01), frequencies


def test_a_win_rewards_the_winner_and_pgx_handles_terminal_and_illegal_steps():
    rules = get_rules("finkel", 1)
    env = UrJaxEnv(rules)
    # light's last piece on position L, roll 1: bearing it off wins
    code = core.pack(core.positions_mask([rules.length]), core.positions_mask([3]), 0, 0, 0)
    state = from_code(rules, code, 1, light_player=1)
    assert state.current_player == 1 and list(np.flatnonzero(state.legal_action_mask)) == [rules.length]
    won = env.step(state, rules.length, jax.random.PRNGKey(0))
    assert bool(won.terminated) and won.rewards.tolist() == [-1.0, 1.0]
    assert bool(won.legal_action_mask.all())
    assert core.winner_of(to_code(won)) == 0
    again = env.step(won, 0, jax.random.PRNGKey(1))
    assert again.rewards.tolist() == [0.0, 0.0] and bool(again.terminated)
    lost = env.step(state, 0, jax.random.PRNGKey(0))  # illegal: pgx ends the game as the mover's loss
    assert bool(lost.terminated) and lost.rewards.tolist() == [1.0, -1.0]


def test_from_code_refuses_impossible_positions_and_rolls():
    rules = get_rules("finkel", 2)
    with pytest.raises(ValueError, match="more than the 2 pieces"):
        from_code(rules, core.pack(0b111, 0, 0, 2, 0))
    with pytest.raises(ValueError, match="beyond path position 14"):
        from_code(rules, core.pack(1 << 20, 0, 1, 2, 0))
    with pytest.raises(ValueError, match="roll 5 cannot be rolled"):
        from_code(rules, core.start_state(2), 5)
    with pytest.raises(ValueError, match="roll 0 cannot be rolled"):
        from_code("masters", core.start_state(7), 0)
    start = from_code(rules, core.start_state(2))
    assert bool(start._is_chance) and to_code(start) == core.start_state(2)


def test_pgx_random_play_loops_run_unchanged(monkeypatch):
    env = UrJaxEnv("finkel", 3)
    # pgx's batched api test (its single-game half fails on pgx's own games in pgx 2.6: act_randomly samples
    # along axis 1). It checks env_id against pgx's list of games; ours is added to that list, nothing else.
    monkeypatch.setattr(api_test, "EnvId", Literal[ENV_ID])
    api_test.api_test_batch(env, num=3, use_key=True)
    # the single-game checks, on a random game played one state at a time
    step, key = jax.jit(env.step), jax.random.PRNGKey(2)
    state = env.init(key)
    api_test._validate_state(state)
    while not bool(state.terminated):
        key, act_key, step_key = jax.random.split(key, 3)
        action = jax.random.categorical(act_key, jnp.log(state.legal_action_mask.astype(jnp.float32)))
        count = int(state._step_count)
        state = step(state, action, step_key)
        assert int(state._step_count) == count + 1
        api_test._validate_state(state)
        api_test._validate_current_player(state)
        api_test._validate_legal_actions(state)
    # an auto-reset loop over a batch, as pgx's examples train
    step = jax.jit(jax.vmap(auto_reset(env.step, env.init)))
    state = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), 64))
    key = jax.random.PRNGKey(1)
    finished = 0
    for _ in range(400):
        key, act_key, step_key = jax.random.split(key, 3)
        state = step(state, act_randomly(act_key, state.legal_action_mask), jax.random.split(step_key, 64))
        finished += int(state.terminated.sum())
        assert bool(state.legal_action_mask.any(axis=1).all())
    assert finished > 64


def test_the_board_draws_as_svg(tmp_path):
    env = UrJaxEnv("aseb")
    state = env.init(jax.random.PRNGKey(0))
    svg = state.to_svg()
    assert svg.startswith("<svg") and svg.count("<rect") >= 1 + len(env.rules.board)
    with pytest.raises(ValueError, match=r"ends with \.svg"):
        state.save_svg(str(tmp_path / "board.png"))
    state.save_svg(str(tmp_path / "board.svg"))
    assert (tmp_path / "board.svg").read_text().endswith("</svg>")


@pytest.mark.parametrize("action", [15, 99, -1, 2**31 - 1])
def test_an_action_outside_the_actions_ends_the_game_as_the_movers_loss(action):
    rules = get_rules("finkel", 1)
    env = UrJaxEnv(rules)
    # light's last piece on position L, roll 1: only action L is legal, where pgx's clamped index would land
    code = core.pack(core.positions_mask([rules.length]), core.positions_mask([3]), 0, 0, 0)
    state = from_code(rules, code, 1, light_player=1)
    assert list(np.flatnonzero(state.legal_action_mask)) == [rules.length]
    lost = env.step(state, action, jax.random.PRNGKey(0))
    assert bool(lost.terminated) and lost.rewards.tolist() == [1.0, -1.0]  # player 1 (light) took it
    assert to_code(lost) == code  # nothing moved
    pair = jax.tree_util.tree_map(lambda x: jnp.stack([x, x]), state)
    batched = jax.vmap(env.step)(pair, jnp.array([action, rules.length]), jax.random.split(jax.random.PRNGKey(0), 2))
    assert batched.terminated.tolist() == [True, True] and batched.rewards.tolist() == [[1.0, -1.0], [-1.0, 1.0]]


def test_impossible_players_and_rolls_are_refused_and_under_jit_pass_the_turn():
    rules = get_rules("finkel", 2)
    env = UrJaxEnv(rules)
    for player in (5, -1, 2**40, True, 0.5):
        with pytest.raises(ValueError, match="light_player must be an integer 0 or 1"):
            from_code(rules, core.start_state(2), light_player=player)
    start = from_code(rules, core.start_state(2))
    for roll in (9, 5, -1):
        with pytest.raises(ValueError, match=f"roll {roll} cannot be rolled"):
            env.chance_step(start, roll)
        with pytest.raises(ValueError, match=f"roll {roll} cannot be rolled"):
            env.legal_moves_mask(start, roll)
    passed = jax.jit(env.chance_step)(start, jnp.int32(9))  # no Python check under jit: no legal move
    assert bool(passed._is_chance) and int(passed._turn) == 1 - int(start._turn)
    assert not bool(jax.jit(env.legal_moves_mask)(start, jnp.int32(9)).any())
