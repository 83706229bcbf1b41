"""Where a result came from: the code, the command, the date, the machine and its libraries, each seed's digest.

:func:`provenance` is what a run records of itself; :func:`machine` the processor, its vector instructions and the
versions of the libraries a seed's figures depend on (a seed gives bit-identical figures only with the same
libraries on the same kind of processor); :func:`figures_digest` the SHA-256 of a seed's figures (every metric at
every point, the final ones, the decisions: not the seconds), which ``urgym bench --verify`` compares with a rerun's.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from urgym.evaluation.bench.tasks import METRICS

import urgym

__all__ = ["LIBRARIES", "figures", "figures_digest", "machine", "provenance", "utc_now"]

LIBRARIES = ("numpy", "numba", "torch", "stable-baselines3", "sb3-contrib", "jax", "jaxlib", "mctx", "optax")
"""The libraries a learner's figures depend on: a seed gives bit-identical figures only with the same versions."""

_VECTOR_FLAGS = {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "asimd", "sve"}
"""The processor's vector instructions a library may choose its kernels by (and so round differently)."""

_FIGURES = ("decisions", "policy", *METRICS)
"""What a point's figures are: the decisions, how the policy was scored, and the metrics."""


def machine() -> dict[str, Any]:
    """The machine a figure was measured on, with the versions of the libraries it used (those installed)."""
    from importlib import metadata

    libraries = {}
    for name in LIBRARIES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            libraries[name] = metadata.version(name)
    cpu = _first_cpu()
    return {
        "cores": os.cpu_count(),
        "processor": cpu.get("model name") or platform.processor() or platform.machine(),
        "vector_instructions": sorted(set(cpu.get("flags", "").split()) & _VECTOR_FLAGS),
        "python": sys.version,
        "libraries": libraries,
    }


def _first_cpu() -> dict[str, str]:
    """The fields of the first processor in ``/proc/cpuinfo`` (none where there is no such file)."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    break  # the first processor's block ends at the first blank line
                name, _, value = line.partition(":")
                fields[name.strip()] = value.strip()
    except OSError:
        pass
    return fields


def _git(*args: str) -> str | None:
    """``git ARGS`` in urgym's source tree, or None where it is no checkout (an installed wheel) or git is absent."""
    tree = Path(urgym.__file__).resolve().parent.parent
    if not (tree / ".git").exists():
        return None
    try:
        done = subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def provenance(command: list[str] | None = None) -> dict[str, Any]:
    """What a run records of where it came from.

    The git commit of urgym's checkout and whether its tracked files were modified (or, from an installed package,
    no commit), urgym's version, the command line (``command``, default the process's own), and the UTC date.
    """
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no") if commit else None
    argv = list(sys.argv if command is None else command)
    if argv:
        argv[0] = Path(argv[0]).name or argv[0]
    return {
        "urgym": urgym.__version__,
        "commit": commit.strip() if commit else None,
        "modified": bool(status.strip()) if status is not None else None,
        "command": shlex.join(argv),
        "date": utc_now(),
    }


def utc_now() -> str:
    """The UTC date and time to the second, as provenance records it."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def figures(record: dict[str, Any]) -> dict[str, Any]:
    """A seed record's figures: its seed and decisions, and at every point and at the end the task's metrics.

    With them how the policy was scored and the point's decisions; not the seconds, nor a ``train`` run's own
    validation regret.
    """
    return {
        "seed": record["seed"],
        "decisions": record["decisions"],
        "curve": [_measured(point) for point in record["curve"]],
        "final": _measured(record["final"]),
    }


def _measured(point: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in point.items() if key in _FIGURES}


def figures_digest(record: dict[str, Any]) -> str:
    """SHA-256 of :func:`figures` as canonical JSON (keys sorted, floats as Python writes them: to the bit)."""
    text = json.dumps(figures(record), sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()
