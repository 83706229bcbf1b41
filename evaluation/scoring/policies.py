"""An agent's policy over a whole rule set: asked in large batches, kept compact, cached and resumable.

:func:`agent_policy` asks an agent its move in every decision (position and roll with a choice) of a rule set, pair
of layers by pair of layers, in batches of :data:`BATCH` through ``select_moves``, and returns it as a
:class:`urgym.solver.policy.Policy`. An agent that randomizes and can say how (``Agent.move_probabilities``) gives
its move distribution, kept as the move it favours and the chance of keeping it among n legal moves (every built-in
one fits that form exactly) or, for other distributions, every move's chance; one that cannot say is asked once per
decision with a random stream fixed by the decision and the seed, and its figures are those of that one draw.

Policies of the registered agents are cached (:func:`urgym.files.policy_cache_dir`, beside the table cache) under a
key of the agent's spec, the seed where it matters, the model files it names (by content), the rules and the urgym
version. An agent that computes its whole policy at once (``Agent.policy_table``: the searches) gives it so. Perfect
play (``perfect``, no slips) is neither asked nor cached: its policy is :class:`urgym.solver.policy.BestMoves` of
its table's values, whose moves each evaluation reads off the graph of the layer pair it is at. While
asking, a checkpoint is written atomically at most every :data:`CHECKPOINT_SECONDS`, so an interrupted run resumes
where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numba
import numpy as np
from urgym.agents import Agent, PerfectAgent, make_agent
from urgym.agents.registry import AGENTS, builtin_name, parse_spec
from urgym.solver import PositionIndex
from urgym.solver.budget import available_memory, format_size
from urgym.solver.graph import layer_pairs
from urgym.solver.policy import DENSE_TOL, BestMoves, Policy, block_chunks, count_decisions, decision_states

import urgym
from urgym import Rules, core, get_rules
from urgym.batch import Decisions, check_choices, every_roll
from urgym.files import hold_lock, policy_cache_dir, read_npz, write_atomic
from urgym.progress import progress_bar

__all__ = [
    "AgentPolicy",
    "ExactEstimate",
    "PolicyCacheError",
    "agent_policy",
    "estimate_exact",
    "policy_cache_path",
]

BATCH = 65_536
"""Decisions asked of an agent at once."""
CHUNK = 131_072
"""Positions whose legal moves are listed at once (about 140 MB)."""
CHECKPOINT_SECONDS = 60.0
"""The longest stretch of asking an interrupt can lose."""
POLICY_FORMAT = "urgym-policy"
POLICY_VERSION = 2
"""Version 2 adds the content's checksum to the header; a version 1 file is set aside and the agent asked again."""
UNCACHED = ("engine",)
"""Registered agents whose moves come from a program that may change between runs: never cached."""
TOL = 1e-12
"""How closely a distribution must fit the compact form (a favoured move and an equal share for the others)."""


class PolicyCacheError(ValueError):
    """A cached policy or checkpoint that does not belong to the agent and rules asked for, or is damaged."""


@dataclass(frozen=True)
class AgentPolicy:
    """An agent's policy over a rule set and how it was had."""

    spec: str
    rules: Rules
    policy: Policy | BestMoves
    asked: int
    """Decisions with a choice the agent was asked in this call (0 for a policy read from the cache)."""
    exact: bool
    """True unless the agent randomizes without giving its distribution: then the policy is one draw per decision."""
    seconds: float
    """Seconds spent asking in this call (0 when it came from the cache)."""
    cached: Path | None
    """The cache file it was read from or written to, None when not cached."""


def _file_digest(path: str) -> str | None:
    """The sha256 of a model file named in a spec, None if the value names no file."""
    try:
        if not os.path.isfile(path):
            return None
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    except OSError:
        return None


def _cache_key(agent: Agent, spec: str | Agent, rules: Rules, seed: int) -> str | None:
    """The key of an agent's policy in the cache, None for an agent whose moves the spec does not pin down.

    Only an agent given by its spec is cached: an agent object's ``spec`` names what it is (``td`` for any TD
    network), not which weights it plays.
    """
    if not isinstance(spec, str):
        return None
    name = builtin_name(spec)
    if name is None or name in UNCACHED:
        return None
    params = parse_spec(agent.spec)[1]
    info = AGENTS[name]
    identity = {
        "spec": agent.spec,
        "seed": seed if agent.randomizes else None,
        "files": {
            key: _file_digest(value)
            for key, value in sorted(params.items())
            if info.param(key or info.main_param).names_file
        },
        "rules": rules.to_dict(),
        "urgym": urgym.__version__,
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


def policy_cache_path(rules: Rules, key: str, directory: str | os.PathLike | None = None) -> Path:
    """Where the policy of cache key ``key`` lies (a fixed pattern: the rules' short name, pieces and the key)."""
    folder = Path(directory) if directory is not None else policy_cache_dir()
    return folder / f"{rules.name}-{rules.pieces}p-{key}.npz"


class _Asking:
    """The policy being asked: its arrays, how far it got, and its checkpoint."""

    def __init__(self, rows: int, dense: bool) -> None:
        self.choices = np.zeros(rows, dtype=np.uint8)
        self.keep = np.full(core.MAX_MOVES + 1, np.nan)
        self.keep[:2] = 1.0
        self.dense = np.zeros((rows, core.MAX_MOVES)) if dense else np.zeros((0, core.MAX_MOVES))
        self.pairs_done = 0
        self.asked = 0

    def policy(self) -> Policy:
        keep = np.where(np.isnan(self.keep), 1.0, self.keep)
        return Policy(self.choices, keep, self.dense)

    def arrays(self, key: str, exact: bool) -> dict[str, np.ndarray]:
        progress = np.array([self.pairs_done, self.asked], dtype=np.int64)
        header = {
            "format": POLICY_FORMAT,
            "version": POLICY_VERSION,
            "key": key,
            "exact": exact,
            "checksum": _content_checksum(key, exact, self.choices, self.keep, self.dense, progress),
        }
        return {
            "header": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
            "choices": self.choices,
            "keep": self.keep,
            "dense": self.dense,
            "progress": progress,
        }

    @classmethod
    def load(cls, path: Path, key: str, rows: int) -> tuple[_Asking, bool]:
        """A checkpoint or cached policy of ``key`` with ``rows`` decisions, and whether it is exact."""
        limit = rows * (1 + 8 * core.MAX_MOVES) + (1 << 16)
        try:
            arrays = read_npz(path, limit, "a cached policy")
            header = json.loads(bytes(arrays["header"]).decode())
            choices, keep, dense, progress = (arrays[k] for k in ("choices", "keep", "dense", "progress"))
        except (ValueError, KeyError, UnicodeDecodeError) as err:
            raise PolicyCacheError(f"{path} is not an intact policy ({err})") from None
        if not isinstance(header, dict):
            raise PolicyCacheError(f"{path} is not an intact policy (its header is not a JSON object)")
        if header.get("format") != POLICY_FORMAT or header.get("version") != POLICY_VERSION:
            raise PolicyCacheError(f"{path} is not a version {POLICY_VERSION} urgym policy")
        if header.get("key") != key:
            raise PolicyCacheError(f"{path} holds another agent's or rule set's policy (key {header.get('key')!r})")
        if (
            choices.shape != (rows,)
            or choices.dtype != np.uint8
            or keep.shape != (core.MAX_MOVES + 1,)
            or keep.dtype != np.float64
            or dense.dtype != np.float64
            or dense.shape not in ((0, core.MAX_MOVES), (rows, core.MAX_MOVES))
            or progress.shape != (2,)
        ):
            raise PolicyCacheError(f"{path}: its arrays do not fit a policy of {rows:,} decisions")
        exact = header.get("exact")
        if not isinstance(exact, bool) or header.get("checksum") != _content_checksum(
            key, exact, choices, keep, dense, progress
        ):
            raise PolicyCacheError(f"{path} is damaged or was changed: its content does not match its checksum")
        if progress.dtype != np.int64 or progress.min() < 0 or int(choices.max(initial=0)) >= core.MAX_MOVES:
            raise PolicyCacheError(f"{path}: its progress or choices are out of range")
        try:
            Policy(choices, np.where(np.isnan(keep), 1.0, keep), dense).check(rows, str(path))
        except ValueError as err:
            raise PolicyCacheError(str(err)) from None
        asking = cls(0, False)
        asking.choices, asking.keep, asking.dense = choices, keep, dense
        asking.pairs_done, asking.asked = int(progress[0]), int(progress[1])
        return asking, bool(header.get("exact"))


def _content_checksum(key: str, exact: bool, *arrays: np.ndarray) -> str:
    """The sha256 of a policy's identity and content: a file that was damaged or changed no longer matches it."""
    digest = hashlib.sha256(f"{key}:{exact}".encode())
    for array in arrays:
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        digest.update(np.ascontiguousarray(array).tobytes())
    return "sha256:" + digest.hexdigest()


class _Checkpoint:
    """Writes the policy asked so far beside its cache file; a full disk costs the checkpoints, never the run."""

    def __init__(self, path: Path, asking: _Asking, key: str, exact: bool) -> None:
        self.path, self.asking, self.key, self.exact, self.failed = path, asking, key, exact, False

    def __call__(self) -> None:
        if self.failed:
            return
        try:
            _save(self.path, self.asking.arrays(self.key, self.exact))
        except OSError as err:
            self.failed = True
            warnings.warn(
                f"could not write the checkpoint {self.path} ({err.strerror or err}); asking goes on without "
                "checkpoints (an interrupt now starts again)",
                stacklevel=2,
            )


def _set_aside(path: Path, err: Exception) -> None:
    """Move a damaged or foreign cached policy aside (``NAME.corrupt``), saying so; it is never trusted."""
    aside = path.with_name(path.name + ".corrupt")
    try:
        os.replace(path, aside)
        where = f"moved aside to {aside}"
    except OSError as move:
        where = f"and it cannot be moved aside ({move.strerror}): it is ignored"
    warnings.warn(f"{err}; {where}, and the agent is asked again", stacklevel=3)


def _save(path: Path, arrays: dict[str, np.ndarray]) -> None:
    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)

    write_atomic(path, write)


class _NotCompactError(Exception):
    """The agent's distribution does not fit the compact form: ask again keeping every move's chance."""


class _NoDistributionError(Exception):
    """The agent's ``move_probabilities`` raised NotImplementedError (it does not say): ask it for one draw."""


def _answer(agent: Agent, method: str, *args: Any) -> Any:
    """What ``agent.method(*args)`` answers, its failure named as the agent's (plug-ins are code from outside)."""
    spec = agent.spec
    try:
        return getattr(agent, method)(*args)
    except NotImplementedError:
        if method == "move_probabilities":
            raise _NoDistributionError from None
        raise ValueError(f"agent {spec}: {method} raised NotImplementedError") from None
    except (KeyboardInterrupt, MemoryError):
        raise
    except Exception as err:  # a plug-in's own failure, named as such instead of a traceback from inside urgym
        raise ValueError(f"agent {spec}: {method} raised {type(err).__name__}: {err}") from err


def _as_floats(answer: Any, rows: int, spec: str) -> np.ndarray:
    """``move_probabilities``' answer as float64, or the error that says what it must be."""
    try:
        return np.asarray(answer, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"agent {spec}: move_probabilities gave a {type(answer).__name__} that is no float[{rows}, "
            f"{core.MAX_MOVES}] array of chances"
        ) from None


def _fit(asking: _Asking, rows: np.ndarray, probabilities: np.ndarray, counts: np.ndarray, spec: str) -> None:
    """Keep a batch of move distributions (``probabilities[i, :counts[i]]``) in ``asking``'s form."""
    width = np.arange(core.MAX_MOVES)[None, :]
    legal = width < counts[:, None]
    if (
        probabilities.shape != (len(rows), core.MAX_MOVES)
        or not np.all(np.isfinite(probabilities))
        or np.any(probabilities < 0)
        or np.any(probabilities[~legal] != 0)
        or np.any(np.abs(probabilities.sum(axis=1) - 1.0) > DENSE_TOL)
    ):
        raise ValueError(
            f"agent {spec}: move_probabilities must give float[{len(rows)}, {core.MAX_MOVES}] chances over each "
            "decision's legal moves (non-negative, summing to 1, 0 beyond the legal moves)"
        )
    if len(asking.dense):
        asking.dense[rows] = probabilities
        asking.choices[rows] = probabilities.argmax(axis=1)
        return
    chosen, fits = _odd_one_out(probabilities, legal, counts, probabilities.argmax(axis=1))
    low_chosen, low_fits = _odd_one_out(probabilities, legal, counts, np.where(legal, probabilities, 2).argmin(axis=1))
    chosen = np.where(fits, chosen, low_chosen)  # the favoured move may be the one played least (a large slip)
    if not np.all(fits | low_fits):
        raise _NotCompactError
    kept = probabilities[np.arange(len(rows)), chosen]
    for n in np.unique(counts):
        values = kept[counts == n]
        known = asking.keep[n]
        reference = values[0] if np.isnan(known) else known
        if np.any(np.abs(values - reference) > TOL):
            raise _NotCompactError
        asking.keep[n] = reference
    asking.choices[rows] = chosen


def _odd_one_out(probabilities, legal, counts, chosen) -> tuple[np.ndarray, np.ndarray]:
    """``chosen`` and, per row, whether every other legal move has the same chance (the compact form)."""
    kept = probabilities[np.arange(len(chosen)), chosen]
    share = (1.0 - kept) / np.maximum(counts - 1, 1)
    others = legal & (np.arange(core.MAX_MOVES)[None, :] != chosen[:, None])
    return chosen, ~np.any(others & (np.abs(probabilities - share[:, None]) > TOL), axis=1)


def _streams(seed: int, rows: np.ndarray) -> np.ndarray:
    """A random stream per decision, fixed by ``seed`` and the decision (splitmix64 of both)."""
    with np.errstate(over="ignore"):  # arithmetic modulo 2^64 is the point (a seed past it too: a tournament's + i)
        z = (rows.astype(np.uint64) + np.uint64(seed % 2**64) * np.uint64(0x9E3779B97F4A7C15)) * np.uint64(
            0xBF58476D1CE4E5B9
        )
    z ^= z >> np.uint64(31)
    return np.ascontiguousarray(z.reshape(-1, 1))


def _ask(
    agent: Agent,
    rules: Rules,
    index: PositionIndex,
    asking: _Asking,
    seed: int,
    distribution: bool,
    checkpoint: Any,
    progress: bool,
) -> None:
    """Ask ``agent`` every decision of the pairs ``asking`` has not done, checkpointing as it goes."""
    n_rolls = int(core.geometry(rules)[0]["n_rolls"])
    layers = list(layer_pairs(index))
    done = sum(layer.positions for layer in layers[: asking.pairs_done])
    bar = progress_bar(index.size, f"policy of {agent.spec}", progress, unit="pos", unit_scale=True, initial=done)
    saved = time.monotonic()
    try:
        for p in range(asking.pairs_done, len(layers)):
            layer = layers[p]
            if not layer.over:  # else the game is over there: no decision
                _ask_pair(agent, rules, index, asking, seed, distribution, layer.start, layer.end, n_rolls)
            asking.pairs_done = p + 1
            bar.update(layer.positions)
            if checkpoint is not None and time.monotonic() - saved > CHECKPOINT_SECONDS:
                checkpoint()
                saved = time.monotonic()
    finally:
        bar.close()


def _ask_pair(agent, rules, index, asking, seed, distribution, start, end, n_rolls) -> None:
    """Ask every decision of the layer pair ``start:end``, a chunk of blocks at a time.

    (The legal moves of a chunk, held at once, take about 1 KB per position.)
    """
    for lo, hi in block_chunks(index, start, end, CHUNK):
        every = every_roll(decision_states(index, lo, hi), rules)
        moves, counts = every.moves, every.counts
        rows = np.flatnonzero(counts > 1)
        for first in range(0, len(rows), BATCH):
            chunk = rows[first : first + BATCH]
            decisions = every.take(chunk, _streams(seed, lo * n_rolls + chunk))
            if distribution:
                answer = _answer(agent, "move_probabilities", rules, decisions)
                probabilities = _as_floats(answer, len(chunk), agent.spec)
                _fit(asking, lo * n_rolls + chunk, probabilities, counts[chunk], agent.spec)
            else:
                answer = _answer(agent, "select_moves", rules, decisions)
                chosen = check_choices(decisions, answer, agent.spec, rules)
                asking.choices[lo * n_rolls + chunk] = (moves[chunk] == chosen[:, None]).argmax(axis=1)
            asking.asked += len(chunk)


def agent_policy(
    agent: str | Agent,
    rules: Rules | str,
    seed: int = 0,
    progress: bool = True,
    cache: bool = True,
    directory: str | os.PathLike | None = None,
) -> AgentPolicy:
    """The policy ``agent`` plays over every decision of ``rules`` (see the module docstring).

    Args:
        agent: The agent or its spec.
        rules: The rule set (one the solver indexes).
        seed: The agent's seed (and the decisions' random streams).
        progress: Show a progress bar.
        cache: Read the policy from the cache, or write it there (and checkpoint while asking).
        directory: The cache folder of policies (default: ``policies`` in urgym's cache folder).

    Raises:
        ValueError: If the agent cannot play the rules or answers an illegal move or a bad distribution.
    """
    rules = get_rules(rules)
    built = make_agent(agent, seed=seed)
    built.check_rules(rules)
    if _plays_perfectly(built):  # no asking: its moves come off each layer pair's graph as it is evaluated
        return AgentPolicy(built.spec, rules, BestMoves(built.table(rules).probabilities()), 0, True, 0.0, None)
    index = PositionIndex(rules)
    rows = index.size * int(core.geometry(rules)[0]["n_rolls"])
    key = _cache_key(built, agent, rules, seed) if cache else None
    path = policy_cache_path(rules, key, directory) if key else None
    if path is not None and path.exists():
        try:
            asking, exact = _Asking.load(path, key, rows)
            if asking.pairs_done == len(index.pairs):
                return AgentPolicy(built.spec, rules, asking.policy(), 0, exact, 0.0, path)  # read, not asked
        except PolicyCacheError as err:
            _set_aside(path, err)
    built.prepare(rules)
    distribution = built.randomizes and _gives_probabilities(built)
    began = time.perf_counter()
    lock = None
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            lock = _wait_for_lock(path.with_name(path.name + ".lock"), built.spec)
        except OSError as err:
            raise ValueError(
                f"the policy cache {path.parent} cannot be used ({err.strerror or err}): set URGYM_POLICY_CACHE to "
                "a writable folder, or ask without the cache (evaluate --no-policy-cache; cache=False)"
            ) from None
        if path.exists():  # another run asked it while this one waited
            try:
                asking, exact = _Asking.load(path, key, rows)
                if asking.pairs_done == len(index.pairs):
                    lock.close()
                    return AgentPolicy(built.spec, rules, asking.policy(), 0, exact, 0.0, path)  # read, not asked
            except PolicyCacheError:
                pass
    try:
        asking, exact = _ask_all(built, rules, index, rows, seed, distribution, path, key, progress)
    finally:
        if lock is not None:
            lock.close()
    return AgentPolicy(built.spec, rules, asking.policy(), asking.asked, exact, time.perf_counter() - began, path)


def _plays_perfectly(agent: Agent) -> bool:
    """Whether ``agent`` is the perfect player without slips, whose policy is its table's :class:`BestMoves`."""
    return isinstance(agent, PerfectAgent) and not agent.randomizes


def _wait_for_lock(path: Path, spec: str) -> Any:
    """Hold the lock of a policy's cache file, waiting (and saying so) while another run asks the same policy."""
    said = False
    while True:
        try:
            return hold_lock(path, "busy")[0]
        except ValueError:
            if not said:
                print(f"waiting for another run that is asking {spec} its policy ({path})", file=sys.stderr)
                said = True
            time.sleep(1.0)


def _gives_probabilities(agent: Agent) -> bool:
    """Whether the agent says how it randomizes (it overrides :meth:`Agent.move_probabilities`)."""
    return type(agent).move_probabilities is not Agent.move_probabilities


def _ask_all(agent, rules, index, rows, seed, distribution, path, key, progress) -> tuple[_Asking, bool]:
    """Ask every pair, resuming the checkpoint beside ``path`` (None: no cache); cache the result there.

    Tried in turn: the compact form of the distribution, every move's chance (where it fits in memory), one draw per
    decision. Returns the policy and whether it is the agent's exact one.
    """
    partial = path.with_name(path.name + ".partial.npz") if path is not None else None
    modes = [(True, False), (True, True), (False, False)] if distribution else [(False, False)]
    table = None if agent.randomizes else _answer(agent, "policy_table", rules, progress)
    if table is not None:  # the agent's whole policy at once (a search by dynamic programming)
        modes = []
        asking = _Asking(0, False)
        asking.choices, asking.pairs_done, asking.asked = table, len(index.pairs), count_decisions(index)
        asking.policy().check(rows, f"the policy table of {agent.spec}")
        exact = True
    says_not = False
    for asks_distribution, dense in modes:
        exact = asks_distribution or not agent.randomizes
        if (dense and not _dense_fits(rows, agent.spec)) or (asks_distribution and says_not):
            continue
        asking = _resume(partial, key, rows, dense) or _Asking(rows, dense)
        checkpoint = None
        if partial is not None:
            checkpoint = _Checkpoint(partial, asking, key, exact)
        try:
            _ask(agent, rules, index, asking, seed, asks_distribution, checkpoint, progress)
            break
        except (_NotCompactError, _NoDistributionError) as err:
            says_not = isinstance(err, _NoDistributionError)  # its documented "no distribution": one draw
            if partial is not None:
                partial.unlink(missing_ok=True)
    if path is not None:
        try:
            _save(path, asking.arrays(key, exact))
        except OSError as err:  # a full disk costs the cache, not the result
            warnings.warn(f"could not cache the policy in {path} ({err})", stacklevel=3)
        partial.unlink(missing_ok=True)
    return asking, exact


def _resume(partial: Path | None, key: str | None, rows: int, dense: bool) -> _Asking | None:
    """The checkpoint of an interrupted run of the same policy, None if there is none (or a damaged one)."""
    if partial is None or not partial.exists():
        return None
    try:
        asking, _ = _Asking.load(partial, key, rows)
    except PolicyCacheError as err:
        _set_aside(partial, err)
        return None
    if bool(len(asking.dense)) != dense:
        return None
    print(f"resuming from {partial} ({asking.pairs_done} layer pairs already asked)", file=sys.stderr)
    return asking


def _dense_fits(rows: int, spec: str) -> bool:
    """Whether every move's chance of every decision fits in half the free memory (else: one draw per decision)."""
    needed = rows * core.MAX_MOVES * 8
    if needed <= available_memory() // 2:
        return True
    warnings.warn(
        f"agent {spec}: its move distribution fits no compact form, and keeping every move's chance of {rows:,} "
        f"decisions needs {format_size(needed)} of memory; it is evaluated as one draw of its moves per decision",
        stacklevel=4,
    )
    return False


# --- what it costs ----------------------------------------------------------------------------------------
EVALUATE_RATE = 300_000
"""Positions a core evaluates per second, one evaluation of two policies (measured: finkel 5 pieces, 14.7 M
positions in 24 s on 2 cores)."""
BYTES_PER_POSITION = 44
"""Peak memory of an evaluation per position: two values, the sweep's changes, and the largest pair's graph and the
edges of each deterministic policy's moves there (spread over every position: finkel 7's largest pair holds a fifth
of them)."""
PERFECT_RATE = 400_000
"""Decisions a core answers per second by the solved table's lookups (``perfect:epsilon=E``; measured on finkel)."""
SAMPLE = 2048
"""Positions drawn to count the decisions and time each agent."""


@dataclass(frozen=True)
class ExactEstimate:
    """What an exact evaluation takes on this machine, before it starts."""

    positions: int
    decisions: int
    """Decisions with a choice, estimated from a sample of positions."""
    ask_seconds: dict[str, float]
    """Per agent to be asked (those not cached): seconds at its measured decisions per second."""
    evaluate_seconds: float
    memory: int
    disk: int
    solve_minutes: float = 0.0
    """Minutes to solve the rules' table first, where it is needed and not cached."""

    @property
    def minutes(self) -> float:
        """The whole estimate in minutes."""
        return (sum(self.ask_seconds.values()) + self.evaluate_seconds) / 60 + self.solve_minutes

    def describe(self) -> str:
        """In words, for the line printed before the work starts."""
        asking = ", ".join(f"{spec} {seconds / 60:.1f} min" for spec, seconds in self.ask_seconds.items())
        return (
            (f"solving the table first ({self.solve_minutes:.1f} min), " if self.solve_minutes else "")
            + f"{self.positions:,} positions, about {self.decisions:,} decisions to ask"
            + (f" ({asking})" if asking else " (every policy cached)")
            + f", {self.evaluate_seconds / 60:.1f} min to evaluate; about {self.minutes:.1f} min in all, "
            f"{format_size(self.memory)} of memory, {format_size(self.disk)} of cache on disk"
        )


def estimate_exact(
    agents: list[str | Agent], rules: Rules | str, evaluations: int, seed: int = 0, cache: bool = True
) -> ExactEstimate:
    """The cost of asking ``agents`` their policies (those not cached) and running ``evaluations`` evaluations.

    Each agent is timed on the decisions of :data:`SAMPLE` random positions, after a warm-up batch, so the
    figure holds at its batched speed on this machine.
    """
    rules = get_rules(rules)
    index = PositionIndex(rules)
    n_rolls = int(core.geometry(rules)[0]["n_rolls"])
    rng = np.random.default_rng(0)
    picks = rng.integers(0, index.size, size=min(SAMPLE, index.size))
    states = np.array([_code(index, int(i)) for i in picks], dtype=np.int64)
    states = states[states >= 0]
    every = every_roll(states, rules)
    choice = every.counts > 1
    share = choice.sum() / (len(picks) * n_rolls)  # finished and impossible positions count, with no decision
    decisions = round(float(share) * index.size * n_rolls)
    rows = np.flatnonzero(choice)
    sample = every.take(rows, _streams(seed, rows))
    ask_seconds = {}
    cached = 0  # the policies the run will write to the cache (an agent object or a plug-in's: none)
    threads = numba.get_num_threads()  # those the caller allows (one inside ``one_thread``)
    for agent in agents:
        built = make_agent(agent, seed=seed)
        if _plays_perfectly(built):
            continue
        key = _cache_key(built, agent, rules, seed) if cache else None
        if key and policy_cache_path(rules, key).exists():
            continue
        cached += key is not None
        whole = None
        if not built.randomizes:
            whole = _answer(built, "policy_table_seconds", rules, threads)
        if whole is not None and (
            isinstance(whole, bool) or not isinstance(whole, (int, float)) or not 0 <= whole < math.inf
        ):
            raise ValueError(
                f"agent {built.spec}: policy_table_seconds gave {whole!r}; it must be a non-negative finite number "
                "of seconds, or None (no whole-policy computation)"
            )
        if whole is not None:  # no need to prepare it (a table solved first, say) to know
            ask_seconds[built.spec] = whole
            continue
        if builtin_name(agent if isinstance(agent, str) else built.spec) == "perfect":  # slips: a table lookup each
            ask_seconds[built.spec] = decisions / (PERFECT_RATE * threads)
            continue
        built.prepare(rules)
        rate = _rate(built, rules, sample)
        ask_seconds[built.spec] = decisions / rate if rate > 0 else math.inf
    evaluate_seconds = evaluations * index.size / (EVALUATE_RATE * threads)
    memory = (512 << 20) + index.size * (BYTES_PER_POSITION + 8 + 2 * n_rolls)
    disk = cached * index.size * n_rolls
    return ExactEstimate(index.size, decisions, ask_seconds, evaluate_seconds, memory, disk)


def _code(index: PositionIndex, i: int) -> int:
    try:
        position = index.unrank(i)
    except ValueError:  # an impossible position of the dense index (both sides have scored everything)
        return -1
    return -1 if position.is_over else position.code  # a finished game has no decision


def _rate(agent: Agent, rules: Rules, sample: Decisions) -> float:
    """Decisions per second the agent answers ``sample`` at (after a warm-up batch)."""
    if len(sample) == 0:
        return math.inf
    _answer(agent, "select_moves", rules, sample.take(np.arange(min(8, len(sample)))))
    began = time.perf_counter()
    _answer(agent, "select_moves", rules, sample)
    return len(sample) / max(time.perf_counter() - began, 1e-9)


EXACT_MAX_MINUTES = 120.0
"""The longest exact evaluation a command starts without being told more (``--max-minutes``)."""


def check_exact_fits(
    estimate: ExactEstimate, max_minutes: float = EXACT_MAX_MINUTES, subject: str = "exact evaluation"
) -> None:
    """Refuse, before any work, an exact evaluation that does not fit this machine's memory or ``max_minutes``.

    Args:
        estimate: What the evaluation takes.
        max_minutes: The longest evaluation allowed.
        subject: How the error names the evaluation (the commands name its rule set).

    Raises:
        ValueError: Naming the estimate and what was over.
    """
    if isinstance(max_minutes, bool) or not isinstance(max_minutes, (int, float)) or not 0 < max_minutes < math.inf:
        raise ValueError(f"--max-minutes (max_minutes) must be a positive number of minutes, got {max_minutes!r}")
    if not math.isfinite(estimate.minutes) or estimate.minutes < 0:
        raise ValueError(
            f"the estimate of this exact evaluation is {estimate.minutes!r} minutes, not a duration "
            f"({estimate.describe()}): an agent's policy_table_seconds must be a non-negative finite number or None"
        )
    free, over = available_memory(), []  # every limit it is over, so that one answer names them all
    if estimate.memory > free:
        over.append(f"needs about {format_size(estimate.memory)} of memory and {format_size(free)} is free")
    if estimate.minutes > max_minutes:
        slowest = max(estimate.ask_seconds, key=estimate.ask_seconds.get, default=None)
        over.append(
            f"would take about {estimate.minutes:,.0f} min, more than --max-minutes {max_minutes:g}"
            + (f" (the slowest to ask is {slowest}; raise --max-minutes)" if slowest else " (raise --max-minutes)")
        )
    if over:
        raise ValueError(
            f"{subject} {' and '.join(over)} ({estimate.describe()}); evaluate a smaller rule set (--pieces)"
        )
