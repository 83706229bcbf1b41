"""Agents from outside the package, named by spec.

A Python file or module, an installed entry point, a saved policy or network, an engine program.

==============================  ==============================================================================
spec                            the agent
==============================  ==============================================================================
``path/to/file.py:NAME``        ``NAME`` in that file: an ``Agent`` subclass, a factory returning an agent (or a
                                batch policy), or an agent instance; ``:key=value`` parameters follow
``package.module:NAME``         the same, from an importable module
``NAME`` (an entry point)       what an installed package registers in the ``urgym.agents`` entry-point group
``sb3:PATH``                    a stable-baselines3 or sb3-contrib model (:class:`~.policies.SB3Agent`)
``onnx:PATH``                   an ONNX network (:class:`urgym.agents.outside.policies.OnnxAgent`)
``torchscript:PATH``            a TorchScript network (:class:`urgym.agents.outside.policies.TorchScriptAgent`)
``engine:COMMAND``              a program speaking UEI 1 (:class:`urgym.agents.outside.engine.EngineAgent`);
                                ``engine:move_time=5:COMMAND`` sets its time per move
==============================  ==============================================================================

Parameters are read as Python literals (``3``, ``0.5``, ``True``, ``'x'``) and otherwise kept as text. A plug-in
file or module is code, run as such: name only files you trust (as with any Python you import).
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from urgym.agents.base import Agent

__all__ = [
    "ENTRY_POINT_GROUP",
    "PLUGIN_PREFIXES",
    "build_plugin",
    "entry_point_names",
    "is_plugin_spec",
    "is_python_name",
    "load_named",
]

ENTRY_POINT_GROUP = "urgym.agents"
"""The entry-point group in which installed packages register agents (``name = "package.module:factory"``)."""

PLUGIN_PREFIXES = ("sb3", "onnx", "torchscript", "engine")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_MODULE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_PARAM = re.compile(r"^([A-Za-z_]\w*)=(.*)$", re.DOTALL)


def is_plugin_spec(spec: str, builtin: set[str]) -> bool:
    """True when ``spec`` names an agent from outside (not one of the ``builtin`` names)."""
    head = spec.split(":", 1)[0].strip()
    if head in PLUGIN_PREFIXES or ".py:" in spec:
        return True
    if head in builtin:
        return False
    return head in entry_point_names() or _module_spec(spec) is not None


def _module_spec(spec: str) -> tuple[str, str, list[str]] | None:
    parts = spec.split(":")
    if len(parts) >= 2 and _MODULE.fullmatch(parts[0].strip()) and _IDENTIFIER.fullmatch(parts[1].strip()):
        return parts[0].strip(), parts[1].strip(), parts[2:]
    return None


def entry_point_names() -> dict[str, Any]:
    """The agents installed packages register, by name."""
    from importlib.metadata import entry_points

    return {entry.name: entry for entry in entry_points(group=ENTRY_POINT_GROUP)}


def build_plugin(spec: str, seed: int | None = None, **kwargs: Any) -> Agent:
    """The agent a plug-in spec names (see the module docstring).

    Its ``spec`` rebuilds it anywhere (paths are made absolute, so spawned workers and Ray find the same file).

    Raises:
        ValueError: For a missing file, module or attribute, an object that is not an agent, or bad parameters,
            naming the spec.
    """
    from urgym.agents.outside.engine import EngineAgent
    from urgym.agents.outside.policies import OnnxAgent, SB3Agent, TorchScriptAgent

    head, _, rest = spec.partition(":")
    head = head.strip()
    if head == "engine":
        params, command = _leading_params(rest)
        agent = EngineAgent(command, **_literal(params, spec), **kwargs)
        if params:
            agent.spec = "engine:" + "".join(f"{k}={v}:" for k, v in params.items()) + agent.spec[len("engine:") :]
        return agent
    if head in ("sb3", "onnx", "torchscript"):
        path, params = _trailing_params(rest)
        if not path:
            raise ValueError(f"agent spec {spec!r} names no file: {head}:PATH")
        cls = {"sb3": SB3Agent, "onnx": OnnxAgent, "torchscript": TorchScriptAgent}[head]
        try:
            return cls(path, seed=seed, **_literal(params, spec), **kwargs)
        except FileNotFoundError as err:
            raise ValueError(f"in agent spec {spec!r}: {err}") from None
    if ".py:" in spec:
        file, _, rest = spec.partition(".py:")
        path = Path(file + ".py").expanduser().resolve()
        name, params = _name_and_params(rest, spec)
        obj = _attribute(_load_file(path, spec), name, spec)
        return _instantiate(obj, f"{path}:{name}", params, seed, kwargs, spec)
    entries = entry_point_names()
    name, _, rest = spec.partition(":")
    if name.strip() in entries:
        _, params = _trailing_params(":" + rest if rest else "")
        obj = entries[name.strip()].load()
        return _instantiate(obj, name.strip(), params, seed, kwargs, spec)
    parsed = _module_spec(spec)
    if parsed is None:
        raise ValueError(f"unknown agent {spec!r}")
    module_name, name, rest_parts = parsed
    module = _import(module_name, spec, "agent spec")
    _, params = _trailing_params(":" + ":".join(rest_parts) if rest_parts else "")
    return _instantiate(_attribute(module, name, spec), f"{module_name}:{name}", params, seed, kwargs, spec)


def _import(module_name: str, spec: str, what: str) -> Any:
    """The module a spec names, or a ValueError naming the spec."""
    try:
        return importlib.import_module(module_name)
    except ImportError as err:
        raise ValueError(f"in {what} {spec!r}: cannot import {module_name!r} ({err})") from None


def is_python_name(spec: str) -> bool:
    """Whether ``spec`` names a Python object: ``FILE.py:NAME`` or ``package.module:NAME``."""
    return ".py:" in spec or _module_spec(spec) is not None


def load_named(spec: str, what: str) -> tuple[Any, str]:
    """The object ``FILE.py:NAME`` or ``package.module:NAME`` names, and the spec that names it anywhere.

    A file's path is made absolute in the returned spec, so a worker process finds the same file. The file or module
    is code, run as such.

    Raises:
        ValueError: For a missing file, module or name, or a file that fails to load, naming ``what`` and the spec.
    """
    if ".py:" in spec:
        file, _, name = spec.rpartition(".py:")
        path = Path(file + ".py").expanduser().resolve()
        if not _IDENTIFIER.fullmatch(name.strip()):
            raise ValueError(f"in {what} {spec!r}: {name!r} is not a Python name (FILE.py:NAME)")
        return _attribute(_load_file(path, spec, what), name.strip(), spec, what), f"{path}:{name.strip()}"
    parsed = _module_spec(spec)
    if parsed is None or parsed[2]:
        raise ValueError(f"{what} {spec!r} is neither FILE.py:NAME nor package.module:NAME")
    module_name, name, _ = parsed
    return _attribute(_import(module_name, spec, what), name, spec, what), f"{module_name}:{name}"


def _leading_params(rest: str) -> tuple[dict[str, str], str]:
    """``key=value:`` segments before an engine's command line, and the command."""
    params: dict[str, str] = {}
    while True:
        match = re.match(r"^([A-Za-z_]\w*)=([^:\s]*):(.*)$", rest, re.DOTALL)
        if not match:
            return params, rest.strip()
        params[match.group(1)] = match.group(2)
        rest = match.group(3)


def _trailing_params(rest: str) -> tuple[str, dict[str, str]]:
    """A path (or nothing) and the ``:key=value`` parameters after it."""
    parts = rest.split(":")
    params: dict[str, str] = {}
    while len(parts) > 1 and _PARAM.match(parts[-1]):
        key, value = _PARAM.match(parts.pop()).groups()
        if key in params:
            raise ValueError(f"parameter {key!r} is given twice")
        params[key] = value
    params = dict(reversed(list(params.items())))
    return ":".join(parts).strip(), params


def _name_and_params(rest: str, spec: str) -> tuple[str, dict[str, str]]:
    name, *parts = rest.split(":")
    if not _IDENTIFIER.fullmatch(name.strip()):
        raise ValueError(f"in agent spec {spec!r}: {name!r} is not a Python name (FILE.py:NAME)")
    params: dict[str, str] = {}
    for part in parts:
        match = _PARAM.match(part)
        if not match:
            raise ValueError(f"in agent spec {spec!r}: {part!r} should be key=value")
        if match.group(1) in params:
            raise ValueError(f"in agent spec {spec!r}: {match.group(1)!r} is given twice")
        params[match.group(1)] = match.group(2)
    return name.strip(), params


def _literal(params: dict[str, str], spec: str) -> dict[str, Any]:
    """Parameter values as Python literals where they read as one (numbers, True/False, quoted text), else text."""
    out = {}
    for key, text in params.items():
        lowered = text.strip().lower()
        if lowered in ("true", "false"):
            out[key] = lowered == "true"
            continue
        try:
            out[key] = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            out[key] = text
    return out


def _load_file(path: Path, spec: str, what: str = "agent spec"):
    if not path.is_file():
        raise ValueError(f"in {what} {spec!r}: no such file {path}")
    name = "urgym_plugin_" + hashlib.sha256(str(path).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module  # so its classes pickle and its dataclasses work
    try:
        module_spec.loader.exec_module(module)
    except Exception as err:  # the plug-in's own error while it loads: name it
        del sys.modules[name]
        raise ValueError(f"in {what} {spec!r}: {path} fails to load: {type(err).__name__}: {err}") from None
    return module


def _attribute(module: Any, name: str, spec: str, what: str = "agent spec") -> Any:
    if not hasattr(module, name):
        public = sorted(n for n in vars(module) if not n.startswith("_"))[:12]
        raise ValueError(
            f"in {what} {spec!r}: {getattr(module, '__file__', module)} has no {name!r}; it has "
            f"{', '.join(public) or 'no public names'}"
        )
    return getattr(module, name)


def _instantiate(
    obj: Any, label: str, params: dict[str, str], seed: int | None, kwargs: dict[str, Any], spec: str
) -> Agent:
    """An agent from what a plug-in names: an Agent subclass, a factory, or an instance."""
    from urgym.agents.outside.policies import PolicyAgent

    values = {**_literal(params, spec), **kwargs}
    if isinstance(obj, Agent):
        if values:
            raise ValueError(f"in agent spec {spec!r}: {label} is an agent instance, which takes no parameters")
        agent = obj
    elif callable(obj):
        if "seed" in _parameters(obj):
            values.setdefault("seed", seed)
        try:
            agent = obj(**values)
        except TypeError as err:
            raise ValueError(f"in agent spec {spec!r}: {label}({', '.join(values)}) failed: {err}") from None
        if not isinstance(agent, Agent):
            if callable(agent) and not isinstance(obj, type):
                agent = PolicyAgent(agent)
            else:
                raise ValueError(
                    f"in agent spec {spec!r}: {label} gave {type(agent).__name__}, not an agent (a "
                    "urgym Agent subclass, a factory returning one, or an instance)"
                )
    else:
        raise ValueError(
            f"in agent spec {spec!r}: {label} is a {type(obj).__name__}, not an agent (a urgym Agent "
            "subclass, a factory returning one, or an instance)"
        )
    if seed is not None:
        agent.reseed(seed)
    agent.spec = label + "".join(f":{k}={v}" for k, v in params.items())
    return agent


def _parameters(obj: Callable) -> set[str]:
    try:
        return set(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        return set()
