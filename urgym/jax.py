"""The Royal Game of Ur in JAX: a pgx-compatible environment with explicit chance (the ``jax`` extra).

JAX cannot call numba inside a jitted function, so this module is the one deliberate second implementation of
the rules (docs/architecture.md): a port of :mod:`urgym.core` to pure, jittable, vmap-able functions over a
small state of arrays. The test suite checks it transition for transition against the core.

State
    :class:`State` is a pgx state (``current_player``, ``observation``, ``rewards``, ``terminated``,
    ``truncated``, ``legal_action_mask``, ``_step_count``) plus, by colour (0 light, 1 dark): ``_board``
    (``bool[2, L]``, a piece at path position index + 1 of that colour's own path), ``_home`` (pieces at home),
    ``_turn`` (the colour to move, or to roll at a chance node), ``_roll`` (the roll to play, 0 at a chance
    node), ``_is_chance`` (the state awaits a roll) and ``_light_player`` (the player id that plays light;
    ``init`` draws it, as pgx's two-player games draw who starts). The rule set is a static field.

Explicit chance
    A turn is a chance node (the roll, distributed as :attr:`UrJaxEnv.chance_probs` over rolls
    ``0..max_roll``) followed by a decision. :meth:`UrJaxEnv.decision_step` plays a move and returns the
    afterstate, a chance node of the side to roll next (the same side after an extra roll), or a terminal state.
    :meth:`UrJaxEnv.chance_step` applies a roll: the result is a decision when the roll has a legal move, and
    otherwise the turn passes, so the result is again a chance node, of the other side. :meth:`UrJaxEnv.step`
    is ``chance_step(decision_step(state, action), roll)`` with the roll drawn from the key, repeated over
    passes until a side must decide.

Observation and actions
    The same as :class:`urgym.env.UrEnv`: action ``a`` moves the piece at path position ``a`` (0 enters one),
    and the observation is :func:`urgym.core.write_observation` from the player's side (the roll's one-hot only
    at that player's own decision).

Impossible inputs
    An action outside ``0..L`` (a negative one, ``L + 1`` and beyond) is an illegal action like any other: the game
    ends as a loss of the player who took it. :meth:`UrJaxEnv.chance_step` and :meth:`UrJaxEnv.legal_moves_mask`
    refuse a roll the rules cannot roll (``ValueError``) when it is a concrete value; under ``jit`` or ``vmap``,
    where no Python check can run, such a roll has no legal move, so the turn passes. :func:`from_code` refuses a
    ``light_player`` other than 0 or 1.

Conversions
    :func:`from_code` builds a state from the core's packed code (a chance node, or the decision after a roll)
    and :func:`to_code` packs a state back, for interoperability and the differential test.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from urgym import core
from urgym.checks import integer, integer_array
from urgym.files import require_extra
from urgym.position import check_codes
from urgym.rules import Rules, get_rules

jax = require_extra("jax", "jax", "urgym.jax")
pgx_core = require_extra("pgx.core", "jax", "urgym.jax")

import jax.numpy as jnp  # noqa: E402  (after the extra's check)
from pgx._src.struct import dataclass, field  # noqa: E402

__all__ = ["ENV_ID", "State", "UrJaxEnv", "from_code", "to_code"]

ENV_ID = "urgym/Ur"
"""The id of :class:`UrJaxEnv` (pgx ids carry no version; :attr:`UrJaxEnv.version` does)."""

_LIGHT, _DARK = 0, 1
MAX_ROLLS = 4096
"""Most rolls :meth:`UrJaxEnv.step` draws looking for a decision. A live game finds one long before (each roll has
a move with a chance of at least 1/16 on the rule sets shipped); only a state no game reaches can use them all."""


def _select(condition: Any, chosen: Any, other: Any) -> Any:
    """``chosen`` where ``condition`` holds, else ``other``, field by field (a scalar condition per game)."""
    return jax.tree_util.tree_map(lambda a, b: jnp.where(condition, a, b), chosen, other)


def _is_decision(state: Any) -> Any:
    """Whether ``state`` is a live decision: a roll to play, in a game not over."""
    return ~state._is_chance & ~state.terminated


@dataclass
class State(pgx_core.State):
    """One game of Ur as JAX arrays (see the module docstring); batched by ``jax.vmap``."""

    current_player: Any = jnp.int32(0)
    observation: Any = jnp.zeros(0, dtype=jnp.float32)
    rewards: Any = jnp.zeros(2, dtype=jnp.float32)
    terminated: Any = jnp.bool_(False)
    truncated: Any = jnp.bool_(False)
    legal_action_mask: Any = jnp.zeros(0, dtype=jnp.bool_)
    _step_count: Any = jnp.int32(0)
    _board: Any = jnp.zeros((2, 0), dtype=jnp.bool_)
    _home: Any = jnp.zeros(2, dtype=jnp.int32)
    _turn: Any = jnp.int32(0)
    _roll: Any = jnp.int32(0)
    _is_chance: Any = jnp.bool_(False)
    _light_player: Any = jnp.int32(0)
    _rules: Rules | None = field(pytree_node=False, default=None)

    @property
    def env_id(self) -> str:
        """The environment's id."""
        return ENV_ID

    def to_svg(self, *, color_theme: str | None = None, scale: float | None = None) -> str:
        """An SVG picture of the board (the first 16 games of a batch, one under the other)."""
        return _svg(self, dark_theme=color_theme == "dark", scale=scale or 1.0)

    def save_svg(self, filename: str, *, color_theme: str | None = None, scale: float | None = None) -> None:
        """Write :meth:`to_svg` to ``filename`` (which must end with ``.svg``)."""
        if not str(filename).endswith(".svg"):
            raise ValueError(f"an SVG file name ends with .svg, got {filename!r}")
        with open(filename, "w", encoding="utf-8") as f:
            f.write(self.to_svg(color_theme=color_theme, scale=scale))


class _Tables:
    """The rule set as constant arrays, the JAX form of :func:`urgym.core.geometry`."""

    def __init__(self, rules: Rules) -> None:
        g = core.geometry(rules)[0]
        length = rules.length
        positions = np.arange(1, length + 1)
        slots = length + 2 + rules.max_roll  # destinations 0 .. L + 1 + R, those past L + 1 never legal
        own_same = np.zeros((slots, length), dtype=bool)
        opp_same = np.zeros((slots, length), dtype=bool)
        rosette = np.zeros(slots, dtype=bool)
        for dest in range(1, length + 1):
            own_same[dest] = (int(g["own_same_tile"][dest]) >> (positions - 1)) & 1
            opp_same[dest] = (int(g["opp_same_tile"][dest]) >> (positions - 1)) & 1
            rosette[dest] = bool(g["rosette"][dest])
        self.length = length
        self.own_same = jnp.asarray(own_same)
        self.opp_same = jnp.asarray(opp_same)
        self.rosette = jnp.asarray(rosette)
        # leaving[s, p - 1]: the piece at source s (0 = home) stands at position p
        self.leaving = jnp.asarray(np.eye(length + 1, length, k=-1, dtype=bool))
        self.safe_rosettes = bool(rules.safe_rosettes)
        self.rosette_extra_roll = bool(rules.rosette_extra_roll)
        self.capture_extra_roll = bool(rules.capture_extra_roll)
        probabilities = np.zeros(rules.max_roll + 1, dtype=np.float32)
        probabilities[:] = rules.roll_probabilities
        self.probabilities = jnp.asarray(probabilities)
        # roll r when a uniform number is >= exactly r of these (cumulative probabilities of rolls 0 .. R - 1)
        self.cumulative = jnp.asarray(
            np.cumsum(np.asarray(rules.roll_probabilities, dtype=np.float64))[:-1], dtype=jnp.float32
        )


class UrJaxEnv(pgx_core.Env):
    """The Royal Game of Ur as a pgx environment (``pgx.core.Env``, pgx's v2 API), with explicit chance.

    Args:
        rules: A rule-set name or :class:`urgym.Rules` (default ``"finkel"``).
        pieces: Overrides the rule set's piece count.

    Two players; ``init(key)`` draws which player id plays light and rolls until the first decision;
    ``step(state, action, key)`` plays ``action``, rolls from ``key`` (passing rolls with no legal move) and
    stands at the next decision. An illegal action ends the game as a loss of the player who took it (pgx's
    rule, reward -1), and a finished game has rewards +1 for the winner and -1 for the loser on the step that
    ends it. See the module docstring for the state, the chance functions and the observation.
    """

    def __init__(self, rules: Rules | str = "finkel", pieces: int | None = None) -> None:
        super().__init__()
        self.rules = get_rules(rules, pieces)
        self._tables = _Tables(self.rules)

    # --- pgx's API ---------------------------------------------------------------------------------------------
    @property
    def id(self) -> str:
        """The environment's id (pgx's name for it)."""
        return ENV_ID

    @property
    def version(self) -> str:
        """The environment's version."""
        return "v0"

    @property
    def num_players(self) -> int:
        """Two players."""
        return 2

    @property
    def num_actions(self) -> int:
        """Actions: the source path positions 0 .. L."""
        return self.rules.length + 1

    @property
    def observation_shape(self) -> tuple[int, ...]:
        """The shape of one observation."""
        return (core.observation_size(self.rules),)

    def step(self, state: State, action: Any, key: Any = None) -> State:
        """Play ``action``, then roll from ``key`` until a side must decide (pgx's ``step``; the key is required).

        An action outside ``0..L`` ends the game as a loss of its player, as any illegal action does (pgx would index
        the legal-action mask with it, clamped, and play the last action).
        """
        if key is None:
            raise ValueError("UrJaxEnv.step(state, action, key) rolls the dice from key; pass a jax.random key")
        action = jnp.asarray(action)
        outside = (action < 0) | (action >= self.num_actions)
        stepped = super().step(state, jnp.where(outside, 0, action).astype(jnp.int32), key)
        lost = self._step_with_illegal_action(state.replace(_step_count=state._step_count + 1), state.current_player)
        lost = lost.replace(legal_action_mask=jnp.ones_like(state.legal_action_mask))
        lost = lost.replace(observation=self.observe(lost))
        live = ~(state.terminated | state.truncated)
        return _select(outside & live, lost, stepped)

    def _init(self, key: Any) -> State:
        player_key, roll_key = jax.random.split(key)
        length, pieces = self.rules.length, self.rules.pieces
        state = State(
            legal_action_mask=jnp.zeros(length + 1, dtype=jnp.bool_),
            _board=jnp.zeros((2, length), dtype=jnp.bool_),
            _home=jnp.full(2, pieces, dtype=jnp.int32),
            _is_chance=jnp.bool_(True),
            _light_player=jax.random.bernoulli(player_key).astype(jnp.int32),
            _rules=self.rules,
        )
        return self._roll_until_decision(self._with_player(state), roll_key)

    def _step(self, state: State, action: Any, key: Any) -> State:
        return self._roll_until_decision(self._decide(state, action), key)

    def _observe(self, state: State, player_id: Any) -> Any:
        color = jnp.where(player_id == state._light_player, _LIGHT, _DARK)
        own, opp = state._board[color], state._board[1 - color]
        own_home, opp_home = state._home[color], state._home[1 - color]
        pieces = self.rules.pieces
        counts = jnp.stack([own_home, opp_home, pieces - own_home - own.sum(), pieces - opp_home - opp.sum()])
        deciding = (color == state._turn) & ~state._is_chance & ~state.terminated
        roll = jnp.where(deciding, state._roll, 0)
        one_hot = jnp.arange(1, self.rules.max_roll + 1) == roll
        return jnp.concatenate([own, opp, counts / pieces, one_hot]).astype(jnp.float32)

    # --- explicit chance ---------------------------------------------------------------------------------------
    @property
    def chance_probs(self) -> Any:
        """The roll distribution: ``chance_probs[r]`` is the probability of rolling ``r`` (0..max_roll)."""
        return self._tables.probabilities

    def decision_step(self, state: State, action: Any) -> State:
        """Play the legal ``action`` at a decision; return the afterstate awaiting its roll, or the finished game.

        Unlike :meth:`step` this neither checks legality nor rolls: it is the deterministic half of a turn, for
        planners (mctx's ``stochastic_muzero_policy``) that enumerate the chance outcomes themselves.
        """
        state = self._decide(state, action)
        return state.replace(observation=self._observe(state, state.current_player))

    def chance_step(self, state: State, roll: Any) -> State:
        """Apply ``roll`` at a chance node.

        The next decision, or, when the roll has no legal move, the chance node of the other side (the turn passes).

        Raises:
            ValueError: For a concrete roll the rules cannot roll (under ``jit``, such a roll has no legal move).
        """
        self._check_roll(roll)
        state = self._apply_roll(state, roll)
        return state.replace(observation=self._observe(state, state.current_player))

    def legal_moves_mask(self, state: State, roll: Any) -> Any:
        """The legal moves of the side to move (or roll) for ``roll``, by action: ``bool[L + 1]``.

        Raises:
            ValueError: For a concrete roll the rules cannot roll (under ``jit``, such a roll has no legal move).
        """
        self._check_roll(roll)
        color = state._turn
        return self._legal(state._board[color], state._board[1 - color], state._home[color], roll)

    def _check_roll(self, roll: Any) -> None:
        """Refuse a concrete roll the rules cannot roll (a traced one is left to :meth:`_legal`'s guard)."""
        if isinstance(roll, jax.core.Tracer):
            return
        rolls = np.asarray(roll)
        if not np.issubdtype(rolls.dtype, np.integer):
            raise ValueError(f"a roll must be a whole number, got {roll!r}")
        probabilities = np.asarray(self.rules.roll_probabilities)
        bad = [int(r) for r in np.unique(rolls) if not 0 <= r <= self.rules.max_roll or probabilities[r] == 0]
        if bad:
            raise ValueError(
                f"roll {bad[0]} cannot be rolled under {self.rules.name!r}; the rolls are {self.rules.rolls}"
            )

    # --- the rules -----------------------------------------------------------------------------------------------
    def _legal(self, own: Any, opp: Any, own_home: Any, roll: Any) -> Any:
        """:func:`urgym.core.legal_moves` as a mask over the sources 0..L."""
        t = self._tables
        sources = jnp.arange(t.length + 1)
        dest = sources + roll
        has_piece = jnp.concatenate([(own_home > 0)[None], own])
        bears_off = dest == t.length + 1
        others = own[None, :] & ~t.leaving  # the mover's pieces other than the one that moves
        own_blocks = jnp.any(t.own_same[dest] & others, axis=1)
        safe_opponent = jnp.any(t.opp_same[dest] & opp[None, :], axis=1) & t.rosette[dest] & t.safe_rosettes
        lands = ~own_blocks & ~safe_opponent
        top = t.probabilities.shape[0] - 1  # the largest roll the dice have
        possible = (roll > 0) & (roll <= top) & (t.probabilities[jnp.clip(roll, 0, top)] > 0)
        return possible & has_piece & (dest <= t.length + 1) & (bears_off | lands)

    def _decide(self, state: State, action: Any) -> State:
        """:func:`urgym.core.apply_move` on the state's roll, by colour, with the rewards of a win."""
        t = self._tables
        color = state._turn
        own, opp = state._board[color], state._board[1 - color]
        own_home, opp_home = state._home[color], state._home[1 - color]
        dest = action + state._roll
        scores = dest == t.length + 1
        own = own & ~t.leaving[action]
        own_home = own_home - (action == 0)
        lands = t.leaving[jnp.minimum(dest, t.length)] & ~scores  # one-hot of dest on the board
        own = own | lands
        hit = opp & t.opp_same[dest] & ~scores
        opp = opp & ~hit
        opp_home = opp_home + hit.sum(dtype=jnp.int32)
        captures = jnp.any(hit)
        on_rosette = t.rosette[dest] & ~scores
        wins = scores & ~jnp.any(own) & (own_home == 0)
        extra = ~wins & ((on_rosette & t.rosette_extra_roll) | (captures & t.capture_extra_roll))
        board = state._board.at[color].set(own).at[1 - color].set(opp)
        home = state._home.at[color].set(own_home).at[1 - color].set(opp_home)
        mover = state.current_player
        rewards = jnp.where(wins, jnp.where(jnp.arange(2) == mover, 1.0, -1.0), 0.0).astype(jnp.float32)
        played = self._with_player(
            state.replace(
                _board=board,
                _home=home,
                _turn=jnp.where(extra, color, 1 - color).astype(jnp.int32),
                _roll=jnp.int32(0),
                _is_chance=~wins,
                terminated=wins,
                rewards=rewards,
                legal_action_mask=jnp.zeros_like(state.legal_action_mask),
            )
        )
        # Only a live decision takes a move: a finished game or a chance node stays as it is. Under vmap both
        # branches of every guard run, so the unplayed one must be a state every later loop ends on.
        unchanged = state.replace(rewards=jnp.zeros_like(state.rewards))
        return _select(_is_decision(state), played, unchanged)

    def _apply_roll(self, state: State, roll: Any) -> State:
        mask = self.legal_moves_mask(state, roll)
        can_move = jnp.any(mask)
        rolled = self._with_player(
            state.replace(
                _roll=jnp.where(can_move, roll, 0).astype(jnp.int32),
                _is_chance=~can_move,
                legal_action_mask=mask,
                _turn=jnp.where(can_move, state._turn, 1 - state._turn).astype(jnp.int32),
            )
        )
        # Only a live chance node takes a roll: a finished game or a decision stays as it is.
        return _select(
            state._is_chance & ~state.terminated, rolled, state.replace(rewards=jnp.zeros_like(state.rewards))
        )

    def draw_roll(self, key: Any, k: Any) -> Any:
        """Roll number ``k`` (0, 1, ...) that :meth:`step` draws from ``key``.

        It plays them in turn, passing each roll that has no legal move, until one has.
        """
        u = jax.random.uniform(jax.random.fold_in(key, k))
        return jnp.sum(u >= self._tables.cumulative, dtype=jnp.int32)

    def _roll_until_decision(self, state: State, key: Any) -> State:
        """Roll from ``key`` until a side must decide (a finished game, or a decision, stays as it is).

        The loop carries only the side, the roll and its mask: a pass moves no piece.
        """

        def attempt(k: Any, side: Any) -> tuple[Any, Any]:
            roll = self.draw_roll(key, k)
            return roll, self._legal(state._board[side], state._board[1 - side], state._home[side], roll)

        def next_roll(carry: tuple) -> tuple:
            k, side, roll, mask, waiting = carry
            new_roll, new_mask = attempt(k, side)
            moves = jnp.any(new_mask)
            return (
                k + 1,
                jnp.where(waiting & ~moves, 1 - side, side),
                jnp.where(waiting, new_roll, roll),
                jnp.where(waiting, new_mask, mask),
                waiting & ~moves,
            )

        rolling = state._is_chance & ~state.terminated
        start = (jnp.int32(0), state._turn, state._roll, state.legal_action_mask, rolling)
        # A live game always reaches a decision; the bound only keeps a state no game can reach (built by hand)
        # from holding a whole batch in the loop: it then stays a chance node.
        _, side, roll, mask, _ = jax.lax.while_loop(
            lambda carry: carry[4] & (carry[0] < MAX_ROLLS), next_roll, next_roll(start)
        )
        decided = jnp.any(mask) & rolling
        state = state.replace(
            _turn=jnp.where(rolling, side, state._turn).astype(jnp.int32),
            _roll=jnp.where(rolling, roll, state._roll),
            legal_action_mask=jnp.where(rolling, mask, state.legal_action_mask),
            _is_chance=state._is_chance & ~decided,
        )
        return self._with_player(state)

    @staticmethod
    def _with_player(state: State) -> State:
        player = jnp.where(state._turn == _LIGHT, state._light_player, 1 - state._light_player)
        return state.replace(current_player=player.astype(jnp.int32))


# --- conversions ---------------------------------------------------------------------------------------------
def from_code(rules: Rules | str, code: Any, roll: Any = None, light_player: int = 0) -> State:
    """The state of the core's packed position ``code``: a chance node (``roll`` None) or the state after ``roll``.

    ``code`` and ``roll`` may be arrays of the same length, giving a batched state. After a roll with no legal
    move the turn has passed and the state is the other side's chance node, as :meth:`UrJaxEnv.chance_step`
    gives. ``light_player`` is the player id of light. The rewards are zero (no step led here), and a finished
    game's legal actions are all True, as pgx has them at terminal states.

    Raises:
        ValueError: For a code that is no position of ``rules`` (:func:`urgym.position.check_codes`), a roll
            the rules cannot roll, or a ``light_player`` other than 0 and 1.
    """
    rules = get_rules(rules)
    integer(light_player, "light_player", 0, 1, "0 or 1 (the player id that plays light)")
    observed, rolled = _batched_conversions(rules)
    codes = integer_array(code, "code")
    if codes.ndim > 1:
        raise ValueError(f"code must be one code or a 1-D array of codes, got shape {codes.shape}")
    batched = codes.ndim == 1
    codes = np.atleast_1d(codes)
    check_codes(rules, codes)
    board, home, turn = _decode(codes, rules.length)
    over = (~board.any(axis=2) & (home == 0)).any(axis=1)  # a side has scored every piece
    state = State(
        current_player=jnp.asarray(_player(turn, light_player), dtype=jnp.int32),
        observation=jnp.zeros((len(codes), core.observation_size(rules)), dtype=jnp.float32),
        rewards=jnp.zeros((len(codes), 2), dtype=jnp.float32),
        terminated=jnp.asarray(over),
        truncated=jnp.zeros(len(codes), dtype=jnp.bool_),
        legal_action_mask=jnp.asarray(np.broadcast_to(over[:, None], (len(codes), rules.length + 1))),
        _step_count=jnp.zeros(len(codes), dtype=jnp.int32),
        _board=jnp.asarray(board),
        _home=jnp.asarray(home, dtype=jnp.int32),
        _turn=jnp.asarray(turn, dtype=jnp.int32),
        _roll=jnp.zeros(len(codes), dtype=jnp.int32),
        _is_chance=jnp.asarray(~over),
        _light_player=jnp.full(len(codes), light_player, dtype=jnp.int32),
        _rules=rules,
    )
    if roll is None:
        state = observed(state)
    else:
        rolls = integer_array(roll, "roll")
        if rolls.shape not in ((), codes.shape):
            raise ValueError(f"roll must be one roll or one per code ({codes.shape[0]}), got shape {rolls.shape}")
        rolls = np.broadcast_to(rolls, codes.shape)
        bad = [int(r) for r in np.unique(rolls) if not 0 <= r <= rules.max_roll or rules.roll_probabilities[r] == 0]
        if bad:
            raise ValueError(f"roll {bad[0]} cannot be rolled under {rules.name!r}; the rolls are {rules.rolls}")
        if over.any():
            raise ValueError("a finished game has no roll to play; pass roll=None")
        state = rolled(state, jnp.asarray(rolls, dtype=jnp.int32))
    return state if batched else jax.tree_util.tree_map(lambda x: x[0], state)


@functools.cache
def _batched_conversions(rules: Rules) -> tuple[Any, Any]:
    """The batched, compiled halves of :func:`from_code` for ``rules``: observe a chance node; apply a roll."""
    env = UrJaxEnv(rules)
    observed = jax.jit(jax.vmap(lambda s: s.replace(observation=env.observe(s))))
    return observed, jax.jit(jax.vmap(env.chance_step))


def to_code(state: State) -> int | np.ndarray:
    """The core's packed code of ``state``'s position (an int, or an int64 array for a batched state).

    At a decision the code is the position before the move (the roll is ``state._roll``); at a chance node it
    is the position of the side about to roll; a finished game is seen from the loser's side, as in the core.
    """
    board = np.asarray(state._board)
    home = np.asarray(state._home, dtype=np.int64)
    turn = np.asarray(state._turn, dtype=np.int64)
    codes = _encode(board.reshape(-1, *board.shape[-2:]), home.reshape(-1, 2), turn.reshape(-1))
    return codes.reshape(turn.shape) if turn.ndim else int(codes[0])


def _player(turn: np.ndarray, light_player: int) -> np.ndarray:
    return np.where(turn == _LIGHT, light_player, 1 - light_player)


def _bits(board: np.ndarray) -> np.ndarray:
    weights = np.int64(1) << np.arange(board.shape[-1], dtype=np.int64)
    return (board.astype(np.int64) * weights).sum(axis=-1)


def _encode(board: np.ndarray, home: np.ndarray, turn: np.ndarray) -> np.ndarray:
    rows = np.arange(len(turn))
    masks = _bits(board)
    own, opp = masks[rows, turn], masks[rows, 1 - turn]
    own_h, opp_h = home[rows, turn], home[rows, 1 - turn]
    return (
        own
        | (opp << core.OPP_SHIFT)
        | (own_h << core.OWN_HOME_SHIFT)
        | (opp_h << core.OPP_HOME_SHIFT)
        | (turn << core.TURN_SHIFT)
    )


def _decode(codes: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    turn = (codes >> core.TURN_SHIFT) & 1
    own = (codes & core.FIELD_MASK)[:, None] >> np.arange(length) & 1
    opp = ((codes >> core.OPP_SHIFT) & core.FIELD_MASK)[:, None] >> np.arange(length) & 1
    own_h = (codes >> core.OWN_HOME_SHIFT) & core.HOME_MASK
    opp_h = (codes >> core.OPP_HOME_SHIFT) & core.HOME_MASK
    rows = np.arange(len(codes))
    board = np.zeros((len(codes), 2, length), dtype=bool)
    board[rows, turn] = own.astype(bool)
    board[rows, 1 - turn] = opp.astype(bool)
    home = np.zeros((len(codes), 2), dtype=np.int64)
    home[rows, turn] = own_h
    home[rows, 1 - turn] = opp_h
    return board, home, turn


# --- a picture for notebooks (pgx's State.to_svg) -----------------------------------------------------------------
_TILE = 40


def _svg(state: State, dark_theme: bool, scale: float) -> str:
    rules = state._rules
    boards = np.asarray(state._board).reshape(-1, 2, rules.length)[:16]
    homes = np.asarray(state._home).reshape(-1, 2)[:16]
    turns = np.asarray(state._turn).reshape(-1)[:16]
    rolls = np.asarray(state._roll).reshape(-1)[:16]
    tiles = sorted(rules.board, key=lambda tile: (tile[0], int(tile[1:])))
    columns = max(int(tile[1:]) for tile in tiles)
    width, height = (columns + 4) * _TILE, 3 * _TILE + 20
    ink, paper = ("#eee", "#222") if dark_theme else ("#222", "#fff")
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width * scale:.0f}" '
        f'height="{height * len(boards) * scale:.0f}" viewBox="0 0 {width} {height * len(boards)}">',
        f'<rect width="100%" height="100%" fill="{paper}"/>',
    ]
    for k, (board, home, turn, roll) in enumerate(zip(boards, homes, turns, rolls, strict=True)):
        top = k * height
        for tile in tiles:
            x, y = (int(tile[1:]) - 1) * _TILE, top + "ABC".index(tile[0]) * _TILE
            fill = "#c9a227" if tile in rules.rosettes else ("#555" if dark_theme else "#ddd")
            parts.append(
                f'<rect x="{x + 1}" y="{y + 1}" width="{_TILE - 2}" height="{_TILE - 2}" fill="{fill}" stroke="{ink}"/>'
            )
        for color, path in ((0, rules.path), (1, rules.dark_path)):
            for p in np.flatnonzero(board[color]):
                tile = path[p]
                x, y = (int(tile[1:]) - 0.5) * _TILE, top + ("ABC".index(tile[0]) + 0.5) * _TILE
                parts.append(
                    f'<circle cx="{x}" cy="{y}" r="{_TILE * 0.35}" fill="{("#fafafa", "#111")[color]}" '
                    f'stroke="{ink}" stroke-width="2"/>'
                )
            scored = rules.pieces - int(home[color]) - int(board[color].sum())
            parts.append(
                f'<text x="{(columns + 0.3) * _TILE}" y="{top + (color * 2 + 0.6) * _TILE}" fill="{ink}" '
                f'font-family="sans-serif" font-size="13">{("light", "dark")[color]}: {int(home[color])} '
                f"home, {scored} off</text>"
            )
        status = f"{('light', 'dark')[int(turn)]} to move" + (f", roll {int(roll)}" if roll else "")
        parts.append(
            f'<text x="4" y="{top + 3 * _TILE + 15}" fill="{ink}" font-family="sans-serif" '
            f'font-size="13">{status}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
