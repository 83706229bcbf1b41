"""``play``: a human plays an agent in the terminal, with hints from the solved table when one is cached."""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
from urgym.agents.base import Agent
from urgym.agents.valuenet import NetworkEstimate, shipped_estimate
from urgym.solver import SolvedTable, is_cached, table_for

from urgym import Game, GameRecord, Position, Rules
from urgym.notation import move_text
from urgym.render import board_text

__all__ = ["cached_table", "describe_move", "hint_source", "play_game"]

HELP = ("type a move's number or its notation (a5a1+), h for a hint (the perfect move and every move's winning "
        "chance), q to quit")


def describe_move(position: Position, roll: int, source: int) -> str:
    """A move for people: its RGN notation (the one notation of ``play``, ``review``, RGN files and the pages:
    source and destination tile of the mover's own path, ``x`` a capture, ``+`` a rosette), then in words."""
    result = position.move_result(roll, source)
    path = position.rules.path if position.turn == "light" else position.rules.dark_path
    dest = source + roll
    if source == 0:
        words = f"enter a piece onto {path[dest - 1]}"
    elif dest == position.rules.length + 1:
        words = f"bear off from {path[source - 1]}"
    else:
        words = f"{path[source - 1]} to {path[dest - 1]}"
    notes = [note for flag, note in ((result.captured, "captures"), (result.landed_on_rosette, "rosette"),
                                     (result.extra_roll, "rolls again"), (result.won, "wins")) if flag]
    return f"{move_text(position, roll, source)}: {words}" + (f" [{', '.join(notes)}]" if notes else "")


def cached_table(rules: Rules) -> SolvedTable | None:
    """The solved table of ``rules`` if one is cached (never solves)."""
    return table_for(rules, solve=False, progress=False) if is_cached(rules) else None


def play_game(rules: Rules, agent: Agent, human_side: str, seed: int | None, read: Callable[[str], str],
              write: Callable[[str], None], save: str | os.PathLike | None = None) -> str | None:
    """Play one game; return the winner, or None if the human quit.

    The dice are game 0 of ``seed`` in the core's game flow (a random seed when None), the same rolls
    every other loop of the package makes for that seed. With ``save``, the game's record (finished or
    not) is written there as JSON when the game ends or the human quits.
    """
    if seed is None:
        seed = int(np.random.default_rng().integers(2**63))
    game = Game(rules, seed)
    players = {human_side: "human", "dark" if human_side == "light" else "light": agent.spec}
    try:
        return _play(game, agent, human_side, read, write)
    finally:
        if save is not None:
            write(f"Game record written to {GameRecord.from_game(game, players).save(save)}.")


def _play(game: Game, agent: Agent, human_side: str, read: Callable[[str], str],
          write: Callable[[str], None]) -> str | None:
    rules = game.rules
    table: SolvedTable | bool | None = False  # False: not looked up yet
    write(f"{rules.describe()}: you play {human_side} (dice seed {game.seed}). {HELP}.")
    shown = 0  # steps of the game's history already told
    while not game.is_over:
        shown = _tell_passes(game, shown, human_side, agent, write)
        position, roll, moves, mover = game.position, game.roll, game.legal_moves, game.turn
        write("\n" + board_text(position))
        if mover != human_side:
            move = agent.select_move(position, roll)
            write(f"{agent.spec} ({mover}) rolled {roll} and plays {describe_move(position, roll, move)}.")
            game.play(move)
            shown += 1
            continue
        if len(moves) == 1:
            write(f"You rolled {roll}; your only move, played: {describe_move(position, roll, moves[0])}.")
            game.play(moves[0])
            shown += 1
            continue
        write(f"You rolled {roll}. Your moves:")
        notations = [move_text(position, roll, m).rstrip("x+#") for m in moves]
        for i, m in enumerate(moves, 1):
            write(f"  {i}) {describe_move(position, roll, m)}")
        while True:
            answer = read("your move> ").strip().lower()
            if answer in ("q", "quit", "exit"):
                write("You quit the game.")
                return None
            if answer in ("h", "hint"):
                if table is False:
                    table = _load_hint_table(rules, write)
                write(_hint(table, rules, position, roll, moves))
                continue
            choice = _chosen(answer, notations)
            if choice is not None:
                game.play(moves[choice])
                shown += 1
                break
            write(f"{answer!r} is not a move: {HELP} (moves 1 to {len(moves)}).")
    write("\n" + board_text(game.position))
    winner = game.winner
    write("You won!" if winner == human_side else f"{agent.spec} won.")
    return winner


def _chosen(answer: str, notations: list[str]) -> int | None:
    """The index of the move ``answer`` names: its number in the list, or its notation (``x``/``+`` optional)."""
    if answer.isdigit() and 1 <= int(answer) <= len(notations):
        return int(answer) - 1
    bare = answer.rstrip("x+#")
    return notations.index(bare) if bare in notations else None


def _load_hint_table(rules: Rules, write: Callable[[str], None]) -> SolvedTable | NetworkEstimate | None:
    """The exact table when cached, else the shipped neural network's estimate (saying so), else None."""
    if is_cached(rules):
        write(f"Loading the solved table of {rules.describe()} for hints (the first hint only)...")
    source = hint_source(rules)
    if isinstance(source, NetworkEstimate):
        write(f"No solved table of {rules.describe()} is cached: hints are {source.name}, not exact "
              f"(`solve --rules {rules.name} --pieces {rules.pieces}` makes them exact).")
    return source


def hint_source(rules: Rules) -> SolvedTable | NetworkEstimate | None:
    """What hints read for ``rules``: the cached solved table (exact), else the rule set's shipped neural network
    (an estimate, ``exact`` False), else None."""
    if is_cached(rules):
        return cached_table(rules)
    return shipped_estimate(rules)


def _tell_passes(game: Game, shown: int, human_side: str, agent: Agent, write: Callable[[str], None]) -> int:
    """Tell the rolls that passed since the last move; return how many history steps are told."""
    for step in game.history[shown:]:
        who = "you" if step.side == human_side else f"{agent.spec} ({step.side})"
        write(f"{who} rolled {step.roll}: no legal move, the turn passes.")
    return len(game.history)


def _hint(table: SolvedTable | NetworkEstimate | None, rules: Rules, position: Position, roll: int,
          moves: tuple[int, ...]) -> str:
    if table is None:
        return (f"No solved table is cached for {rules.describe()}, and no neural network of urgym plays it. "
                f"Create the table with `solve --rules {rules.name} --pieces {rules.pieces}` to get hints.")
    values = table.move_values(position, roll)
    best = table.best_move(position, roll)
    exact = not isinstance(table, NetworkEstimate)
    lines = [] if exact else [f"({table.name[:1].upper()}{table.name[1:]}: not exact.)"]
    lines.append(f"Your winning chance before this roll: {table.win_probability(position):.1%}. With this roll:")
    for i, m in enumerate(moves, 1):
        mark = ("  <- perfect move" if exact else "  <- the network's best") if m == best else \
            f"  (-{values[best] - values[m]:.1%})"
        lines.append(f"  {i}) {describe_move(position, roll, m)}: {values[m]:.2%}{mark}")
    return "\n".join(lines)
