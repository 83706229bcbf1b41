"""The registry of algorithms: urgym's own, those registered in code, by installed packages and named by file.

==================================  ==================================================================================
how                                 what
==================================  ==================================================================================
urgym's own                         ``td-lambda`` (``td``), ``expected-td``, ``maskable-ppo`` (``ppo``), ``dqn``,
                                    ``alphazero``, and ``distill`` (``train`` only: it learns from the table)
:func:`register_algorithm`          an :class:`~urgym.evaluation.training.learner.Algorithm`, or a learner class
                                    whose attributes describe it, registered in code
an entry point                      ``[project.entry-points."urgym.algorithms"]`` of an installed package:
                                    ``NAME = "package.module:CLASS"`` (found when first asked for)
``FILE.py:CLASS``                   a learner class (or a record) in a file, without installing anything
``package.module:CLASS``            the same, from an importable module
==================================  ==================================================================================

Names are unique: a second algorithm under a name (or alias) already taken is refused, naming both. A file or module
named is code, run as such: name only files you trust.
"""

from __future__ import annotations

import copyreg
import dataclasses
import importlib
from typing import Any

from urgym.agents.outside.plugins import is_python_name, load_named
from urgym.evaluation.training.learner import Algorithm

__all__ = [
    "BUILTIN_ALGORITHMS",
    "ENTRY_POINT_GROUP",
    "algorithm_names",
    "get_algorithm",
    "register_algorithm",
]

ENTRY_POINT_GROUP = "urgym.algorithms"
"""The entry-point group in which installed packages register algorithms."""

BUILTIN_ALGORITHMS = {
    "td-lambda": "urgym.evaluation.training.td_lambda:TD_LAMBDA",
    "expected-td": "urgym.evaluation.training.expected_td:EXPECTED_TD",
    "maskable-ppo": "urgym.evaluation.training.ppo:MASKABLE_PPO",
    "dqn": "urgym.evaluation.training.dqn:DQN",
    "alphazero": "urgym.evaluation.training.alphazero:ALPHAZERO",
    "distill": "urgym.evaluation.training.distill:DISTILL",
}
"""urgym's own algorithms, each a record in its module (imported when first asked for)."""
_BUILTIN_ALIASES = {"td": "td-lambda", "ppo": "maskable-ppo"}

_REGISTERED: dict[str, Algorithm] = {}
"""Every algorithm loaded or registered so far, by each of its names."""


def _builtin(name: str) -> Algorithm:
    module, _, attribute = BUILTIN_ALGORITHMS[name].partition(":")
    return _add(getattr(importlib.import_module(module), attribute), builtin=True)


def _add(algorithm: Algorithm, builtin: bool = False) -> Algorithm:
    """Register ``algorithm`` under its names; refuse a name another algorithm holds (the same one is kept)."""
    for name in algorithm.names:
        held = _REGISTERED.get(name)
        if held is None and not builtin and _owner(name) in BUILTIN_ALGORITHMS:
            held = _builtin(_owner(name))
        if held is not None and not _same(held, algorithm):
            raise ValueError(
                f"algorithm name {name!r} is taken by {_describe(held)}; {_describe(algorithm)} cannot have it too: "
                "give it another name"
            )
    for name in algorithm.names:
        _REGISTERED.setdefault(name, algorithm)
    return _REGISTERED[algorithm.name]


def _owner(name: str) -> str:
    return _BUILTIN_ALIASES.get(name, name)


def _same(a: Algorithm, b: Algorithm) -> bool:
    """The same algorithm loaded twice (one file named twice, one class registered twice)."""
    return a is b or (a.learner is b.learner and a.name == b.name) or (a.source is not None and a.source == b.source)


def _describe(algorithm: Algorithm) -> str:
    where = algorithm.source or f"{algorithm.learner.__module__}:{algorithm.learner.__qualname__}"
    return f"{algorithm.name!r} ({where})"


def register_algorithm(algorithm: Algorithm | type) -> Algorithm:
    """Register an algorithm in code: an :class:`Algorithm`, or a learner class whose attributes describe it.

    Returns the record registered. Registering the same algorithm again does nothing.

    Raises:
        ValueError: For a name (or alias) another algorithm holds, naming both; for a class that is no learner.
    """
    record = algorithm if isinstance(algorithm, Algorithm) else Algorithm.of(algorithm)
    return _add(record)


def _entry_points() -> dict[str, Any]:
    from importlib.metadata import entry_points

    return {entry.name: entry for entry in entry_points(group=ENTRY_POINT_GROUP)}


def _record(obj: Any, source: str, what: str) -> Algorithm:
    """The record an object loaded from ``source`` gives: a record (given its source) or a learner class."""
    if isinstance(obj, Algorithm):
        return Algorithm(**{**obj.__dict__, "source": source})
    if isinstance(obj, type):
        return Algorithm.of(obj, source)
    raise ValueError(f"{what} {source!r} is a {type(obj).__name__}, not a learner class or an Algorithm record")


def get_algorithm(name: str, benchmark: bool = False) -> Algorithm:
    """The algorithm ``name`` names: a registered name or alias, an entry point, ``FILE.py:CLASS`` or ``module:CLASS``.

    ``benchmark``: an unknown name's message lists the algorithms the benchmark trains.

    Raises:
        ValueError: For an unknown name (listing the known ones), a file or module that does not load or holds no
            learner, or a name that clashes with another algorithm's.
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"an algorithm is named by a non-empty string, got {name!r}")
    if name in _REGISTERED:
        return _REGISTERED[name]
    if _owner(name) in BUILTIN_ALGORITHMS:
        return _builtin(_owner(name))
    entries = _entry_points()
    if name in entries:
        try:
            obj = entries[name].load()
        except Exception as err:  # the package's own error while it loads: name it
            raise ValueError(
                f"algorithm {name!r} (entry point {entries[name].value}) fails to load: {type(err).__name__}: {err}"
            ) from None
        record = _record(obj, entries[name].value, "entry point")
        if record.name != name:
            raise ValueError(
                f"entry point {name!r} ({entries[name].value}) names algorithm {record.name!r}: the two must agree"
            )
        return _add(record)
    if is_python_name(name):
        obj, source = load_named(name, "algorithm")
        return _add(_record(obj, source, "algorithm"))
    raise ValueError(
        f"unknown algorithm {name!r}; algorithms: {', '.join(algorithm_names(benchmark))} (or FILE.py:CLASS, "
        "package.module:CLASS)"
    )


def _reduce(algorithm: Algorithm) -> tuple[Any, ...]:
    """How a record pickles: one loaded from a file is loaded again from it in the process that unpickles it.

    Its classes live in a module with no importable name, which a worker process could not find.
    """
    if algorithm.source is not None:
        return get_algorithm, (algorithm.source,)
    return Algorithm, tuple(getattr(algorithm, field.name) for field in dataclasses.fields(Algorithm))


copyreg.pickle(Algorithm, _reduce)


def algorithm_names(benchmark: bool = False) -> list[str]:
    """Every algorithm's name: urgym's own, those registered and those of installed packages.

    ``benchmark``: only those the benchmark trains (not those that learn from the solved table).
    """
    names = [*BUILTIN_ALGORITHMS]
    names += [a.name for key, a in _REGISTERED.items() if key == a.name and a.name not in names]
    names += [name for name in _entry_points() if name not in names]
    if benchmark:
        names = [name for name in names if name != "distill" and not _uses_table(name)]
    return names


def _uses_table(name: str) -> bool:
    held = _REGISTERED.get(name)
    return held is not None and held.uses_table
