"""A search's whole policy by dynamic programming (urgym.agents.whole) plays exactly the search's moves."""

from __future__ import annotations

import numpy as np
import pytest
from urgym.agents import make_agent
from urgym.agents.networks.neural import NeuralAgent
from urgym.evaluation.scoring.policies import agent_policy
from urgym.solver import PositionIndex
from urgym.solver.policy import count_decisions, decision_states

from tests.agents.networks.test_value_networks import random_network
from urgym import get_rules
from urgym.batch import every_roll


def searched_moves(agent, rules):
    """Every decision's move as the agent's own search gives it, asked in batches (``select_moves``)."""
    index = PositionIndex(rules)
    n_rolls = 5
    choices = np.zeros(index.size * n_rolls, dtype=np.uint8)
    for pair, (start, end) in zip(index.pairs, index.pair_ranges, strict=True):
        if index.pieces in pair:
            continue
        every = every_roll(decision_states(index, start, end), rules)
        moves, counts = every.moves, every.counts
        rows = np.flatnonzero(counts > 1)
        decisions = every.take(rows)
        chosen = agent.select_moves(rules, decisions)
        choices[start * n_rolls + rows] = (moves[rows] == chosen[:, None]).argmax(axis=1)
    return choices


@pytest.mark.parametrize("pieces", [2, 3])
@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_expectimax_whole_policy_is_its_search(pieces, depth):
    rules = get_rules("finkel", pieces)
    agent = make_agent(f"expectimax:{depth}")
    table = agent.policy_table(rules, progress=False)
    assert np.array_equal(table, searched_moves(agent, rules))


@pytest.mark.parametrize("depth", [0, 1, 2])
def test_a_network_search_whole_policy_is_its_search(depth):
    rules = get_rules("finkel", 2)
    agent = NeuralAgent(random_network(rules, seed=depth), depth=depth, threads=1)
    assert np.array_equal(agent.policy_table(rules, progress=False), searched_moves(agent, rules))


def test_exact_evaluation_takes_the_whole_policy_and_counts_the_decisions():
    rules = get_rules("finkel", 3)
    whole = agent_policy("expectimax:3", rules, progress=False, cache=False)
    asked = agent_policy("greedy", rules, progress=False, cache=False).asked
    assert whole.asked == asked == count_decisions(PositionIndex(rules))
    assert whole.exact and whole.policy.deterministic


@pytest.mark.parametrize("pieces", [2, 3])
def test_perfect_whole_policy_is_the_tables_best_move(pieces):
    rules = get_rules("finkel", pieces)
    agent = make_agent("perfect")
    agent.prepare(rules)
    assert np.array_equal(agent.policy_table(rules, progress=False), searched_moves(agent, rules))
    assert make_agent("perfect:epsilon=0.1").policy_table(rules, progress=False) is None  # slips: its distribution
