"""Value networks as agents.

:class:`NeuralAgent` plays one alone (depth 0) or at the leaves of urgym's one expectiminimax
(:mod:`urgym.agents.search`), and :class:`NetworkEstimate` answers hint questions with one.

A move's worth to its mover is 1 if it wins, V(s') if it keeps the turn (an extra roll) and 1 - V(s') if it passes
it, V being the network's winning chance (:mod:`urgym.agents.networks.value`). Depth N looks N plies beyond the move,
so ``neural:N`` sees as far as ``expectimax:N+1`` (whose depth counts the root decision too).
Inference runs in numba, from numpy arrays: playing a network needs no torch.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from numba import njit
from urgym.agents import search
from urgym.agents.models import shipped_model
from urgym.agents.networks.value import ACTIVATIONS, MAX_NETWORK_BYTES, ValueNetwork, network_values
from urgym.agents.search import SearchContext
from urgym.agents.search_agent import SearchAgent

from urgym import Position, Rules, core
from urgym.batch import Decisions
from urgym.checks import integer
from urgym.core import geometry

__all__ = [
    "ACTIVATIONS",
    "MAX_NETWORK_BYTES",
    "NetworkEstimate",
    "NeuralAgent",
    "ValueNetwork",
    "network_values",
    "selfplay_context",
    "selfplay_targets",
    "shipped_estimate",
    "table_search_choices",
]

MAX_DEPTH = 8
"""The deepest search a value network plays at (plies beyond the move)."""


def _network_context(network: ValueNetwork, depth: int, tt_bits: int = 16, prune: bool = True) -> SearchContext:
    return search.search_context(
        geometry(network.rules), search.network_evaluation(network.arrays()), depth, tt_bits, prune
    )


MAX_TRAJECTORY = 4096
"""Chance nodes of one self-play game kept for its lambda-returns (a longer game's are not kept)."""


@njit(cache=True, nogil=True)
def selfplay_targets(flows, ctx, epsilon, lam, keep, pick, states, targets, found):
    """Self-play the started games of ``flows`` and record their chance nodes with their targets.

    Each game is played with the network of ``ctx`` (its best after-state, or with chance ``epsilon`` a random other
    move, drawn from the game's policy stream); once it ends, its chance nodes (each kept with chance ``keep``) are
    recorded with their targets, until ``states`` is full. Returns how many games were recorded.

    A chance node's target is the lambda-return of one-ply expectations: G_t = (1 - lam) W(s_t, 1) + lam G_{t+1},
    with G_{t+1} seen from s_t's roller (1 - G_{t+1} when the turn passed) and the game's result after the last
    node. ``lam`` = 0 gives W(s_t, 1) alone (expected TD(0)); larger values carry the result back faster.
    """
    geom = ctx.geom
    values = np.zeros(core.MAX_MOVES, np.float64)
    path = np.zeros(MAX_TRAJECTORY, np.int64)
    expected = np.zeros(MAX_TRAJECTORY, np.float64)
    wanted = states.shape[0]
    done = 0
    for i in range(flows.shape[0]):
        f = flows[i]
        length = 0
        while not core.is_over(f.state):
            if length < MAX_TRAJECTORY:
                path[length] = f.state
                expected[length] = search.chance_value(f.state, 1, 0.0, 1.0, ctx)
            length += 1
            if core.roll_turn(flows, i, geom) == 0:
                continue
            k = 0 if f.n == 1 else search.choose(f.state, f.roll, f.moves, f.n, 0, ctx, values, True)
            k = core.slip(k, f.n, epsilon, f.policy_rngs[core.turn_of(f.state)])
            core.play_move(flows, i, f.moves[k], geom)
        if length > MAX_TRAJECTORY:
            continue
        winner = core.winner_of(f.state)
        following = 0.0
        for t in range(length - 1, -1, -1):  # back from the result
            mover = core.turn_of(path[t])
            if t == length - 1:
                after = 1.0 if winner == mover else 0.0
            else:
                after = following if core.turn_of(path[t + 1]) == mover else 1.0 - following
            following = (1.0 - lam) * expected[t] + lam * after
            if found[0] < wanted and core.next_uniform(pick) < keep:
                states[found[0]] = path[t]
                targets[found[0]] = following
                found[0] += 1
        done += 1
        if found[0] >= wanted:
            break
    return done


def selfplay_context(network: ValueNetwork) -> SearchContext:
    """A search context of ``network`` without pruning (for :func:`selfplay_targets`: exact expectations)."""
    return _network_context(network, 1, 10, prune=False)


# --- shipped models and the agent ---------------------------------------------------------------------------------
def shipped_estimate(rules: Rules, depth: int = 2) -> NetworkEstimate | None:
    """The shipped network of ``rules`` as a :class:`NetworkEstimate`, None when none plays them."""
    try:
        return NetworkEstimate(ValueNetwork.load(shipped_model(rules)), depth)
    except ValueError:
        return None


class NeuralAgent(SearchAgent):
    """Plays an after-state value network, alone (``depth=0``) or at the leaves of an expectiminimax search.

    Args:
        model: A network file (:meth:`ValueNetwork.save`, e.g. from ``train --algo distill``), a
            :class:`ValueNetwork`, or None: the shipped network of the rules the agent is asked to play.
        depth: Plies searched beyond the move (0: the best after-state value).
        threads: Threads answering a batch of decisions (each with its own search state, about 3 MB); 0: every
            core; at most :data:`urgym.agents.search_agent.MAX_THREADS`.
        tt_bits: log2 of the transposition table's entries (per thread).
        prune: Prune the search (Star1, alpha-beta, transpositions); never changes the move.
        seed: Unused (the agent is deterministic); accepted like every agent's.
    """

    RULES_MISMATCH = "this network learned {learned!r}, not {asked!r}"
    """The error when a network plays rules it did not learn."""

    def __init__(
        self,
        model: str | os.PathLike | ValueNetwork | None = None,
        depth: int = 0,
        threads: int = 0,
        tt_bits: int = 16,
        prune: bool = True,
        seed: int | None = None,
        name: str = "neural",
    ) -> None:
        integer(depth, "depth", 0, MAX_DEPTH)
        integer(tt_bits, "tt_bits", 8, 26)
        self.depth = int(depth)
        self._networks: dict[Rules, ValueNetwork] = {}
        if isinstance(model, ValueNetwork):
            self._fixed: ValueNetwork | None = model
        elif model:
            self._fixed = ValueNetwork.load(model)
        else:
            self._fixed = None
        parts = (
            [name]
            + ([f"model={model}"] if model and not isinstance(model, ValueNetwork) else [])
            + ([f"depth={depth}"] if depth else [])
        )
        self.spec = parts[0] + "".join(":" + p for p in parts[1:])
        super().__init__(self.depth, threads, tt_bits, prune, seed)

    def network(self, rules: Rules) -> ValueNetwork:
        """The network this agent plays ``rules`` with.

        Raises:
            ValueError: If its model learned other rules, or no shipped model plays them.
        """
        if self._fixed is not None:
            if self._fixed.rules != rules:
                raise ValueError(
                    self.RULES_MISMATCH.format(learned=self._fixed.rules.describe(), asked=rules.describe())
                )
            return self._fixed
        if rules not in self._networks:
            self._networks[rules] = ValueNetwork.load(shipped_model(rules))
        return self._networks[rules]

    def check_rules(self, rules: Rules) -> None:
        """Raise ``ValueError`` if no network of this agent learned ``rules``."""
        self.network(rules)

    def evaluation(self, rules: Rules) -> search.NetworkEvaluation:
        """The network of ``rules`` at the search's leaves."""
        return search.network_evaluation(self.network(rules).arrays())


class NetworkEstimate:
    """Winning chances estimated by a value network searched ``depth`` plies deep.

    Asked as a solved table is for hints (:meth:`win_probability`, :meth:`move_values`, :meth:`best_move`): what
    ``ur-play`` hints with when no table is cached. ``exact`` is False, so callers say that the numbers are the
    network's estimate.
    """

    exact = False

    def __init__(self, network: ValueNetwork, depth: int = 2) -> None:
        self.network, self.depth, self.rules = network, depth, network.rules
        self.name = f"the neural network's estimate ({network.info.get('algo', 'value network')}, search depth {depth})"
        self._ctx = _network_context(network, depth)

    def win_probability(self, position: Position, side: str | None = None) -> float:
        """The chance that ``side`` (default: the side to move) wins, before the roll."""
        if self.depth:
            value = search.chance_value(position.code, self.depth, 0.0, 1.0, self._ctx)
        else:
            value = search.leaf_value(position.code, self._ctx)
        return value if side in (None, position.turn) else 1.0 - value

    def move_values(self, position: Position, roll: int) -> dict[int, float]:
        """Each legal move's winning chance for the mover."""
        code = position.code
        return {m: search.move_value(code, roll, m, self.depth, 0.0, self._ctx) for m in position.legal_moves(roll)}

    def best_move(self, position: Position, roll: int) -> int | None:
        """The move with the best estimate (the lowest source on ties), None when the roll has no legal move."""
        values = self.move_values(position, roll)
        return max(values, key=lambda m: (values[m], -m)) if values else None


def table_search_choices(
    table: Any, decisions: Decisions, depth: int, tt_bits: int = 16, prune: bool = True
) -> np.ndarray:
    """The search's moves with the solved table as its evaluation (exact at every depth: the tests' reference)."""
    evaluation = search.TableEvaluation(table.view, search.evaluation_cache())
    ctx = search.search_context(geometry(table.rules), evaluation, depth, tt_bits, prune)
    out = np.empty(len(decisions), dtype=np.int64)
    search.choose_all(decisions, depth, ctx, out, 0, len(decisions))
    return out
