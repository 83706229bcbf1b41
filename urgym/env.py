"""Gymnasium environment: one agent plays the Royal Game of Ur against an opponent policy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from urgym import core
from urgym.batch import Decisions, check_choices
from urgym.checks import integer
from urgym.game import check_seed
from urgym.position import SIDES, Position
from urgym.render import RENDER_MODES, check_render_mode, render_frame
from urgym.rules import Rules, get_rules
from urgym.specs import resolve_spec

__all__ = [
    "AGENT_SIDES",
    "ILLEGAL_ACTION_MODES",
    "SELF_PLAY",
    "Opponent",
    "UrEnv",
    "action_index",
    "check_illegal_action",
    "is_self_play",
    "resolve_opponent",
]

Opponent = str | Callable[[Position, int], int] | Any
"""A built-in policy name, a callable ``(position, roll) -> move``, or an object with ``select_move``."""

ILLEGAL_ACTION_MODES = ("loss", "raise", "replace")
"""What an environment does with an illegal action: end the episode as a loss, raise, or play a legal move."""
AGENT_SIDES = ("light", "dark", "random")
SELF_PLAY = "self"
"""The opponent that makes both sides the learner (two-player self-play)."""


class UrEnv(gym.Env):
    """The Royal Game of Ur against an opponent policy.

    ## Description
    The agent plays one side of the Royal Game of Ur (any rule set of :func:`urgym.get_rules`) against
    an opponent. The environment rolls the dice; a roll with no legal move passes the turn by itself.
    One ``step`` is one decision of the agent; the opponent's turns, and the agent's own turns with no
    legal move, happen inside ``step``. After a rosette (or a capture, where the rules grant it) the
    agent's next observation is simply its next decision with the new roll.

    ## Action Space
    ``Discrete(L + 1)``: the path position of the piece to move, 0 entering a piece from home
    (L = 14 for finkel). ``info["action_mask"]`` (int8, 0 or 1, what ``action_space.sample(mask=...)`` takes)
    and :meth:`action_masks` (the same as bool, what sb3-contrib's ``MaskablePPO`` calls) mark the legal actions.
    Once the episode has ended the mask is all ones: no move is legal then, but a masked policy still gets a
    well-defined distribution (an all-zero mask makes a masked softmax divide by zero), and whatever it samples
    is ignored by the reset that follows (``info["legal_moves"]`` is empty). The JAX port's
    ``legal_action_mask`` follows the same rule.

    ## Observation Space
    ``Box(0, 1, (2 L + 4 + R,), float32)`` seen from the agent's side, R the largest roll (4):

    - ``[0, L)``: 1 where the agent has a piece at path position p = index + 1;
    - ``[L, 2L)``: the same for the opponent, on the opponent's own path;
    - ``2L .. 2L + 3``: agent's and opponent's pieces at home, then agent's and opponent's scored
      pieces, each divided by the piece count;
    - ``2L + 4 ..``: one-hot of the current roll 1..R (all zero once the game is over).

    ## Rewards
    +1 when the agent wins, -1 when it loses, 0 on every other step.

    ## Episode End
    The episode terminates when either side has scored every piece, or (with ``illegal_action="loss"``)
    when the agent plays an illegal action, which counts as a loss with reward -1 and
    ``info["illegal_action"] = True``. With ``illegal_action="replace"`` an illegal action is replaced by the
    legal move nearest to it (:func:`urgym.core.replacement_move`: the nearest source position, the lower on a
    tie), ``info["illegal_action"]`` is True and ``illegal_penalty`` is subtracted from that step's reward.
    Games end with probability 1, so there is no truncation; wrap
    with ``gymnasium.wrappers.TimeLimit`` to cap the length. An episode starts at the agent's first
    decision; with one piece a game can end before that, and such a game is replayed.

    ## Arguments
    - ``rules``: rule-set name or :class:`urgym.Rules` (default ``"finkel"``); ``pieces`` overrides the count.
    - ``opponent``: a built-in policy name (``"random"``, ``"first"``, ``"last"``, ``"greedy"``, played
      inside numba), ``"self"`` (two-player self-play: every decision of either side is a step, the observation
      is from the mover's side, ``info["player"]`` says which side that is, 0 light or 1 dark, and a step's
      reward is for the side that took it), any other agent spec (``"expectimax:3"``, ``"perfect"``,
      ``"heuristic"``, ...: built by the ``agents`` package through :func:`register_spec_resolver`), a callable
      ``(position, roll) -> move``, or an agent (an object with ``select_move(position, roll)``).
    - ``agent_side``: ``"light"`` (moves first), ``"dark"``, or ``"random"`` (drawn for every game from its
      (seed, game) stream, :func:`urgym.core.episode_side`).
    - ``illegal_action``: ``"loss"`` (default), ``"raise"`` (a ``ValueError`` naming the legal moves) or
      ``"replace"`` (play the nearest legal move, for algorithms without action masking); ``illegal_penalty``
      (default 0) is subtracted from the reward of a replaced action.
    - ``render_mode``: ``"ansi"`` (text), ``"rgb_array"`` (an image of the board) or ``"human"``
      (prints the text board after every reset and step).

    ``info`` holds ``action_mask``, ``roll``, ``agent_side``, ``legal_moves`` and ``illegal_action``;
    at the end of a game also ``winner``; in self-play also ``player``.

    ## Randomness
    The dice follow the core's game flow (:mod:`urgym.core`): after ``reset(seed=s)`` episode k rolls the
    dice of game k of seed s, the same rolls :class:`urgym.Game` (``Game(rules, s, k)``), the simulator and
    match play use; game k also fixes the agent's side when it is drawn, and the opponent agent's random
    choices: an agent (anything with ``select_moves``) is asked through that method and draws from the game's
    own policy stream, as it does in a batch. Without a seed, s is drawn from ``self.np_random``, which also
    reseeds an opponent agent (anything with ``reseed``) every episode. :class:`urgym.vector.UrVectorEnv` plays
    the same games, many at once.

    ## Version History
    - v2 (urgym 0.6): ``info["action_mask"]`` is int8, so ``action_space.sample(mask=info["action_mask"])``
      works; the mask of an ended episode is all ones (it was all zeros, on which a masked categorical policy
      fails at the first episode end); ``opponent="self"`` works in ``gymnasium.make`` as in ``make_vec``; the
      vector environment accepts ``AutoresetMode.DISABLED``. The games for a seed are v1's. ``urgym/Ur-v1`` is
      no longer registered: Gymnasium's ``make`` names ``urgym/Ur-v2`` when asked for it.
    - v1 (urgym 0.4 and 0.5): the behaviour v0 reached by urgym 0.3, under a new id, since v0's games for a seed changed
      three times: the dice of a seed follow the core's (seed, game) streams; an action that is not an integer
      (``0.7``, ``"1"``) is a ``ValueError`` instead of being truncated; a random built-in opponent draws only
      when it has a choice of moves; a drawn side and an opponent agent's random choices follow the (seed, game)
      streams; ``illegal_action="replace"`` exists. ``urgym/Ur-v0`` is no longer registered: Gymnasium's
      ``make`` names ``urgym/Ur-v1`` when asked for it.
    - v0 (urgym 0.1 to 0.3): initial version; its games for a seed changed in 0.2 and 0.3 as listed above.
    """

    metadata = {"render_modes": RENDER_MODES, "render_fps": 4}

    def __init__(
        self,
        rules: Rules | str = "finkel",
        pieces: int | None = None,
        opponent: Opponent = "random",
        agent_side: str = "light",
        illegal_action: str = "loss",
        render_mode: str | None = None,
        illegal_penalty: float = 0.0,
    ) -> None:
        self.rules = get_rules(rules, pieces)
        if agent_side not in AGENT_SIDES:
            raise ValueError(f"agent_side must be one of {AGENT_SIDES}, got {agent_side!r}")
        self.illegal_action, self.illegal_penalty = check_illegal_action(illegal_action, illegal_penalty)
        self.agent_side_option = agent_side
        self.render_mode = check_render_mode(render_mode)
        self.self_play = is_self_play(opponent)
        if self.self_play and agent_side != "light":
            raise ValueError(
                f"agent_side {agent_side!r} means nothing in self-play (opponent='self'): the learner plays both sides"
            )
        self._opponent_policy, self._opponent_callable = (
            (core.POLICY_EXTERNAL, None) if self.self_play else resolve_opponent(opponent)
        )
        self._opponent_agent = getattr(self._opponent_callable, "__self__", None)
        self._opponent_batch = getattr(self._opponent_agent, "select_moves", None)
        if hasattr(self._opponent_agent, "check_rules"):  # an agent that cannot play these rules fails here
            self._opponent_agent.check_rules(self.rules)
        if hasattr(self._opponent_agent, "prepare"):  # what it needs (a solved table) is had now, not in a step
            self._opponent_agent.prepare(self.rules)

        length = self.rules.length
        self.action_space = spaces.Discrete(length + 1)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(core.observation_size(self.rules),), dtype=np.float32)
        self._geom = core.geometry(self.rules)
        self._flow = core.flow_buffers(1)  # the game: position, decision, dice and policy streams, counters
        # Views of its fields, made once: reading a record's field from Python costs more than the step itself.
        self._flow_state, self._flow_roll, self._flow_moves = (
            self._flow["state"],
            self._flow["roll"],
            self._flow["moves"][0],
        )
        self._state = 0  # the position and roll after the last transition, as Python ints
        self._roll = 0
        self._dice_seed: int | None = None
        self._episode = 0
        self._policies = np.zeros(2, dtype=np.int64)
        self._obs = np.zeros(self.observation_space.shape, dtype=np.float32)
        self._started = False
        self._legal: list[int] = []
        self._mask = np.zeros(self.action_space.n, dtype=bool)
        self._agent = 0
        self._illegal = False

    # --- Gymnasium API ------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Start a new game (see the class docstring); return the observation and info."""
        if seed is not None:
            check_seed(seed)  # before Gymnasium's own check, so a bad seed is a ValueError naming what is allowed
        super().reset(seed=seed)
        if seed is not None or self._dice_seed is None:
            # Episode k of seed s rolls the dice of game k of seed s, as every loop of the package does.
            self._dice_seed = check_seed(seed) if seed is not None else int(self.np_random.integers(0, 2**63))
            self._episode = 0
        if hasattr(self._opponent_agent, "reseed"):
            self._opponent_agent.reseed(int(self.np_random.integers(0, 2**63)))
        self._illegal = False
        self._started = True
        while True:
            core.start_game(self._flow, 0, self.rules.pieces, np.uint64(self._dice_seed), self._episode)
            self._set_sides(self._episode)
            self._episode += 1
            self._run_until_agent_decision()
            if self._legal:
                break
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Play the agent's ``action`` and the opponent's moves up to the agent's next decision."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if not self._legal:
            raise RuntimeError("the episode has ended; call reset() to start a new one")
        action = action_index(action)
        reward, terminated = 0.0, False
        illegal = action not in self._legal
        if illegal and self.illegal_action == "raise":
            raise ValueError(f"illegal action {action} for roll {self.roll}; legal actions: {self._legal}")
        self._illegal = illegal
        if illegal:
            if self.illegal_action == "loss":
                self._legal = []
                core.write_observation(self._state, self._agent, 0, self._geom, self._obs)  # ended: no roll
                return self._observation(), -1.0, True, False, self._info()
            action = int(core.replacement_move(action, self._flow_moves, len(self._legal)))
            reward = -self.illegal_penalty
        self._run_until_agent_decision(action)
        if not self._legal:
            terminated = True
            reward += 1.0 if core.winner_of(self._state) == self._agent else -1.0
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, terminated, False, self._info()

    def render(self) -> str | np.ndarray | None:
        """Draw the board (``ansi``: text, ``rgb_array``: an image)."""
        decision = f"roll {self.roll}, legal moves {self._legal}" if self._legal else ""
        return render_frame(self.render_mode, self.position if self._started else None, decision)

    # --- masks and inspection -----------------------------------------------------------------------
    def action_masks(self) -> np.ndarray:
        """Boolean mask of the legal actions (all True once the episode has ended: see the class docstring)."""
        return self._mask.copy() if self._legal else np.ones(self.action_space.n, dtype=bool)

    @property
    def position(self) -> Position:
        """The current position."""
        if not self._started:
            raise RuntimeError("call reset() first")
        return Position(self.rules, self._state)

    @property
    def roll(self) -> int:
        """The roll the agent must play now (0 once the episode has ended)."""
        return self._roll if self._legal else 0

    @property
    def legal_moves(self) -> list[int]:
        """The legal moves of :attr:`roll` (empty once the episode has ended)."""
        return list(self._legal)

    @property
    def agent_side(self) -> str:
        """The side the agent plays in this game."""
        return SIDES[self._agent]

    # --- internals ----------------------------------------------------------------------------------
    def _run_until_agent_decision(self, move: int = -1) -> None:
        """Play the agent's ``move`` (-1: none), then the opponent's moves until the agent must decide.

        Or until the game ends; the observation is written on the way.
        """
        while True:
            n = core.advance_for(self._flow, 0, self._agent, move, self._policies, self._geom, self._obs)
            self._state, self._roll = int(self._flow_state[0]), int(self._flow_roll[0])
            mover = (self._state >> core.TURN_SHIFT) & 1
            if n == 0 or mover == self._agent:
                break
            if self.self_play:  # the other side is the learner too: its decision, seen from its side
                self._agent = mover
                core.write_observation(self._state, mover, self._roll, self._geom, self._obs)
                break
            move = self._ask_opponent(n)  # a Python opponent: played by the next call
        # Once per decision: step, action_masks and info all read these.
        self._legal = self._flow_moves[:n].tolist()
        self._mask = np.zeros(self.action_space.n, dtype=bool)
        self._mask[self._legal] = True

    def _set_sides(self, game: int) -> None:
        """The agent's side in game ``game`` of the dice seed, and both sides' policies."""
        if self.agent_side_option == "random":
            self._agent = int(core.episode_side(np.uint64(self._dice_seed), game))
        else:
            self._agent = SIDES.index(self.agent_side_option)
        self._policies[self._agent] = core.POLICY_EXTERNAL
        self._policies[1 - self._agent] = self._opponent_policy

    def _ask_opponent(self, n: int) -> int:
        legal = self._flow_moves[:n]
        if self._opponent_batch is not None:  # an agent: it draws from the game's own stream, as in a batch
            side = 1 - self._agent
            decisions = Decisions.single(
                self._state, self._roll, tuple(legal.tolist()), self._flow["policy_rngs"][0, side]
            )
            return int(
                check_choices(decisions, self._opponent_batch(self.rules, decisions), "the opponent", self.rules)[0]
            )
        move = self._opponent_callable(Position(self.rules, self._state), self._roll)
        if move not in legal:
            raise ValueError(
                f"the opponent chose illegal move {move!r} for roll {self._roll}; legal moves: {legal.tolist()}"
            )
        return int(move)

    def _observation(self) -> np.ndarray:
        return self._obs.copy()  # written by the last transition

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "action_mask": self.action_masks().view(np.int8),
            "roll": self.roll,
            "legal_moves": list(self._legal),
            "agent_side": self.agent_side,
            "illegal_action": self._illegal,
        }
        if self.self_play:
            info["player"] = self._agent
        if not self._legal:  # the episode has ended
            lost = self._illegal and self.illegal_action == "loss"
            info["winner"] = SIDES[1 - self._agent if lost else core.winner_of(self._state)]
        return info


def check_illegal_action(mode: str, penalty: float) -> tuple[str, float]:
    """The environments' ``illegal_action`` and ``illegal_penalty`` arguments, checked.

    Raises:
        ValueError: For an unknown mode, a penalty that is not a finite number >= 0, or a penalty with a mode
            other than ``"replace"`` (``"loss"`` already scores -1, ``"raise"`` never plays the action).
    """
    if mode not in ILLEGAL_ACTION_MODES:
        raise ValueError(f"illegal_action must be one of {ILLEGAL_ACTION_MODES}, got {mode!r}")
    if (
        isinstance(penalty, bool)
        or not isinstance(penalty, (int, float, np.integer, np.floating))
        or not 0.0 <= float(penalty) < float("inf")
    ):
        raise ValueError(f"illegal_penalty must be a finite number >= 0 (subtracted from the reward), got {penalty!r}")
    if penalty and mode != "replace":
        raise ValueError(
            f"illegal_penalty applies to illegal_action='replace' only, not {mode!r} (a 'loss' already scores -1)"
        )
    return mode, float(penalty)


def action_index(action: Any) -> int:
    """An action as an int: Python and numpy integers and 0-d integer arrays pass; anything else is refused.

    Raises:
        ValueError: For a float, a bool, a string, an array of several values and so on (never rounded).
    """
    value = action.item() if isinstance(action, np.ndarray) and action.shape == () else action
    return integer(value, "an action (a path position, 0 enters a piece)")


def is_self_play(opponent: Any) -> bool:
    """Whether ``opponent`` asks for two-player self-play (:data:`SELF_PLAY`)."""
    return isinstance(opponent, str) and opponent == SELF_PLAY


def resolve_opponent(opponent: Opponent) -> tuple[int, Callable[[Position, int], int] | None]:
    """(kernel policy id, Python callable): a built-in name runs in numba, anything else in Python.

    Raises:
        ValueError: For a spec no resolver knows, or an object that is neither a callable nor an agent.
    """
    if isinstance(opponent, str):
        if opponent in core.BUILTIN_POLICIES:
            return core.BUILTIN_POLICIES[opponent], None
        try:
            return core.POLICY_EXTERNAL, resolve_spec(opponent).select_move
        except ValueError as err:
            raise ValueError(
                f"bad opponent {opponent!r}: {err}; built-in policies are "
                f"{', '.join(core.BUILTIN_POLICIES)}; or pass a callable (position, roll) -> move "
                "or an agent with select_move"
            ) from None
    if hasattr(opponent, "select_move"):
        return core.POLICY_EXTERNAL, opponent.select_move
    if callable(opponent):
        return core.POLICY_EXTERNAL, opponent
    raise ValueError(f"opponent must be a policy name, a callable or an agent, got {type(opponent).__name__}")
