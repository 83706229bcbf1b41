"""Agents that play the Royal Game of Ur, all behind one interface (:class:`Agent`).

Build one from a spec with :func:`make_agent` (``"expectimax:7"``, ``"perfect"``, ...); see
:mod:`urgym.agents.registry` for the spec forms and :func:`agent_help` for the list.

What is inside: the interface (:mod:`~urgym.agents.base`) and the registry of specs
(:mod:`~urgym.agents.registry`); the built-in agents (:mod:`~urgym.agents.baselines`, the paper's heuristic
:mod:`~urgym.agents.heuristic`, :mod:`~urgym.agents.expectimax`, :mod:`~urgym.agents.perfect`); the one search
(:mod:`~urgym.agents.search`); value networks and their agents (:mod:`urgym.agents.networks`); agents from outside
(:mod:`urgym.agents.outside`: saved policies, plug-ins, engines); the shipped models and their cards
(:mod:`urgym.agents.models`).
"""

from urgym.agents.base import Agent
from urgym.agents.baselines import BaselineAgent
from urgym.agents.expectimax import ExpectimaxAgent, SearchResult
from urgym.agents.heuristic import GainAgent, GainTable, SequenceGain, gain_table
from urgym.agents.networks.neural import NeuralAgent
from urgym.agents.networks.value import ValueNetwork
from urgym.agents.perfect import PerfectAgent
from urgym.agents.registry import AGENTS, agent_help, builtin_name, make_agent, parse_spec, register_agent

__all__ = [
    "AGENTS",
    "Agent",
    "BaselineAgent",
    "ExpectimaxAgent",
    "GainAgent",
    "GainTable",
    "NeuralAgent",
    "PerfectAgent",
    "SearchResult",
    "SequenceGain",
    "ValueNetwork",
    "agent_help",
    "builtin_name",
    "gain_table",
    "make_agent",
    "parse_spec",
    "register_agent",
]
