"""PettingZoo AEC environment: two agents, ``light`` and ``dark``, play each other (needs the ``pettingzoo`` extra).

Build one with :func:`env` (wrapped in PettingZoo's order-enforcing checks) or :class:`raw_env`::

    from urgym.multiagent import env

    game = env(rules="finkel", render_mode="ansi")
    game.reset(seed=0)
    for agent in game.agent_iter():
        observation, reward, termination, truncation, info = game.last()
        action = None if termination or truncation else game.action_space(agent).sample(observation["action_mask"])
        game.step(action)

Each agent's turn is one decision: the dice are rolled by the environment (the core's game flow, game k of
the seed after ``reset(seed=s)``, as in :class:`urgym.Game`), rolls with no legal move pass by themselves,
and after a rosette (or a capture, where the rules grant it) the same agent is selected again.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from urgym import core
from urgym.env import action_index
from urgym.files import require_extra
from urgym.game import check_seed
from urgym.position import SIDES, Position
from urgym.render import RENDER_MODES, check_render_mode, render_frame
from urgym.rules import Rules, get_rules

AECEnv = require_extra("pettingzoo", "pettingzoo", "the PettingZoo environment").AECEnv
wrappers = require_extra("pettingzoo.utils.wrappers", "pettingzoo", "the PettingZoo environment")

__all__ = ["env", "raw_env"]


def env(**kwargs: Any) -> AECEnv:
    """The AEC environment wrapped in PettingZoo's order-enforcing checks (keyword arguments: :class:`raw_env`)."""
    return _OrderEnforcing(raw_env(**kwargs))


class _OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order checks, with misuse raised as errors.

    ``last()`` before ``reset()`` (PettingZoo's own check gives an ``AttributeError`` about ``agent_selection``) and
    ``step()`` once every agent has stepped out (PettingZoo only logs a warning and does nothing).
    """

    def last(self, observe: bool = True):
        if not self._has_reset:
            raise RuntimeError("call reset() before last()")
        return super().last(observe)

    def step(self, action: Any) -> None:
        if self._has_reset and not self.agents:
            raise RuntimeError("the game is over and every agent has stepped out; call reset() to play again")
        super().step(action)


class raw_env(AECEnv):  # noqa: N801 (PettingZoo's naming convention)
    """The Royal Game of Ur for two agents, ``"light"`` (moves first) and ``"dark"``.

    ## Observation Space
    ``Dict(observation=Box(0, 1, (2 L + 4 + R,), float32), action_mask=Box(0, 1, (L + 1,), int8))``: the
    Gymnasium environment's observation from the agent's own side (:func:`urgym.core.write_observation`),
    with the roll one-hot only for the agent to move, and the mask of its legal actions (all zero for the
    agent not to move and once the game is over).

    ## Action Space
    ``Discrete(L + 1)``: the path position of the piece to move, 0 entering a piece. An illegal action raises
    ``ValueError`` naming the legal ones (use the mask).

    ## Rewards
    +1 to the winner and -1 to the loser when the game ends, 0 otherwise.

    ## Arguments
    ``rules`` (a rule-set name or :class:`urgym.Rules`, default ``"finkel"``), ``pieces`` (default: the rule
    set's), ``render_mode`` (``"ansi"``, ``"rgb_array"`` or ``"human"``, as the Gymnasium environment's).

    ## Version History
    - ur_v1 (urgym 0.4): numbered with the Gymnasium environment's v1, whose rule and dice changes it shares
      (the dice of a seed follow the core's (seed, game) streams, non-integer actions are refused).
    - ur_v0 (urgym 0.1 to 0.3): initial version.
    """

    metadata = {"render_modes": RENDER_MODES, "name": "ur_v1", "is_parallelizable": False, "render_fps": 4}

    def __init__(
        self, rules: Rules | str = "finkel", pieces: int | None = None, render_mode: str | None = None
    ) -> None:
        super().__init__()
        self.rules = get_rules(rules, pieces)
        self.render_mode = check_render_mode(render_mode)
        self.possible_agents = list(SIDES)
        n_actions = self.rules.length + 1
        observation = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, shape=(core.observation_size(self.rules),), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(n_actions,), dtype=np.int8),
            }
        )
        self.observation_spaces = {agent: observation for agent in self.possible_agents}
        self.action_spaces = {agent: spaces.Discrete(n_actions) for agent in self.possible_agents}
        self._geom = core.geometry(self.rules)
        self._flow = core.flow_buffers(1)  # the game; _state, _roll, _n_moves and _moves mirror it
        # Views of its fields, made once: reading a record's field from Python costs more than the step itself.
        self._flow_state, self._flow_roll, self._moves = self._flow["state"], self._flow["roll"], self._flow["moves"][0]
        self._seed: int | None = None
        self._episode = 0
        self._state = -1
        self._roll = 0
        self._n_moves = 0
        self._mask = np.zeros(n_actions, dtype=np.int8)  # legal actions of the agent to move
        self._observation_size = core.observation_size(self.rules)

    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of ``agent``."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """The action space of ``agent``."""
        return self.action_spaces[agent]

    # --- AEC API ------------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game."""
        if seed is not None:
            self._seed, self._episode = check_seed(seed), 0
        elif self._seed is None:
            self._seed = int(np.random.default_rng().integers(2**63))
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict] = {agent: {} for agent in self.agents}
        core.start_game(self._flow, 0, self.rules.pieces, np.uint64(self._seed), self._episode)
        self._episode += 1
        self._roll_until_decision()
        if self.render_mode == "human":
            self.render()

    def last(self, observe: bool = True):
        """The current agent's observation, reward, termination, truncation and info."""
        if self._state < 0:
            raise RuntimeError("call reset() before last()")
        return super().last(observe)

    def step(self, action: int | None) -> None:
        """Play the current agent's ``action`` (None once it is done)."""
        if self._state < 0:
            raise RuntimeError("call reset() before step()")
        if not self.agents:
            raise RuntimeError("the game is over and every agent has stepped out; call reset() to play again")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} must act (None is only for agents whose game has ended)")
        move = action_index(action)
        if not (0 <= move < self._mask.shape[0] and self._mask[move]):
            raise ValueError(
                f"illegal action {move} for {agent} with roll {self._roll}; legal actions: "
                f"{self._moves[: self._n_moves].tolist()}"
            )
        self._cumulative_rewards[agent] = 0.0
        core.play_move(self._flow, 0, move, self._geom)
        self._roll_until_decision()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """What ``agent`` observes: the observation and its action mask."""
        if self._state < 0:
            raise RuntimeError("call reset() before observe()")
        to_move = agent == self.agent_selection and self._n_moves > 0
        observation = np.empty(self._observation_size, dtype=np.float32)
        core.write_observation(self._state, SIDES.index(agent), self._roll if to_move else 0, self._geom, observation)
        mask = self._mask.copy() if to_move else np.zeros_like(self._mask)
        return {"observation": observation, "action_mask": mask}

    def render(self) -> str | np.ndarray | None:
        """Draw the board (``ansi``: text, ``rgb_array``: an image)."""
        decision = (
            f"{self.agent_selection} rolled {self._roll}, legal moves {self._moves[: self._n_moves].tolist()}"
            if self._n_moves
            else ""
        )
        return render_frame(self.render_mode, self.position if self._state >= 0 else None, decision)

    def close(self) -> None:
        """Nothing to release."""
        pass

    # --- inspection ---------------------------------------------------------------------------------
    @property
    def position(self) -> Position:
        """The current position."""
        if self._state < 0:
            raise RuntimeError("call reset() first")
        return Position(self.rules, self._state)

    @property
    def roll(self) -> int:
        """The roll the selected agent must play (0 once the game is over)."""
        return self._roll

    # --- internals ----------------------------------------------------------------------------------
    def _roll_until_decision(self) -> None:
        self._n_moves = core.next_decision(self._flow, 0, self._geom)
        self._state, self._roll = int(self._flow_state[0]), int(self._flow_roll[0])
        self.agent_selection = SIDES[core.turn_of(self._state)]
        self._mask[:] = 0
        self._mask[self._moves[: self._n_moves]] = 1
        for agent in self.agents:
            self.infos[agent] = {"roll": self._roll if agent == self.agent_selection else 0}
        if self._n_moves == 0:
            winner = SIDES[core.winner_of(self._state)]
            for agent in self.agents:
                self.rewards[agent] = 1.0 if agent == winner else -1.0
                self.terminations[agent] = True
                self.infos[agent]["winner"] = winner
            self.agent_selection = winner  # each agent is then stepped with None once, as PettingZoo asks
