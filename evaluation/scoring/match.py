"""Match play between two agents, every decision scored against the solved table.

Game g of a match uses the dice stream (seed, g), and agent 0 plays light in the even games, so each agent
plays light in half the games and a seed fixes every roll. A task's games run in lockstep on the core's batched
game flow (:func:`urgym.evaluation.scoring._kernels.advance_match`): the agents that run in numba (the baselines and
``perfect``) choose inside the kernel, and each Python agent is asked once per step for every game awaiting its
move (:meth:`urgym.agents.Agent.select_moves`). One loop plays every kind of agent, with the same dice and the same
table lookups.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from urgym.agents import Agent, BaselineAgent, PerfectAgent, make_agent
from urgym.evaluation.scoring import _kernels as EK
from urgym.evaluation.scoring.runner import RunOptions, run_tasks, table_key, worker_agent, worker_table
from urgym.evaluation.scoring.stats import MeanInterval, RegretSummary, WinRate
from urgym.solver import IndexTables, SolvedTable
from urgym.solver.lookup import TableView

from urgym import Game, GameRecord, Position, Rules, core
from urgym.batch import check_choices, decisions_of, return_streams
from urgym.core import geometry
from urgym.files import check_not_broken_link, check_output, claim_folder, precious_kind, release_folder
from urgym.records import player_name

__all__ = [
    "RECORD_NAME",
    "AgentMatchStats",
    "MatchResult",
    "numba_kind",
    "play_match",
    "record_name",
    "records_directory",
]


def numba_kind(agent: Agent) -> tuple[int, float] | None:
    """(``core.POLICY_*`` kind, slip chance) when the agent can choose inside the numba match kernel, else None."""
    if isinstance(agent, BaselineAgent):
        return core.BUILTIN_POLICIES[agent.policy], 0.0
    if isinstance(agent, PerfectAgent):
        return core.POLICY_PERFECT, agent.epsilon
    return None


@dataclass
class GamesTask:
    """Games ``first_game .. first_game + n_games - 1`` of a match, played in lockstep."""

    specs: tuple[str | Agent, str | Agent]
    rules: Rules
    table_path: str | None
    seed: int
    first_game: int
    n_games: int
    inline: bool
    """Let numba agents choose inside the kernel (False asks them through ``select_moves`` like any agent)."""
    log_moves: bool = False


@dataclass
class GamesChunk:
    """What a task's games produced (regret histograms are sent sparse)."""

    winners: np.ndarray
    turns: np.ndarray
    errors: np.ndarray
    acc: np.ndarray
    hist_bins: list[np.ndarray]
    hist_counts: list[np.ndarray]
    legal: np.ndarray
    seconds: float
    moves: list[np.ndarray] | None = None
    """With ``log_moves``: per game, the move played at every decision (passes are implied by the dice)."""


LOG_PER_GAME = 400
"""Room for logged moves per game; a longer game makes the task play again with more room."""


def play_games_task(task: GamesTask) -> GamesChunk:
    """Play one task's games (runs in a worker)."""
    table = worker_table(task.table_path, task.rules)
    agents = [worker_agent(spec, slot, task.rules, table) for slot, spec in enumerate(task.specs)]
    for slot, agent in enumerate(agents):  # an agent's own stream, fixed by the task: not by worker or order
        agent.reseed(_agent_seed(task.seed, task.first_game, slot))
    kinds = [numba_kind(a) if task.inline else None for a in agents]
    kinds = [k if k is None or k[0] != core.POLICY_PERFECT or table is not None else None for k in kinds]
    setup = EK.MatchSetup(
        np.array([core.POLICY_EXTERNAL if k is None else k[0] for k in kinds], dtype=np.int64),
        np.array([0.0 if k is None else k[1] for k in kinds]),
        table is not None,
    )
    view = table.view if table is not None else _NO_TABLE
    width = LOG_PER_GAME if task.log_moves else 0
    while True:
        start = time.perf_counter()
        tallies, flows, python_seconds = _play_lockstep(task, agents, setup, view, width)
        if width == 0 or tallies.log_count.max() <= width:
            break
        width = int(tallies.log_count.max())  # the same games again (same dice), with room for every move
    seconds = time.perf_counter() - start
    acc = tallies.acc
    numba_slots = [slot for slot in range(2) if setup.kinds[slot] != core.POLICY_EXTERNAL]
    if numba_slots:  # one kernel plays the numba agents: share its time out by their decisions
        kernel_seconds = seconds - python_seconds.sum()
        choices = acc[numba_slots, EK.ACC_CHOICES]
        acc[numba_slots, EK.ACC_SECONDS] = kernel_seconds * choices / max(choices.sum(), 1)
    for slot in range(2):
        if setup.kinds[slot] == core.POLICY_EXTERNAL:
            acc[slot, EK.ACC_SECONDS] = python_seconds[slot]
    light_agent = flows["game"] % 2
    light_won = ((flows["state"] >> core.TURN_SHIFT) & 1) == 1  # a finished game is seen by its loser
    winners = np.where(light_won, light_agent, 1 - light_agent).astype(np.int8)
    moves = [tallies.log[i, : tallies.log_count[i]].copy() for i in range(task.n_games)] if width else None
    nonzero = [np.flatnonzero(h) for h in tallies.hist]
    return GamesChunk(
        winners,
        flows["turns"].astype(np.int32),
        tallies.errors,
        acc,
        nonzero,
        [h[b] for h, b in zip(tallies.hist, nonzero, strict=True)],
        tallies.legal,
        seconds,
        moves,
    )


def _play_lockstep(
    task: GamesTask, agents: list[Agent], setup: EK.MatchSetup, view: TableView, width: int
) -> tuple[EK.MatchTallies, np.ndarray, np.ndarray]:
    """Play a task's games in lockstep; returns the tallies, the finished games and each Python agent's seconds."""
    geom = geometry(task.rules)
    flows = core.flow_buffers(task.n_games)
    core.start_games(flows, task.rules.pieces, np.uint64(task.seed), task.first_game)
    tallies = EK.match_tallies(task.n_games, width)
    chosen = np.full(task.n_games, -1, dtype=np.int64)
    seconds = np.zeros(2)
    while EK.advance_match(flows, chosen, geom, view, setup, tallies):
        waiting = np.flatnonzero(flows["n"] > 0)
        slots = ((flows["state"][waiting] >> core.TURN_SHIFT) & 1) ^ (flows["game"][waiting] & 1)
        chosen[:] = -1
        for slot, agent in enumerate(agents):
            games = waiting[slots == slot]
            if games.size == 0:
                continue
            decisions = decisions_of(flows, games, slot)
            began = time.perf_counter()
            answer = agent.select_moves(task.rules, decisions)
            seconds[slot] += time.perf_counter() - began
            chosen[games] = check_choices(decisions, answer, f"agent {agent.spec!r}", task.rules)
            return_streams(flows, games, slot, decisions)
    return tallies, flows, seconds


def _empty_table() -> TableView:
    """A table view of no positions, for matches without a table (nothing is looked up in it)."""
    empty = np.zeros(1, dtype=np.int64)
    return TableView(
        np.zeros(1),
        1.0,
        IndexTables(0, 0, 0, empty, empty, empty, empty, empty, empty, empty, np.zeros((1, 9), dtype=np.int64)),
    )


_NO_TABLE = _empty_table()


def _agent_seed(seed: int, first_game: int, slot: int) -> int:
    """The seed of a Python agent's own stream in the task starting at ``first_game`` (apart from the dice)."""
    return int(np.random.SeedSequence((seed, first_game, slot)).generate_state(1, np.uint64)[0])


@dataclass(frozen=True)
class AgentMatchStats:
    """One agent's side of a match."""

    spec: str
    wins: WinRate
    as_light: WinRate
    as_dark: WinRate
    regret: RegretSummary | None
    luck_adjusted: MeanInterval | None = None
    """The win rate with the dice taken out (see :mod:`urgym.evaluation.review.luck`); needs the table."""
    luck_adjusted_as_light: MeanInterval | None = None
    luck_adjusted_as_dark: MeanInterval | None = None

    def to_dict(self) -> dict[str, Any]:
        """The agent's figures as plain JSON."""

        def adjusted(interval: MeanInterval | None) -> dict[str, float] | None:
            return interval.to_dict() if interval else None

        return {
            "agent": self.spec,
            "win_rate": self.wins.to_dict(),
            "as_light": self.as_light.to_dict(),
            "as_dark": self.as_dark.to_dict(),
            "regret": self.regret.to_dict() if self.regret else None,
            "luck_adjusted_win_rate": adjusted(self.luck_adjusted),
            "luck_adjusted_as_light": adjusted(self.luck_adjusted_as_light),
            "luck_adjusted_as_dark": adjusted(self.luck_adjusted_as_dark),
        }


@dataclass(frozen=True)
class MatchResult:
    """A match's outcome: each agent's statistics and the games' shape."""

    rules: Rules
    games: int
    seed: int
    agents: tuple[AgentMatchStats, AgentMatchStats]
    turns_per_player: float
    """Mean turns per player per game (a turn ends when the dice pass to the other side)."""
    legal_moves_per_decision: float
    """Mean legal moves over every decision with at least one legal move (the branching factor b)."""
    seconds: float
    winners: np.ndarray = field(repr=False)
    """Per game, the winning agent (0 or 1); agent 0 played light in the even games."""

    @property
    def games_per_second(self) -> float:
        """Games played per second of wall time."""
        return self.games / self.seconds if self.seconds else float("inf")

    def to_dict(self) -> dict[str, Any]:
        """The match's result as plain JSON."""
        return {
            **self.rules.report_header(),
            "games": self.games,
            "seed": self.seed,
            "agents": [a.to_dict() for a in self.agents],
            "turns_per_player": self.turns_per_player,
            "legal_moves_per_decision": self.legal_moves_per_decision,
            "seconds": self.seconds,
        }


def play_match(
    agent: str | Agent,
    opponent: str | Agent,
    rules: Rules,
    games: int = 1000,
    seed: int = 0,
    table: SolvedTable | None = None,
    run: RunOptions = RunOptions(),
    use_numba: bool = True,
) -> MatchResult:
    """Play ``games`` games between two agents, alternating sides, and score every decision.

    Args:
        agent: The agent measured: a spec or an agent (with several workers it is pickled to each worker).
        opponent: Its opponent, in the same forms.
        rules: The rule set.
        games: Games to play (sides alternate, so an even number gives each agent light equally often).
        seed: Fixes the dice and the agents' randomness: the same seed gives the same numbers.
        table: The solved table of ``rules`` for regrets (None: no regret figures).
        run: How the games run (workers, backend, progress bar, saving the games' records): a
            :class:`~urgym.evaluation.scoring.runner.RunOptions`.
        use_numba: Let the agents that can choose inside the numba kernel do so (False asks every agent through
            :meth:`~urgym.agents.Agent.select_moves`, one decision at a time for those without a batch method; the games
            are the same).
    """
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    directory = records_directory(run.save_games, run.replace_games) if run.save_games is not None else None
    try:
        return _play(agent, opponent, rules, games, seed, table, run, use_numba, directory)
    finally:
        if directory is not None:
            release_folder(directory)


def _play(agent, opponent, rules, games, seed, table, run, use_numba, directory):
    """:func:`play_match` once its records' folder (if any) is claimed."""
    specs = (agent, opponent)
    built = [make_agent(s) for s in specs]  # validates both specs before any work starts
    for built_agent in built:
        built_agent.check_rules(rules)
    python_agents = not use_numba or any(numba_kind(a) is None for a in built)
    in_process = any(getattr(a, "in_process", False) for a in built)
    workers = run.worker_count(in_process)
    per_task = _games_per_task(games, workers, python_agents)
    if in_process:
        per_task = min(getattr(a, "games_per_batch", IN_PROCESS_TASK) for a in built)
    key = table_key(table, in_process=workers <= 1 and run.backend == "process")
    tasks = [
        GamesTask(specs, rules, key, seed, first, min(per_task, games - first), use_numba, directory is not None)
        for first in range(0, games, per_task)
    ]
    start = time.perf_counter()
    label = run.label(f"{built[0].spec} vs {built[1].spec}")
    chunks = run_tasks(play_games_task, tasks, [t.n_games for t in tasks], workers, run.backend, run.ray_address, label)
    seconds = time.perf_counter() - start
    if directory is not None:
        _save_records(directory, chunks, tasks, [a.spec for a in built])
    start_value = table.win_probability(Position.start(rules), "light") if table is not None else None
    return _combine(chunks, built, rules, games, seed, seconds, start_value)


RECORD_NAME = re.compile(r"game-\d{6,}\.json")
"""The file names of saved game records (``game-000012.json``)."""


def record_name(game: int) -> str:
    """The file name of game ``game``'s record in a ``save_games`` folder."""
    return f"game-{game:06d}.json"


def records_directory(path: str | os.PathLike, replace: bool = False) -> Path:
    """``path`` as a directory that records can be written to (created if missing), holding no records.

    A folder that already holds game records is refused, since the new games would mix with (and partly replace)
    the old ones; with ``replace`` its records (``game-*.json``, nothing else) are deleted first.

    Raises:
        ValueError: If it is a file, cannot be created or written to, or already holds records.
    """
    directory = Path(path)
    if not os.fspath(path).strip():
        raise ValueError("an empty folder name for the game records")
    check_not_broken_link(directory, "a folder for the game records")
    if directory.exists() and not directory.is_dir():
        raise ValueError(f"cannot save games to {directory}: it is a file, not a directory")
    if (kind := precious_kind(directory)) is not None:
        raise ValueError(f"cannot save games to {directory}: it is {kind}; give another folder")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(f"cannot save games to {directory}: {err.strerror}") from None
    check_output(directory / record_name(0))  # raises if the directory cannot be written to
    claim_folder(directory, "game records")  # before the emptiness check: two runs cannot both pass it
    old = sorted(f for f in directory.iterdir() if RECORD_NAME.fullmatch(f.name) and not f.is_dir())
    if old and not replace:
        release_folder(directory)
        raise ValueError(
            f"cannot save games to {directory}: it already holds {len(old)} game records ({old[0].name}"
            f"{', ...' if len(old) > 1 else ''}); give an empty or new folder, or --replace-games to "
            "delete them first"
        )
    for record in old:
        record.unlink()
    return directory


def _save_records(directory: Path, chunks: list[GamesChunk], tasks: list[GamesTask], specs: list[str]) -> None:
    """Write each game's record, replaying its logged moves with the game's own dice (passes come back too)."""
    for task, chunk in zip(tasks, chunks, strict=True):
        for i, moves in enumerate(chunk.moves or []):
            g = task.first_game + i
            light_agent = g % 2
            game = Game(task.rules, task.seed, g)
            for move in moves:
                game.play(int(move))
            if not game.is_over:
                raise RuntimeError(f"game {g}: its logged moves end before the game does (a bug; please report it)")
            players = {"light": player_name(specs[light_agent]), "dark": player_name(specs[1 - light_agent])}
            GameRecord.from_game(game, players).save(directory / record_name(g))


MAX_NUMBA_TASK = 20_000
"""Most games in one numba task: a fraction of a second, so Ctrl-C and the progress bar are never far off."""
IN_PROCESS_TASK = 1024
"""Games in one task with an agent that prefers the main process: one batch of up to this many decisions per step."""
PYTHON_TASK = 8
"""Games in one task with a Python agent: its own random stream is reseeded per task, so tasks are cut the same
way for any number of workers (and the same seed gives the same games)."""


def _games_per_task(games: int, workers: int, python_agents: bool) -> int:
    if python_agents:
        return PYTHON_TASK
    # Numba games take microseconds and draw from their games' own streams: a few large tasks, cut as suits.
    return min(max(1, -(-games // (workers * 4))), MAX_NUMBA_TASK)


def _combine(
    chunks: list[GamesChunk],
    agents: list[Agent],
    rules: Rules,
    games: int,
    seed: int,
    seconds: float,
    start_value: float | None,
) -> MatchResult:
    """Merge the tasks' games; ``start_value`` (light's chance at the start) is None when nothing was scored."""
    winners = np.concatenate([c.winners for c in chunks])
    turns = np.concatenate([c.turns for c in chunks])
    errors = np.concatenate([c.errors for c in chunks])
    acc = sum(c.acc for c in chunks)
    legal = sum(c.legal for c in chunks)
    hist = np.zeros((2, EK.REGRET_BINS), dtype=np.int64)
    for c in chunks:
        for a in range(2):
            hist[a, c.hist_bins[a]] += c.hist_counts[a]
    light_agent = np.arange(games) % 2
    stats = []
    for a in range(2):
        light, dark = light_agent == a, light_agent != a
        scored = start_value is not None
        regret = RegretSummary.from_accumulators(acc[a], hist[a]) if scored else None
        # Luck-adjusted result of each game (evaluation.luck): own start chance - own errors + the other's.
        per_game = np.where(light, start_value, 1.0 - start_value) - errors[:, a] + errors[:, 1 - a] if scored else None
        adjusted = [
            MeanInterval.of(per_game[mask]) if scored and mask.any() else None for mask in (light | dark, light, dark)
        ]
        stats.append(
            AgentMatchStats(
                agents[a].spec,
                WinRate(int(np.sum(winners == a)), games),
                WinRate(int(np.sum(winners[light] == a)), int(light.sum())),
                WinRate(int(np.sum(winners[dark] == a)), int(dark.sum())),
                regret,
                *adjusted,
            )
        )
    return MatchResult(
        rules,
        games,
        seed,
        (stats[0], stats[1]),
        float(turns.mean()) / 2,
        float(legal[1] / legal[0]) if legal[0] else float("nan"),
        seconds,
        winners,
    )
