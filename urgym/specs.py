"""How the environments build opponents from agent specs without importing the agents layer.

Higher layers register a resolver (``spec -> agent``) here: the ``agents`` package does so when imported, and
through the ``urgym.agent_specs`` entry point, so ``gym.make("urgym/Ur-v2", opponent="expectimax:3")`` works
without importing ``agents`` first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["SPEC_RESOLVER_GROUP", "SpecResolver", "register_spec_resolver", "resolve_spec"]

SpecResolver = Callable[[str], Any]
SPEC_RESOLVER_GROUP = "urgym.agent_specs"
"""Entry-point group of functions that build an agent from a spec string (the ``agents`` package adds one)."""

_resolvers: list[SpecResolver] = []


def register_spec_resolver(resolver: SpecResolver) -> None:
    """Let environments build opponents from spec strings with ``resolver(spec) -> agent``."""
    if resolver not in _resolvers:
        _resolvers.append(resolver)


def resolve_spec(spec: str) -> Any:
    """The agent a spec names, built by the first registered resolver (loading the entry points if none is).

    Raises:
        ValueError: If no resolver is installed (the agents package is missing) or the spec is bad.
    """
    if not _resolvers:
        from importlib.metadata import entry_points

        for entry in entry_points(group=SPEC_RESOLVER_GROUP):
            register_spec_resolver(entry.load())
    if not _resolvers:
        raise ValueError(f"cannot build agent {spec!r}: agent specs need the agents package, which is not installed")
    return _resolvers[0](spec)
