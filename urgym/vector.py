"""A native vector environment: many games of Ur stepped together in numba, on the core's batched game loop."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space
from numba import njit

from urgym import core
from urgym.batch import check_choices, decisions_of, return_streams
from urgym.checks import integer
from urgym.env import AGENT_SIDES, SELF_PLAY, Opponent, check_illegal_action, is_self_play, resolve_opponent
from urgym.game import check_seed
from urgym.position import SIDES, Position
from urgym.render import RENDER_MODES, check_render_mode, render_frame
from urgym.rules import Rules, get_rules

__all__ = ["SELF_PLAY", "UrVectorEnv"]

_POLICY_SELF = -2  # both sides external: every decision goes to the learner
_SIDE_RANDOM = 2
_MODES = {"loss": 0, "raise": 1, "replace": 2}
_LOSS = 0
# A seat's status: at or on its way to a learner decision, a new game without one yet, or an episode that ended.
_PLAYING, _STARTING, _ENDED = 0, 1, 2
_SIDE_NAMES = np.array(SIDES, dtype=object)
_AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED)


class Seats(NamedTuple):
    """Per environment: who plays what in its current game, and where its episode stands."""

    side: np.ndarray  # int64[N]: the learner's side (self-play: the side that moves, or moved last)
    seed: np.ndarray  # uint64[N]: the dice seed
    next_game: np.ndarray  # int64[N]: the next game of that seed an episode starts
    policies: np.ndarray  # int64[N, 2]: each side's kernel policy in the current game
    opponent: np.ndarray  # int64[N]: the opponent's kernel policy (a built-in, external, or self-play)
    status: np.ndarray  # int64[N]: _PLAYING, _STARTING or _ENDED
    elapsed: np.ndarray  # int64[N]: the learner's steps in the episode


class Settings(NamedTuple):
    """What every environment of the batch shares."""

    pieces: int
    side_rule: int  # 0 light, 1 dark, _SIDE_RANDOM
    illegal_mode: int  # a value of _MODES
    penalty: float
    max_steps: int  # 0: no truncation
    same_step: bool  # autoreset in the step that ends an episode


class Outputs(NamedTuple):
    """What a step or reset returns, written by the kernels (zeroed for every call)."""

    obs: np.ndarray  # float32[N, D]
    masks: np.ndarray  # bool[N, A]
    rolls: np.ndarray  # int64[N]
    rewards: np.ndarray  # float64[N]
    terminated: np.ndarray  # bool[N]
    truncated: np.ndarray  # bool[N]
    illegal: np.ndarray  # bool[N]
    ended: np.ndarray  # bool[N]: an episode ended in this call
    final: np.ndarray  # int64[N, 3]: an ended episode's winner (or -1), learner side and (same-step) last roll
    final_obs: np.ndarray  # float32[N, D]: an ended episode's last observation (same-step autoreset)
    final_masks: np.ndarray  # bool[N, A]: an ended episode's last mask (same-step autoreset)
    waiting: np.ndarray  # bool[N]: the game awaits an external opponent's move


# --- kernels: the batched game loop as the environment sees it ------------------------------------------------
@njit(cache=True)
def _begin(flows, seats, i, settings):
    """Start environment i's next game: the seed's next game, the learner's side, both sides' policies."""
    game = seats.next_game[i]
    seats.next_game[i] = game + 1
    core.start_game(flows, i, settings.pieces, seats.seed[i], game)
    side = settings.side_rule
    if side == _SIDE_RANDOM:
        side = core.episode_side(seats.seed[i], game)
    seats.side[i] = side
    opponent = seats.opponent[i]
    seats.policies[i, side] = core.POLICY_EXTERNAL
    seats.policies[i, 1 - side] = core.POLICY_EXTERNAL if opponent == _POLICY_SELF else opponent
    seats.status[i] = _STARTING
    seats.elapsed[i] = 0


@njit(cache=True)
def _finish(seats, i, winner, geom, state, settings, out):
    """End environment i's episode: the reward of the learner (self-play: of the side that moved last)."""
    side = seats.side[i]
    out.terminated[i] = True
    out.rewards[i] += 1.0 if winner == side else -1.0
    out.final[i, 0] = winner
    _close(seats, i, state, geom, settings, out)


@njit(cache=True)
def _close(seats, i, state, geom, settings, out):
    """A game ended: its last observation has no roll, its mask is all ones (UrEnv's rule for an ended episode)."""
    core.write_observation(state, seats.side[i], 0, geom, out.obs[i])
    out.masks[i, :] = True
    out.rolls[i] = 0
    _end(seats, i, settings, out)


@njit(cache=True)
def _end(seats, i, settings, out):
    """Environment i's episode ended (terminated or truncated) in this call."""
    out.ended[i] = True
    out.final[i, 1] = seats.side[i]
    seats.status[i] = _ENDED
    if settings.same_step:
        out.final_obs[i, :] = out.obs[i]
        out.final_masks[i, :] = out.masks[i]
        out.final[i, 2] = out.rolls[i]


@njit(cache=True, inline="always")
def _advance(flows, seats, i, geom, settings, out):
    """Advance environment i to the learner's next decision and write what the learner sees there.

    Its opponent's built-in moves and the dice are played, episodes end on the way and, with same-step autoreset,
    restart; it stops early where an external opponent must move (``out.waiting``). Inlined: the hot path of every step,
    where a call passing the bundles costs more than the work.
    """
    while True:
        f = flows[i]
        n = f.n if f.n > 0 else core.advance(flows, i, seats.policies[i], geom)  # an opponent's kernel may stop there
        if n > 0:
            mover = core.turn_of(f.state)
            if seats.opponent[i] == _POLICY_SELF:
                seats.side[i] = mover
            elif mover != seats.side[i]:
                out.waiting[i] = True
                return
            # the learner's decision: its observation and mask (as with TimeLimit, also where it is truncated)
            core.write_observation(f.state, seats.side[i], f.roll, geom, out.obs[i])
            for a in range(out.masks.shape[1]):
                out.masks[i, a] = False
            for k in range(n):
                out.masks[i, f.moves[k]] = True
            out.rolls[i] = f.roll
            seats.status[i] = _PLAYING
            if settings.max_steps == 0 or seats.elapsed[i] < settings.max_steps:  # not truncated here
                return
            _end(seats, i, settings, out)
            if not settings.same_step:
                return
        elif seats.status[i] == _STARTING:
            pass  # the game ended before the learner's first decision (one piece): play the seed's next game
        else:
            _finish(seats, i, core.winner_of(f.state), geom, f.state, settings, out)
            if not settings.same_step:
                return
        _begin(flows, seats, i, settings)


@njit(cache=True)
def step_envs(flows, seats, actions, geom, settings, out):
    """One step of every environment: an ended episode restarts (next-step autoreset).

    Any other plays its action (an illegal one as ``settings.illegal_mode`` says) and advances to the learner's next
    decision.
    """
    for i in range(flows.shape[0]):
        if seats.status[i] == _ENDED:
            _begin(flows, seats, i, settings)
            _advance(flows, seats, i, geom, settings, out)
            continue
        f = flows[i]
        action = actions[i]
        seats.elapsed[i] += 1
        out.truncated[i] = settings.max_steps > 0 and seats.elapsed[i] >= settings.max_steps
        if not core.is_legal(action, f.moves, f.n):
            out.illegal[i] = True
            if settings.illegal_mode == _LOSS:
                _finish(seats, i, 1 - seats.side[i], geom, f.state, settings, out)
                if settings.same_step:
                    _begin(flows, seats, i, settings)
                    _advance(flows, seats, i, geom, settings, out)
                continue
            action = core.replacement_move(action, f.moves, f.n)
            out.rewards[i] = -settings.penalty
        core.play_move(flows, i, action, geom)
        _advance(flows, seats, i, geom, settings, out)


@njit(cache=True)
def resume_envs(flows, seats, games, moves, geom, settings, out):
    """Play an external opponent's ``moves[j]`` in environment ``games[j]`` and advance it.

    ``-1``: it has moved already. The environment advances as :func:`step_envs` does.
    """
    for j in range(games.shape[0]):
        i = games[j]
        out.waiting[i] = False
        if moves[j] >= 0:
            core.play_move(flows, i, moves[j], geom)
        _advance(flows, seats, i, geom, settings, out)


@njit(cache=True)
def reset_envs(flows, seats, chosen, geom, settings, out):
    """Start the next game in every environment with ``chosen[i]`` and advance it to the learner's decision."""
    for i in range(flows.shape[0]):
        if chosen[i]:
            _begin(flows, seats, i, settings)
            _advance(flows, seats, i, geom, settings, out)


# --- the environment ------------------------------------------------------------------------------------------
class UrVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` games of the Royal Game of Ur against an opponent, stepped together in numba.

    The vector form of :class:`urgym.env.UrEnv` (the same arguments, spaces, rewards and games): registered as the
    vector entry point of ``urgym/Ur-v2``, so ``gymnasium.make_vec("urgym/Ur-v2", num_envs=1024)`` builds it.
    Every environment's game runs on the core's batched game loop (:mod:`urgym.core`); a step is one kernel call
    when the opponent is a built-in policy, and one more per round of an external opponent's moves otherwise.

    ## Spaces
    ``single_observation_space`` and ``single_action_space`` are :class:`UrEnv`'s; observations come as one
    float32 array ``[num_envs, 2 L + 4 + R]`` and actions as an integer array ``[num_envs]``.

    ## Opponents
    - a built-in policy name (``"random"``, ``"first"``, ``"last"``, ``"greedy"``): played inside the kernel;
    - ``"self"``: two-player self-play. Both sides are the learner: every decision of either side is a step,
      each observation is from the mover's side, ``info["player"]`` says which side that is (0 light, 1 dark)
      and a step's reward is for the side that took it (+1 when its move won, -1 for an illegal action under
      ``illegal_action="loss"``);
    - any other agent spec or agent (``"perfect"``, ``"expectimax:3"``, an SB3 policy ...): asked once per round
      for every game awaiting it (``select_moves``), or inside its own kernel where it offers ``play_turns``
      (``perfect`` does); a callable ``(position, roll) -> move`` is asked per decision;
    - a sequence of ``num_envs`` of these: environment i plays the i-th (each distinct one is built once).

    Agents are shared by the environments that play them; their random choices come from each game's own stream
    (``Decisions.rngs``), so a game is the same as in a single :class:`UrEnv`.

    ## Autoreset and seeding
    Gymnasium 1.x next-step autoreset by default (``metadata["autoreset_mode"]``): the step after an episode ends
    ignores that environment's action and returns its new episode's first observation with reward 0; pass
    ``autoreset_mode=AutoresetMode.SAME_STEP`` (what stable-baselines3 expects) to restart in the same step, the
    last observation in ``info["final_obs"]`` and its info in ``info["final_info"]``, or
    ``autoreset_mode=AutoresetMode.DISABLED`` to restart only what ``reset(options={"reset_mask": mask})`` names
    (stepping an environment whose episode has ended is then a ``RuntimeError``, as it is for ``UrEnv``; the
    reset returns every environment's observation, the others' unchanged). ``reset(seed=s)`` seeds
    environment i with ``s + i``, as :class:`gymnasium.vector.SyncVectorEnv` does, and environment i then plays
    exactly the games of ``UrEnv`` reset with seed ``s + i``: observations, rewards, terminations, masks and info.

    ## Info
    Arrays over the environments with Gymnasium's ``_key`` masks: ``action_mask`` (int8, as ``UrEnv``'s; all
    ones where an episode has ended; :meth:`action_masks` gives it as bool; ``action_space.sample`` takes it as
    ``mask=tuple(info["action_mask"])``), ``roll``, ``agent_side``, ``illegal_action``, ``winner`` (where an
    episode ended with a winner) and, in self-play, ``player``. ``UrEnv``'s ``legal_moves`` lists are left out
    (they are the mask's true entries, and building thousands of lists would cost more than the step).

    ## Arguments
    ``num_envs`` and every :class:`UrEnv` argument (``rules``, ``pieces``, ``opponent``, ``agent_side``,
    ``illegal_action``, ``illegal_penalty``, ``render_mode``), plus ``autoreset_mode`` and ``max_episode_steps``
    (truncate after that many learner steps, as ``gymnasium.wrappers.TimeLimit`` does: the last observation and
    mask are the decision's own).
    """

    metadata = {"render_modes": RENDER_MODES, "render_fps": 4, "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        num_envs: int = 1,
        rules: Rules | str = "finkel",
        pieces: int | None = None,
        opponent: Opponent | Sequence[Opponent] = "random",
        agent_side: str = "light",
        illegal_action: str = "loss",
        render_mode: str | None = None,
        illegal_penalty: float = 0.0,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        max_episode_steps: int | None = None,
    ) -> None:
        self.num_envs = integer(num_envs, "num_envs (the environments stepped together)", low=1)
        self.rules = get_rules(rules, pieces)
        if agent_side not in AGENT_SIDES:
            raise ValueError(f"agent_side must be one of {AGENT_SIDES}, got {agent_side!r}")
        self.illegal_action, self.illegal_penalty = check_illegal_action(illegal_action, illegal_penalty)
        self.render_mode = check_render_mode(render_mode)
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.max_episode_steps = (
            None if max_episode_steps is None else integer(max_episode_steps, "max_episode_steps", low=1)
        )
        self.self_play = is_self_play(opponent)
        if self.self_play and agent_side != "light":
            raise ValueError(
                f"agent_side {agent_side!r} means nothing in self-play (opponent='self'): the learner plays both sides"
            )
        self.agent_side_option = agent_side

        observations = core.observation_size(self.rules)
        self.single_action_space = spaces.Discrete(self.rules.length + 1)
        self.single_observation_space = spaces.Box(0.0, 1.0, shape=(observations,), dtype=np.float32)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)

        self._geom = core.geometry(self.rules)
        self._flows = core.flow_buffers(self.num_envs)
        n = self.num_envs
        self._seats = Seats(
            np.zeros(n, np.int64),
            np.zeros(n, np.uint64),
            np.zeros(n, np.int64),
            np.zeros((n, 2), np.int64),
            np.zeros(n, np.int64),
            np.full(n, _ENDED, np.int64),
            np.zeros(n, np.int64),
        )
        self._opponents = self._set_opponents(opponent)
        self._settings = Settings(
            self.rules.pieces,
            _SIDE_RANDOM if agent_side == "random" else SIDES.index(agent_side),
            _MODES[self.illegal_action],
            self.illegal_penalty,
            self.max_episode_steps or 0,
            self.autoreset_mode == AutoresetMode.SAME_STEP,
        )
        self._out: Outputs | None = None
        self._ones = np.ones(n, dtype=bool)

    # --- Gymnasium API ------------------------------------------------------------------------------------
    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start new games in every environment; return the observations and infos."""
        chosen = self._reset_mask(options)
        seeds = self._seeds(seed)
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            super().reset(seed=int(seed))
        for i in np.flatnonzero(chosen):
            if seeds[i] is not None:
                self._seats.seed[i], self._seats.next_game[i] = seeds[i], 0
            elif self._out is None:  # never seeded: draw the dice seed, as UrEnv does
                self._seats.seed[i], self._seats.next_game[i] = self.np_random.integers(0, 2**63), 0
        out = self._outputs()
        reset_envs(self._flows, self._seats, chosen, self._geom, self._settings, out)
        self._serve_opponents(out)
        if self._out is not None and not chosen.all():  # a partial reset keeps the others' observations
            keep = ~chosen
            out.obs[keep], out.masks[keep], out.rolls[keep] = (
                self._out.obs[keep],
                self._out.masks[keep],
                self._out.rolls[keep],
            )
        self._out = out
        self._human()
        return out.obs, self._info(out, chosen)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Play every environment's action and advance each to its next decision."""
        if self._out is None:
            raise RuntimeError("call reset() before step()")
        actions = self._actions(actions)
        if self.autoreset_mode == AutoresetMode.DISABLED:
            ended = np.flatnonzero(self._seats.status == _ENDED)
            if len(ended):
                raise RuntimeError(
                    f"the episodes of environments {ended[:10].tolist()}{' ...' if len(ended) > 10 else ''} have "
                    "ended and autoreset is disabled: reset them with reset(options={'reset_mask': mask}) first"
                )
        out = self._outputs()
        step_envs(self._flows, self._seats, actions, self._geom, self._settings, out)
        self._serve_opponents(out)
        self._out = out
        self._human()
        return out.obs, out.rewards, out.terminated, out.truncated, self._info(out, self._ones)

    def render(self) -> tuple[Any, ...] | None:
        """Each environment's frame (``UrEnv.render``'s), as a tuple; ``"human"`` prints them."""
        if self._out is None:
            return render_frame(self.render_mode, None) if self.render_mode else None
        frames = tuple(
            render_frame(self.render_mode, self.position(i), self._decision_line(i)) for i in range(self.num_envs)
        )
        return None if self.render_mode in (None, "human") else frames

    # --- masks and inspection -----------------------------------------------------------------------------
    def action_masks(self) -> np.ndarray:
        """Boolean masks of the legal actions, ``[num_envs, L + 1]`` (all True where an episode has ended)."""
        if self._out is None:
            raise RuntimeError("call reset() first")
        return self._out.masks.copy()

    def position(self, i: int) -> Position:
        """Environment i's current position."""
        if self._out is None:
            raise RuntimeError("call reset() first")
        return Position(self.rules, int(self._flows["state"][integer(i, "an environment index", 0, self.num_envs - 1)]))

    @property
    def agent_sides(self) -> np.ndarray:
        """The learner's side in each environment's current game (0 light, 1 dark; self-play: the side to move)."""
        return self._seats.side.copy()

    # --- internals ----------------------------------------------------------------------------------------
    def _set_opponents(self, opponent: Opponent | Sequence[Opponent]) -> list[tuple[Any, Any, np.ndarray]]:
        """Resolve the opponents; return the external ones as (agent, callable, environments)."""
        if isinstance(opponent, (list, tuple)):
            if len(opponent) != self.num_envs:
                raise ValueError(
                    f"a list of opponents needs one per environment ({self.num_envs}), got {len(opponent)}"
                )
            per_env = list(opponent)
        else:
            per_env = [opponent] * self.num_envs
        if any(is_self_play(o) for o in per_env) and not all(is_self_play(o) for o in per_env):
            raise ValueError("opponent 'self' (self-play) is for every environment or none")
        built: dict[Any, tuple[int, Any, Any]] = {}
        groups: dict[Any, list[int]] = {}
        for i, spec in enumerate(per_env):
            key = spec if isinstance(spec, str) else id(spec)
            if key not in built:
                built[key] = (_POLICY_SELF, None, None) if is_self_play(spec) else self._resolve(spec)
            policy = built[key][0]
            self._seats.opponent[i] = policy
            if policy == core.POLICY_EXTERNAL:
                groups.setdefault(key, []).append(i)
        return [(built[key][1], built[key][2], np.array(envs, dtype=np.int64)) for key, envs in groups.items()]

    def _resolve(self, spec: Opponent) -> tuple[int, Any, Any]:
        policy, call = resolve_opponent(spec)
        agent = getattr(call, "__self__", None)
        if hasattr(agent, "check_rules"):
            agent.check_rules(self.rules)
        if hasattr(agent, "prepare"):  # what it needs (a solved table) is had now, not in a step
            agent.prepare(self.rules)
        return policy, agent, call

    def _serve_opponents(self, out: Outputs) -> None:
        """Ask the external opponents for the moves of every game awaiting one.

        Round after round, until every game stands at a learner decision.
        """
        while out.waiting.any():
            waiting = np.flatnonzero(out.waiting)
            games, moves = [], []
            for agent, call, envs in self._opponents:
                mine = waiting[np.isin(waiting, envs, assume_unique=True)] if len(self._opponents) > 1 else waiting
                if len(mine):
                    games.append(mine)
                    moves.append(self._opponent_moves(agent, call, mine))
            resume_envs(
                self._flows, self._seats, np.concatenate(games), np.concatenate(moves), self._geom, self._settings, out
            )

    def _opponent_moves(self, agent: Any, call: Any, games: np.ndarray) -> np.ndarray:
        sides = 1 - self._seats.side[games]
        if hasattr(agent, "play_turns"):  # it plays inside its own kernel
            agent.play_turns(self.rules, self._flows, games, sides, self._seats.policies)
            return np.full(len(games), -1, dtype=np.int64)
        decisions = decisions_of(self._flows, games, sides)
        if hasattr(agent, "select_moves"):
            moves = check_choices(decisions, agent.select_moves(self.rules, decisions), "the opponent", self.rules)
            return_streams(self._flows, games, sides, decisions)
            return moves
        chosen = np.array([call(decisions.position(self.rules, j), int(decisions.rolls[j])) for j in range(len(games))])
        return check_choices(decisions, chosen, "the opponent", self.rules)

    def _outputs(self) -> Outputs:
        n, observations, actions = self.num_envs, self.single_observation_space.shape[0], self.single_action_space.n
        finals = n if self._settings.same_step else 1  # final_obs and final_masks serve same-step autoreset only
        return Outputs(
            np.zeros((n, observations), np.float32),
            np.zeros((n, actions), bool),
            np.zeros(n, np.int64),
            np.zeros(n, np.float64),
            np.zeros(n, bool),
            np.zeros(n, bool),
            np.zeros(n, bool),
            np.zeros(n, bool),
            np.zeros((n, 3), np.int64),
            np.zeros((finals, observations), np.float32),
            np.zeros((finals, actions), bool),
            np.zeros(n, bool),
        )

    def _actions(self, actions: Any) -> np.ndarray:
        array = np.asarray(actions)
        if array.shape != (self.num_envs,) or not (np.issubdtype(array.dtype, np.integer) and array.dtype != bool):
            raise ValueError(
                f"actions must be {self.num_envs} integers (path positions, 0 enters a piece), one per "
                f"environment; got {array.dtype} of shape {array.shape}"
            )
        array = array.astype(np.int64, copy=False)
        if self.illegal_action == "raise":
            playing = self._seats.status != _ENDED
            inside = (array >= 0) & (array < self.single_action_space.n)
            legal = inside & self._out.masks[np.arange(self.num_envs), np.where(inside, array, 0)]
            bad = np.flatnonzero(playing & ~legal)
            if len(bad):
                i = int(bad[0])
                raise ValueError(
                    f"illegal action {int(array[i])} in environment {i} for roll "
                    f"{int(self._out.rolls[i])}; legal actions: "
                    f"{np.flatnonzero(self._out.masks[i]).tolist()} ({len(bad)} environments had an "
                    "illegal action; nothing was played)"
                )
        return array

    def _reset_mask(self, options: dict[str, Any] | None) -> np.ndarray:
        mask = (options or {}).get("reset_mask")
        if mask is None:
            return self._ones.copy()
        if self._out is None:
            raise ValueError("options['reset_mask'] needs a first reset of every environment")
        mask = np.asarray(mask)
        if mask.shape != (self.num_envs,) or mask.dtype != bool or not mask.any():
            raise ValueError(
                f"options['reset_mask'] must be a bool array of shape ({self.num_envs},) with at least "
                f"one True, got {mask.dtype} of shape {mask.shape}"
            )
        return mask

    def _seeds(self, seed: int | Sequence[int | None] | None) -> list[int | None]:
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            check_seed(int(seed))
            check_seed(int(seed) + self.num_envs - 1, f"seed + {self.num_envs - 1} (the last environment's seed)")
            return [int(seed) + i for i in range(self.num_envs)]
        if isinstance(seed, (str, bytes)) or not isinstance(seed, Sequence) or len(seed) != self.num_envs:
            raise ValueError(
                f"seed must be None, an int (environment i gets seed + i) or a list of {self.num_envs} "
                f"seeds (ints or None), got {seed!r}"
            )
        return [None if s is None else check_seed(s) for s in seed]

    def _info(self, out: Outputs, present: np.ndarray) -> dict[str, Any]:
        info: dict[str, Any] = {}
        illegal = out.illegal & ~out.ended if self._settings.same_step else out.illegal
        _put(info, "action_mask", out.masks.view(np.int8), present)
        _put(info, "roll", out.rolls, present)
        _put(info, "agent_side", _SIDE_NAMES[self._seats.side], present)
        _put(info, "illegal_action", illegal, present)
        if self.self_play:
            _put(info, "player", self._seats.side.copy(), present)
        won = out.terminated & present
        if self._settings.same_step:
            if out.ended.any():
                info["final_obs"] = _objects(out.final_obs, out.ended)
                info["_final_obs"] = out.ended.copy()
                info["final_info"] = self._final_info(out)
                info["_final_info"] = out.ended.copy()
        elif won.any():
            _put(info, "winner", _winners(out.final[:, 0], won), won)
        return info

    def _final_info(self, out: Outputs) -> dict[str, Any]:
        ended = out.ended
        info: dict[str, Any] = {}
        _put(info, "action_mask", np.where(ended[:, None], out.final_masks, False).view(np.int8), ended)
        _put(info, "roll", np.where(ended, out.final[:, 2], 0), ended)
        _put(info, "agent_side", np.where(ended, _SIDE_NAMES[out.final[:, 1]], None), ended)
        _put(info, "illegal_action", out.illegal & ended, ended)
        if self.self_play:
            _put(info, "player", np.where(ended, out.final[:, 1], 0), ended)
        won = out.terminated & ended
        if won.any():
            _put(info, "winner", _winners(out.final[:, 0], won), won)
        return info

    def _decision_line(self, i: int) -> str:
        if self._out.rolls[i] == 0:  # the episode has ended
            return ""
        return f"roll {int(self._out.rolls[i])}, legal moves {np.flatnonzero(self._out.masks[i]).tolist()}"

    def _human(self) -> None:
        if self.render_mode == "human":
            self.render()


def _put(info: dict[str, Any], key: str, values: np.ndarray, present: np.ndarray) -> None:
    info[key], info[f"_{key}"] = values, present.copy()


def _objects(rows: np.ndarray, where: np.ndarray) -> np.ndarray:
    array = np.full(len(where), None, dtype=object)
    for i in np.flatnonzero(where):
        array[i] = rows[i].copy()
    return array


def _winners(winners: np.ndarray, where: np.ndarray) -> np.ndarray:
    array = np.full(len(where), None, dtype=object)
    array[where] = _SIDE_NAMES[winners[where]]
    return array


def _autoreset_mode(mode: AutoresetMode | str) -> AutoresetMode:
    try:
        mode = AutoresetMode(mode)
    except ValueError:
        mode = None
    if mode not in _AUTORESET_MODES:
        raise ValueError(f"autoreset_mode must be one of {[m.value for m in _AUTORESET_MODES]}, got {mode!r}")
    return mode
