"""Agents that play the Royal Game of Ur, all behind one interface (:class:`Agent`).

Build one from a spec with :func:`make_agent` (``"expectimax:7"``, ``"perfect"``, ...); see
:mod:`urgym.agents.registry` for the spec forms and :func:`agent_help` for the list.
"""

from urgym.agents.base import Agent
from urgym.agents.baselines import BaselineAgent
from urgym.agents.expectimax import ExpectimaxAgent, SearchResult
from urgym.agents.heuristic import GainAgent, GainTable, SequenceGain, gain_table
from urgym.agents.perfect import PerfectAgent
from urgym.agents.registry import AGENTS, agent_help, builtin_name, make_agent, parse_spec, register_agent
from urgym.agents.valuenet import NeuralAgent, ValueNetwork

import urgym  # noqa: F401 (first: Ctrl-C while a command starts ends with one line)

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
