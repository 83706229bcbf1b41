"""Baseline agents: random, first, last and greedy, running the numba policies of the rules core."""

from __future__ import annotations

import numpy as np
from urgym.agents.base import Agent, one_hot_choices

from urgym import Position, Rules, core
from urgym.batch import Decisions
from urgym.core import geometry

__all__ = ["BASELINE_DESCRIPTIONS", "BaselineAgent"]

BASELINE_DESCRIPTIONS = {
    "random": "a uniformly random legal move",
    "first": "move the least advanced piece (entering a piece counts as least advanced)",
    "last": "move the most advanced piece",
    "greedy": "capture if possible, else land on a rosette, else move the most advanced piece",
}


class BaselineAgent(Agent):
    """One of the simulator's built-in policies (:data:`BASELINE_DESCRIPTIONS`) as an agent."""

    def __init__(self, policy: str, seed: int | None = None) -> None:
        if policy not in core.BUILTIN_POLICIES:
            raise ValueError(f"unknown baseline {policy!r}; baselines: {', '.join(core.BUILTIN_POLICIES)}")
        self.policy = policy
        self.spec = policy
        self._policy_id = core.BUILTIN_POLICIES[policy]
        self.randomizes = policy == "random"
        self._rng_state = np.zeros(1, dtype=np.uint64)
        super().__init__(seed)

    def reseed(self, seed: int | None) -> None:
        """Restart the agent's random stream (the numba policy's too) from ``seed``."""
        super().reseed(seed)
        self._rng_state[0] = np.uint64(self.rng.integers(0, 2**63))

    def select_move(self, position: Position, roll: int) -> int:
        """The policy's move (see :meth:`Agent.select_move`)."""
        return self.select_one(position, roll, self._rng_state)

    def select_moves(self, rules: Rules, decisions: Decisions) -> np.ndarray:
        """The policy's move for every decision, in numba, each drawing from its own stream."""
        out = np.empty(len(decisions), dtype=np.int64)
        core.policy_choices(self._policy_id, decisions, geometry(rules), out)
        return out

    def move_probabilities(self, rules: Rules, decisions: Decisions) -> np.ndarray:
        """Every legal move's chance: uniform for ``random``, all on the policy's move for the others."""
        if self.randomizes:
            legal = np.arange(core.MAX_MOVES)[None, :] < decisions.counts[:, None]
            return legal / decisions.counts[:, None]
        return one_hot_choices(decisions, self.select_moves(rules, decisions))
