"""Build agents from short specs, shared by the command line and Python.

A spec names an agent and optionally sets its parameters, in any of these forms::

    expectimax                   defaults
    expectimax:7                 the agent's main parameter (here the depth)
    expectimax:depth=7           named parameters, separated by ':'
    expectimax --depth 7         command-line style (also --depth=7)
    perfect:epsilon=0.05

Agents from outside the package have specs of their own (:mod:`urgym.agents.outside.plugins`): ``path/to/file.py:NAME``,
``package.module:NAME``, an installed entry point's name, ``sb3:PATH``, ``onnx:PATH``, ``torchscript:PATH`` and
``engine:COMMAND``. In Python, :func:`make_agent` also takes an :class:`Agent` and a batch policy
``policy(observations, masks) -> actions``.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from urgym.agents.base import Agent
from urgym.agents.outside.plugins import build_plugin, entry_point_names, is_plugin_spec

from urgym.specs import register_spec_resolver

__all__ = ["AGENTS", "AgentInfo", "Param", "agent_help", "builtin_name", "make_agent", "parse_spec", "register_agent"]


@dataclass(frozen=True)
class Param:
    """One parameter an agent spec may set."""

    name: str
    type: type
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    names_file: bool = False
    """The value is a path to a model file (its content, not its name, identifies the agent)."""


@dataclass(frozen=True)
class AgentInfo:
    """A registered agent: how to build it and what it accepts."""

    name: str
    factory: Callable[..., Agent]
    description: str
    params: tuple[Param, ...] = ()
    main_param: str | None = None
    """The parameter ``name:value`` sets."""
    extra_kwargs: tuple[str, ...] = field(default=())
    """Python-only keyword arguments (objects, not spec text) the factory also takes."""

    def param(self, name: str) -> Param:
        """The parameter called ``name``."""
        for p in self.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.params) or "none"
        raise ValueError(f"agent {self.name!r} has no parameter {name!r}; its parameters: {known}")


AGENTS: dict[str, AgentInfo] = {}
"""Every registered agent by name."""


def register_agent(info: AgentInfo) -> None:
    """Add an agent to the registry (a name may be registered once)."""
    if info.name in AGENTS:
        raise ValueError(f"agent {info.name!r} is already registered")
    AGENTS[info.name] = info


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split a spec into the agent name and its parameters as text (not yet converted or checked)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent spec must be a non-empty string, got {spec!r}; agents: {_names()}")
    spec = spec.strip()
    if " " in spec or "\t" in spec:
        words = shlex.split(spec)
        return words[0], _parse_flags(words[0], words[1:])
    name, *parts = spec.split(":")
    params: dict[str, str] = {}
    for i, part in enumerate(parts):
        if "=" in part:
            key, value = part.split("=", 1)
            key = key.strip().replace("-", "_")
            if not key:
                raise ValueError(f"in agent spec {spec!r}: {part!r} has no parameter name before '='")
            if key in params:
                raise ValueError(f"in agent spec {spec!r}: {key!r} is given twice")
            params[key] = value.strip()
        elif i == 0:
            params[""] = part.strip()  # the main parameter, resolved once the agent is known
        else:
            raise ValueError(f"in agent spec {spec!r}: {part!r} should be key=value")
    return name, params


def _parse_flags(name: str, words: list[str]) -> dict[str, str]:
    params: dict[str, str] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if not word.startswith("--"):
            raise ValueError(f"in agent spec for {name!r}: expected --parameter, got {word!r}")
        key = word[2:]
        if "=" in key:
            key, value = key.split("=", 1)
        elif i + 1 < len(words) and not words[i + 1].startswith("--"):
            value = words[i + 1]
            i += 1
        else:
            value = "true"  # a bare flag
        key = key.replace("-", "_")
        if key in params:
            raise ValueError(f"in agent spec for {name!r}: --{key} is given twice")
        params[key] = value
        i += 1
    return params


def builtin_name(spec: str | Agent) -> str | None:
    """The registered agent a spec names (``"perfect"`` for ``perfect:epsilon=0.1``), None for any other."""
    if not isinstance(spec, str) or is_plugin_spec(spec, set(AGENTS)):
        return None
    try:
        name = parse_spec(spec)[0]
    except ValueError:
        return None
    return name if name in AGENTS else None


def make_agent(spec: str | Agent | Callable, seed: int | None = None, **kwargs: Any) -> Agent:
    """Build an agent from a spec.

    An :class:`Agent` is returned as it is, reseeded if ``seed`` is given; a batch policy ``policy(observations, masks)
    -> actions`` becomes a :class:`~urgym.agents.outside.policies.PolicyAgent`.

    Args:
        spec: An agent spec (see the module docstring).
        seed: The agent's seed.
        **kwargs: Parameters as Python values (they override the spec's), or Python-only arguments such
            as ``table=`` for ``perfect``.

    Raises:
        ValueError: For an unknown agent, an unknown parameter or a bad value, saying what is allowed.
    """
    if isinstance(spec, Agent):
        if seed is not None:
            spec.reseed(seed)
        return spec
    if callable(spec) and not isinstance(spec, str):
        from urgym.agents.outside.policies import PolicyAgent

        return PolicyAgent(spec, seed=seed)
    if isinstance(spec, str) and spec.strip() and is_plugin_spec(spec.strip(), set(AGENTS)):
        return build_plugin(spec.strip(), seed, **kwargs)
    name, text_params = parse_spec(spec)
    if name not in AGENTS:
        raise ValueError(
            f"unknown agent {name!r}; agents: {_names()} (or one from outside: FILE.py:NAME, "
            "module:NAME, sb3:PATH, onnx:PATH, torchscript:PATH, engine:COMMAND)"
        )
    info = AGENTS[name]
    params: dict[str, Any] = {}
    for key, text in text_params.items():
        if key == "":
            if info.main_param is None:
                hint = f"use {name}:key=value" if info.params else "it takes no parameters"
                raise ValueError(f"agent {name!r} takes no main parameter (got {spec!r}); {hint}")
            key = info.main_param
        params[key] = _convert(info, info.param(key), text)
    for key, value in kwargs.items():
        if key not in info.extra_kwargs:
            info.param(key)  # raises for an unknown name
        params[key] = value
    try:
        return info.factory(seed=seed, **params)
    except FileNotFoundError as err:  # a model file named in the spec: a bad value, like any other
        raise ValueError(f"in agent spec {spec!r}: {err}") from None


def _convert(info: AgentInfo, param: Param, text: str) -> Any:
    try:
        if param.type is bool:
            lowered = text.lower()
            if lowered not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(text)
            value: Any = lowered in ("true", "1", "yes")
        else:
            value = param.type(text)
    except ValueError:
        raise ValueError(f"agent {info.name!r}: {param.name} must be {param.type.__name__}, got {text!r}") from None
    if param.choices is not None and value not in param.choices:
        raise ValueError(
            f"agent {info.name!r}: {param.name} must be one of {', '.join(map(str, param.choices))}, got {value!r}"
        )
    return value


def _names() -> str:
    return ", ".join([*AGENTS, *entry_point_names()])


def agent_help() -> str:
    """A listing of every agent and its parameters, for command-line help."""
    lines = []
    for info in AGENTS.values():
        lines.append(f"  {info.name:<11} {info.description}")
        for p in info.params:
            main = " (main: name:VALUE)" if p.name == info.main_param else ""
            lines.append(f"      {p.name}={p.default!r}{main}  {p.help}")
    return "\n".join(lines)


def _register_builtins() -> None:
    from urgym.agents.baselines import BASELINE_DESCRIPTIONS, BaselineAgent
    from urgym.agents.expectimax import ExpectimaxAgent
    from urgym.agents.heuristic import THREAT_MODELS, GainAgent
    from urgym.agents.perfect import PerfectAgent

    for policy, description in BASELINE_DESCRIPTIONS.items():
        register_agent(AgentInfo(policy, lambda seed, _p=policy: BaselineAgent(_p, seed=seed), description))
    register_agent(
        AgentInfo(
            "heuristic",
            GainAgent,
            "the gain G = W + A + C of Raposo & Lamont (2023), best sequence first",
            (
                Param("max_moves", int, 2, "moves per sequence (each after the first needs a rosette)"),
                Param("threats", str, "all", "opponent pieces the capture term counts", THREAT_MODELS),
            ),
            main_param="max_moves",
        )
    )
    register_agent(
        AgentInfo(
            "expectimax",
            ExpectimaxAgent,
            "expectiminimax search scoring the advancement difference at the horizon",
            (
                Param("depth", int, 7, "plies searched (decisions of either side)"),
                Param("tt_bits", int, 18, "log2 of the transposition table's entries"),
                Param("prune", bool, True, "prune (Star1, alpha-beta, transpositions); never changes the move"),
                Param("threads", int, 0, "threads answering a batch of decisions (0: every core)"),
            ),
            main_param="depth",
        )
    )
    register_agent(
        AgentInfo(
            "perfect",
            PerfectAgent,
            "the solved table's best move (solves and caches the table on first use)",
            (
                Param("epsilon", float, 0.0, "chance of playing a random non-best move instead"),
                Param("solve", bool, True, "solve a missing table rather than stop"),
            ),
            main_param="epsilon",
            extra_kwargs=("table",),
        )
    )
    register_agent(
        AgentInfo(
            "td",
            _td_agent,
            "TD(lambda) after-state network learned by self-play (agents.networks.td)",
            (
                Param(
                    "model",
                    str,
                    "",
                    "a .npz written by `train --algo td-lambda` (default: the shipped finkel model)",
                    names_file=True,
                ),
                Param("depth", int, 0, "plies searched beyond the move, the network at the leaves (0: none)"),
                Param("version", int, 0, "which shipped network when no model is given: 0 the newest, 1 the first"),
            ),
            main_param="model",
        )
    )
    register_agent(
        AgentInfo(
            "neural",
            _neural_agent,
            "an after-state value network (default: the shipped one of the rules), alone or "
            "at the leaves of expectiminimax",
            (
                Param(
                    "model",
                    str,
                    "",
                    "a .npz written by `train --algo distill` (default: the shipped model of the rules)",
                    names_file=True,
                ),
                Param("depth", int, 0, "plies searched beyond the move, the network at the leaves (0: none)"),
                Param("threads", int, 0, "threads answering a batch of decisions (0: every core)"),
            ),
            main_param="depth",
        )
    )
    register_agent(
        AgentInfo(
            "ppo",
            _ppo_agent,
            "the shipped MaskablePPO policy, or another sb3 model (numpy alone plays it)",
            (
                Param(
                    "model", str, "", "a .zip written by `train` (default: the shipped finkel model)", names_file=True
                ),
            ),
            main_param="model",
        )
    )


def _td_agent(model: Any = "", depth: int = 0, version: int = 0, seed: int | None = None) -> Agent:
    from urgym.agents.networks.td import TDAgent

    return TDAgent(model or None, seed=seed, depth=depth, version=version)


def _neural_agent(model: Any = "", depth: int = 0, threads: int = 0, seed: int | None = None) -> Agent:
    from urgym.agents.networks.neural import NeuralAgent

    return NeuralAgent(model or None, depth=depth, threads=threads, seed=seed)


def _ppo_agent(model: Any = "", seed: int | None = None) -> Agent:
    from urgym.agents.models import DEFAULT_PPO_MODEL
    from urgym.agents.outside.policies import SB3Agent

    return SB3Agent(model or DEFAULT_PPO_MODEL, seed=seed, spec=f"ppo:model={model}" if model else "ppo")


_register_builtins()
register_spec_resolver(make_agent)  # environments build opponents from specs through this hook
