"""Agents that play the Royal Game of Ur, all behind one interface (:class:`Agent`).

Build one from a spec with :func:`make_agent` (``"expectimax:7"``, ``"perfect"``, ...); see
:mod:`agents.registry` for the spec forms and :func:`agent_help` for the list.
"""

import urgym  # noqa: F401 (first: Ctrl-C while a command starts ends with one line)
from agents.base import Agent
from agents.baselines import BaselineAgent
from agents.expectimax import ExpectimaxAgent, SearchResult
from agents.heuristic import GainAgent, GainTable, SequenceGain, gain_table
from agents.perfect import PerfectAgent
from agents.registry import AGENTS, agent_help, builtin_name, make_agent, parse_spec, register_agent

__all__ = [
    "AGENTS",
    "Agent",
    "BaselineAgent",
    "ExpectimaxAgent",
    "GainAgent",
    "GainTable",
    "PerfectAgent",
    "SearchResult",
    "SequenceGain",
    "agent_help",
    "builtin_name",
    "gain_table",
    "make_agent",
    "parse_spec",
    "register_agent",
]
