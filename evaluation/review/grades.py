"""Game review: every move of a recorded game judged against the solved table.

For each roll: every legal move's winning chance for the roller, the best move, the move played and its
regret (best chance minus the chance of the move played, in probability), its category, and the roll's luck
(see :mod:`urgym.evaluation.review.luck`). Per player: accuracy, mean regret, moves per category, total luck and the
luck-adjusted result. The key moves are the largest errors and the largest swings of luck.

Categories, by regret in percentage points of winning chance (only rolls with a choice of moves), and for the
best move by how hard it was to find:

================  ===========================
``brilliant``     the best move, every other move would have been a blunder (margin above 5 points), and a
                  simple player (``greedy``: capture, else a rosette, else the most advanced piece) misses it
``great``         the best move, every other move would have been a mistake or worse (margin 2.5 points+), and
                  ``greedy`` misses it
``best``          at most 1e-10 points (ties with the best move count as best)
``good``          up to 1 point
``inaccuracy``    up to 2.5 points
``mistake``       up to 5 points
``blunder``       above 5 points (the blunder line of :mod:`urgym.evaluation.scoring.match`)
================  ===========================

A roll with one legal move is ``forced`` and one with none ``pass``; neither counts toward accuracy.

Accuracy. A player's accuracy over a game is ``100 - 2 * E`` (at least 0), with ``E`` the winning chance their
moves gave away per standard game, in points (:attr:`PlayerReview.game_error`): the sum of their regrets
(:attr:`PlayerReview.error`) scaled from the rolls they had to the rolls of a standard game of the rule set
(:func:`standard_rolls`, about a game under perfect play). So the same play scores the same over a short game and
a long one (a 233-roll game no longer adds up two games' errors, nor a game quit early flatters). Perfect play
scores 100; giving away 50 points a standard game, an even game's worth, scores 0. The scale is calibrated on the
built-in ladder against perfect play (``python -m tools.calibrate_review``; the measured table is in the docs'
records page). It measures how much a player's moves give away, not their result: against perfect play, weak
players lose quickly, in fewer rolls, and each of their rolls costs more. A move's accuracy is the same formula
over its own regret. The rating names the level of the error per standard game (:data:`RATINGS`), from
``Beginner`` to ``Perfect``; neither is given from fewer than :data:`MIN_RATED_DECISIONS` decisions with a choice.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from urgym.agents import Agent, make_agent
from urgym.evaluation.pages import board_data, position_data, render_page
from urgym.evaluation.review.luck import GameAnalysis, RollAnalysis, analyse_game
from urgym.evaluation.scoring.report import plain_text, write_csv, write_json
from urgym.evaluation.scoring.stats import BLUNDER
from urgym.solver import SolvedTable

from urgym.files import PLOT_FORMATS, check_output, write_atomic
from urgym.notation import move_text
from urgym.position import SIDES, Position
from urgym.records import GameRecord
from urgym.rules import Rules

__all__ = [
    "ACCURACY_ZERO_POINTS",
    "CATEGORIES",
    "CATEGORY_LIMITS",
    "ERRORS",
    "GRADED",
    "GREAT_MARGIN",
    "RATINGS",
    "SIMPLE_PLAYER",
    "GameReview",
    "MoveReview",
    "PlayerReview",
    "accuracy_of",
    "category_of",
    "mistake_reason",
    "rating_of",
    "review_game",
    "standard_rolls",
]

CATEGORY_LIMITS = (("best", 1e-12), ("good", 0.01), ("inaccuracy", 0.025), ("mistake", BLUNDER))
"""Upper regret limits (probability) of the categories; a larger regret is a ``blunder``."""

CATEGORIES = ("brilliant", "great", "best", "good", "inaccuracy", "mistake", "blunder", "forced", "pass")

GRADED = CATEGORIES[:7]
ERRORS = ("inaccuracy", "mistake", "blunder")
"""The categories of a move that gave something away, each given a reason where one applies."""
"""The categories of rolls with a choice of moves, from the best grade to the worst."""

GREAT_MARGIN = 0.025
"""A best move is ``great`` when every other move loses at least this much (each would be a mistake or worse)."""

ACCURACY_ZERO_POINTS = 50.0
"""Winning chance given away per standard game, in percentage points, at which the accuracy reaches 0."""

RATINGS = (
    ("Perfect", 0.5),
    ("Supernatural", 4.0),
    ("World class", 10.0),
    ("Expert", 20.0),
    ("Advanced", 30.0),
    ("Intermediate", 40.0),
    ("Casual", 48.0),
    ("Beginner", float("inf")),
)
"""Ratings by the winning chance given away per standard game (percentage points): a rating holds up to its limit.
The limits sit between the levels of the built-in ladder against perfect play (see :func:`rating_of`)."""

SIMPLE_PLAYER = "greedy"
"""The simple player whose choice a ``great`` or ``brilliant`` move must differ from."""
SECOND_PLAYER = "heuristic"
"""The stronger simple player whose choice a ``brilliant`` move must differ from too (a plain entry of a piece, say,
which ``greedy`` passes over for its leading piece, is no brilliancy)."""

MIN_RATED_DECISIONS = 10
"""Decisions with a choice a player must have made for an accuracy and a rating: over fewer (a game quit early, a
side whose moves were nearly all forced) the figures say too little and are shown as "too few decisions"."""

KEY_MOVES = 3
"""How many of the largest errors and of the largest swings of luck are key moves."""


def category_of(
    regret: float, legal_moves: int, margin: float = 0.0, obvious: bool = False, found: bool = False
) -> str:
    """The category of a move with ``regret`` (probability) among ``legal_moves`` legal moves.

    ``margin`` is the best move's lead over the second-best (probability), which grades a best move ``great`` when
    it is not ``obvious`` (the simple player finds it too), and ``brilliant`` when, beyond that, every other move is
    a blunder and the move is not ``found`` by the stronger simple player (the paper's gain heuristic) either.
    """
    if legal_moves == 0:
        return "pass"
    if legal_moves == 1:
        return "forced"
    if regret <= CATEGORY_LIMITS[0][1]:
        if obvious:
            return "best"
        if margin > BLUNDER and not found:
            return "brilliant"
        return "great" if margin >= GREAT_MARGIN else "best"
    for name, limit in CATEGORY_LIMITS:
        if regret <= limit:
            return name
    return "blunder"


def accuracy_of(error: float) -> float:
    """The accuracy in percent of the winning chance given away over a game.

    ``points`` is that chance (probability, the sum of the regrets); the accuracy is ``100 - 2 * points``, at least 0.
    """
    return max(0.0, 100.0 * (1.0 - max(error, 0.0) * 100.0 / ACCURACY_ZERO_POINTS))


def standard_rolls(rules: Rules) -> float:
    """The rolls of one side in a standard game of ``rules``, about the length of a game under perfect play.

    Twice what bringing every piece home takes at the mean roll with no capture and no pass, ``2 * pieces *
    (length + 1) / mean roll``: finkel 105 (perfect play's games measured 102.8 rolls a side), blitz 85 (74.3),
    masters 119, murray 196. Errors are counted per standard game (:attr:`PlayerReview.game_error`), so games of
    any length compare, on the scale of a typical game.
    """
    mean = sum(roll * p for roll, p in enumerate(rules.roll_probabilities))
    return 2 * rules.pieces * (rules.length + 1) / mean


def rating_of(error: float) -> str:
    """The rating of the winning chance given away per standard game (probability).

    The first of :data:`RATINGS` whose limit it does not pass. The limits, calibrated on the ladder against perfect play
    (mean error per standard game on finkel and blitz): random 81 and 100 points, greedy 72 and 69, heuristic 35 and
    35, expectimax:3 36 and 22, expectimax:7 14 and 6.5, perfect 0.
    """
    points = max(error, 0.0) * 100.0
    return next(name for name, limit in RATINGS if points <= limit)


@dataclass(frozen=True)
class MoveReview:
    """One roll of the game: the move played and how it compares with the best one."""

    step: int
    side: str
    roll: int
    move: int | None
    """The source path position of the piece moved (0 enters a piece), None for a pass."""
    notation: str
    """The move in RGN (``a4b1x+``, ``0-`` for a pass)."""
    values: dict[str, float]
    """Every legal move's winning chance for the roller, by its RGN text."""
    best: str | None
    """The best move's RGN text (None for a pass)."""
    before: float
    """The roller's winning chance before the roll."""
    chosen: float
    """The roller's winning chance after the move played."""
    regret: float
    luck: float
    category: str
    light_chance: float
    """Light's winning chance after this roll and move (the graph)."""
    reason: str = ""
    """For an inaccuracy, mistake or blunder: what the move missed or gave away, read from the position (see
    :func:`mistake_reason`); empty when no simple reason applies."""

    @property
    def accuracy(self) -> float | None:
        """The move's accuracy in percent, None for a forced move or a pass."""
        return accuracy_of(self.regret) if len(self.values) > 1 else None

    def to_dict(self) -> dict[str, Any]:
        """The move's review as plain JSON."""
        return {
            "step": self.step,
            "side": self.side,
            "roll": self.roll,
            "move": self.move,
            "notation": self.notation,
            "values": self.values,
            "best": self.best,
            "before": self.before,
            "chosen": self.chosen,
            "regret": self.regret,
            "luck": self.luck,
            "category": self.category,
            "accuracy": self.accuracy,
            "light_chance": self.light_chance,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class PlayerReview:
    """One side's play over the game."""

    side: str
    player: str
    mean_regret: float
    """Mean regret over the moves with a choice (probability)."""
    counts: dict[str, int]
    luck: float
    error: float
    """The winning chance the side's moves gave away over the game (the sum of their regrets, probability)."""
    luck_adjusted: float
    """The side's result with the luck of both sides taken out."""
    reasons: dict[str, int] | None = None
    """How many of the side's errors had each reason (:func:`mistake_reason`; ``other`` for none)."""
    rolls: int = 0
    """The side's rolls in the game (passes and forced moves included)."""
    standard: float = 0.0
    """The rolls of a standard game of the rule set (:func:`standard_rolls`)."""

    @property
    def game_error(self) -> float:
        """:attr:`error` per standard game: scaled by :attr:`standard` / :attr:`rolls` (probability).

        What the accuracy and the rating are of, so that the same play rates the same in a short game and a long
        one. Unscaled when the rolls are unknown.
        """
        return self.error * self.standard / self.rolls if self.rolls and self.standard else self.error

    @property
    def accuracy(self) -> float:
        """The accuracy in percent of :attr:`game_error` (:func:`accuracy_of`)."""
        return accuracy_of(self.game_error)

    @property
    def rating(self) -> str:
        """The level of play of :attr:`game_error` (:func:`rating_of`)."""
        return rating_of(self.game_error)

    @property
    def decisions(self) -> int:
        """The rolls on which the player had a choice of moves."""
        return sum(self.counts.get(c, 0) for c in GRADED)

    @property
    def rated(self) -> bool:
        """Whether the player made enough decisions (:data:`MIN_RATED_DECISIONS`) for an accuracy and a rating."""
        return self.decisions >= MIN_RATED_DECISIONS

    def to_dict(self) -> dict[str, Any]:
        """The player's review as plain JSON."""
        return {
            "side": self.side,
            "player": self.player,
            "accuracy": self.accuracy,
            "rating": self.rating,
            "decisions": self.decisions,
            "rated": self.rated,
            "mean_regret": self.mean_regret,
            "counts": self.counts,
            "luck": self.luck,
            "error": self.error,
            "rolls": self.rolls,
            "standard_rolls": self.standard,
            "game_error": self.game_error,
            "luck_adjusted": self.luck_adjusted,
            "reasons": self.reasons or {},
        }


@dataclass(frozen=True)
class GameReview:
    """A whole game reviewed: its moves, each player's summary and the key moves."""

    record: GameRecord
    moves: tuple[MoveReview, ...]
    players: tuple[PlayerReview, PlayerReview]
    start_chance: float
    """Light's winning chance at the start."""
    winner: str | None
    key_errors: tuple[int, ...]
    """Steps of the largest errors, largest first."""
    key_luck: tuple[int, ...]
    """Steps of the largest swings of luck (either sign), largest first."""
    positions: tuple[Position, ...]
    """The position before each step, then the final one."""

    # --- outputs -------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The whole review as plain JSON."""
        return {
            "format": "urgym-game-review",
            "version": 1,
            "rules": self.record.rules.describe(),
            "players": {p.side: p.to_dict() for p in self.players},
            "start_chance": self.start_chance,
            "winner": self.winner,
            "key_errors": list(self.key_errors),
            "key_luck": list(self.key_luck),
            "moves": [m.to_dict() for m in self.moves],
            "record": self.record.to_dict(),
            "definitions": {
                "categories": {n: limit for n, limit in CATEGORY_LIMITS},
                "best-move grades": {
                    "great": f"every other move loses >= {GREAT_MARGIN}, and {SIMPLE_PLAYER} misses it",
                    "brilliant": f"every other move loses > {BLUNDER}, and {SIMPLE_PLAYER} misses it",
                },
                "accuracy": f"max(0, 100 * (1 - error_points / {ACCURACY_ZERO_POINTS})), error: "
                "the winning chance the player's moves gave away per standard game (game_error)",
                "standard_rolls": self.players[0].standard,
                "ratings": {name: f"error up to {limit} points per standard game" for name, limit in RATINGS},
            },
        }

    def csv_rows(self) -> list[dict[str, Any]]:
        """One row per roll (the values of the other moves in one column, ``move=chance`` pairs)."""
        return [
            {
                "step": m.step,
                "side": m.side,
                "player": self.record.players.get(m.side, ""),
                "roll": m.roll,
                "move": m.notation,
                "best": m.best or "",
                "before": m.before,
                "chosen": m.chosen,
                "regret": m.regret,
                "luck": m.luck,
                "category": m.category,
                "accuracy": "" if m.accuracy is None else m.accuracy,
                "light_chance": m.light_chance,
                "reason": m.reason,
                "values": " ".join(f"{k}={v:.6f}" for k, v in m.values.items()),
            }
            for m in self.moves
        ]

    def format_text(self, moves: bool = True) -> str:
        """The review as a terminal table: every roll, then each player's summary, the key moves and their errors.

        ``moves=False`` (``review --summary``): the summary and the key moves only, with each player's number of errors.
        """
        lines = []
        if moves:
            lines.append(
                f"{'#':>4}  {'side':5} {'roll':>4}  {'move':9} {'best':9} {'light %':>7} {'regret':>7} "
                f"{'luck':>7}  category"
            )
            for m in self.moves:
                lines.append(
                    f"{m.step + 1:>4}  {m.side:5} {m.roll:>4}  {m.notation:9} {m.best or '':9} "
                    f"{100 * m.light_chance:6.1f}% {100 * m.regret:6.2f}  {100 * m.luck:+6.1f}  {m.category}"
                )
            lines.append("")
        rules = self.record.rules
        result = f"{self.winner} won" if self.winner else "unfinished"
        lines.append(
            f"{rules.describe()}: {result} after {len(self.moves)} rolls; light's chance at the start "
            f"{100 * self.start_chance:.1f}%"
        )
        width = max(16, *(len(p.player) for p in self.players))
        lines.append(
            f"{'':6} {'player':{width}} {'accuracy':>8} {'rating':12} {'error':>7} {'luck':>7} "
            f"{'adjusted':>8}  " + " ".join(f"{_ABBREVIATIONS[c]:>5}" for c in GRADED)
        )
        for p in self.players:
            shown = min(max(p.luck_adjusted, 0.0), 1.0)  # one game's unbiased estimate may leave 0-100%
            mark = "*" if shown != p.luck_adjusted else " "
            accuracy, rating = (f"{p.accuracy:7.1f}%", p.rating) if p.rated else ("      -", "too few")
            lines.append(
                f"{p.side:6} {p.player:{width}} {accuracy} {rating:12} {100 * p.error:6.1f}p "
                f"{100 * p.luck:+6.1f}p {100 * shown:6.1f}%{mark}  " + " ".join(f"{p.counts[c]:>5}" for c in GRADED)
            )
        lines.append(
            "(p: percentage points of winning chance; error: what the player's moves gave away over the "
            f"game; accuracy 100 - 2 x that error per standard game of {self.players[0].standard:g} rolls (the "
            f"players had {self.players[0].rolls} and {self.players[1].rolls}), given from {MIN_RATED_DECISIONS} "
            "decisions with a choice on; adjusted: "
            "the result with both sides' luck "
            "taken out, * where one game's estimate left 0-100% and is shown clipped (the JSON keeps it); "
            "moves per grade: " + ", ".join(f"{_ABBREVIATIONS[c]} {c}" for c in GRADED) + ")"
        )
        for label, steps in (("largest errors", self.key_errors), ("largest luck", self.key_luck)):
            lines.append(f"{label}: " + "; ".join(_describe(self.moves[s], label) for s in steps))
        for p in self.players:
            errors = sorted(
                (m for m in self.moves if m.side == p.side and m.category in ERRORS), key=lambda m: -m.regret
            )
            if errors and not moves:  # the summary: how many, not each (the key moves above name the largest)
                lines.append(f"{p.side}: {len(errors)} errors (inaccuracies, mistakes and blunders)")
            elif errors:
                lines.append(f"{p.side}'s errors, largest first:")
                lines.extend(
                    f"  roll {m.step + 1} (a {m.roll}): played {m.notation}, best {m.best} "
                    f"(-{100 * m.regret:.1f}p, {m.category}{': ' + m.reason if m.reason else ''})"
                    for m in errors
                )
        return "\n".join(lines)

    def save_json(self, path: str | os.PathLike) -> Path:
        """Write the review as JSON, atomically."""
        return write_json(path, self.to_dict())

    def save_csv(self, path: str | os.PathLike) -> Path:
        """Write one row per roll as CSV, atomically."""
        return write_csv(path, self.csv_rows(), fields=["step"])

    def save_plot(self, path: str | os.PathLike) -> Path:
        """Light's winning chance over the game (PNG, PDF or SVG by the suffix), errors marked."""
        check_output(path, PLOT_FORMATS)
        return write_atomic(path, lambda tmp: _plot(self, tmp, Path(path).suffix.lstrip(".") or "png"))

    def save_html(self, path: str | os.PathLike) -> Path:
        """One self-contained HTML page (no network).

        The board at each roll, stepped with buttons or the arrow keys, the graph, the move table and the players'
        summaries.
        """
        page = self.to_html()
        return write_atomic(path, lambda tmp: tmp.write_text(page, encoding="utf-8"))

    def to_html(self) -> str:
        """The page :meth:`save_html` writes, as a string."""
        return _html(self)


_ABBREVIATIONS = {
    "brilliant": "!!",
    "great": "!",
    "best": "best",
    "good": "good",
    "inaccuracy": "?!",
    "mistake": "?",
    "blunder": "??",
}


def _describe(move: MoveReview, label: str) -> str:
    what = f"{100 * move.regret:.1f}p" if label == "largest errors" else f"{100 * move.luck:+.1f}p"
    return f"roll {move.step + 1} {move.side} {move.roll}:{move.notation} {what}"


def mistake_reason(position: Position, roll: int, played: int, best: int) -> str:
    """What ``played`` missed or gave away next to ``best``, read from the position.

    Both moves are legal for ``roll`` in ``position``. The first that applies of a missed capture, a missed bear-off, a
    missed rosette (and its extra roll), giving up the central rosette, and leaving more pieces open to capture; "" when
    none does.
    """
    mine, theirs = position.move_result(roll, played), position.move_result(roll, best)
    if theirs.captured and not mine.captured:
        return "missed a capture"
    if theirs.scored and not mine.scored:
        return "missed bearing a piece off"
    if theirs.landed_on_rosette and not mine.landed_on_rosette:
        return "missed a rosette" + (" and its extra roll" if theirs.extra_roll else "")
    rules = position.rules
    central = [p for p in rules.rosette_positions if p in rules.shared_positions]
    if played in central and best not in central:
        return "gave up the central rosette"
    side = position.turn
    if _exposed(mine.position, side) > _exposed(theirs.position, side):
        return "left a piece open to capture"
    return ""


def _exposed(position: Position, side: str) -> int:
    """How many of ``side``'s pieces the other side could capture with its next roll.

    By the core's legal moves; after an extra roll the other side is asked as if the turn had passed.
    """
    if position.is_over:
        return 0
    other = "dark" if side == "light" else "light"
    facing = (
        position
        if position.turn == other
        else Position.from_pieces(
            position.rules,
            position.pieces("light"),
            position.pieces("dark"),
            position.home("light"),
            position.home("dark"),
            turn=other,
        )
    )
    return len(
        {
            move + roll
            for roll, _ in facing.chance_outcomes()
            for move in facing.legal_moves(roll)
            if facing.move_result(roll, move).captured
        }
    )  # one own piece per tile captured on


def review_game(record: GameRecord, table: SolvedTable, analysis: GameAnalysis | None = None) -> GameReview:
    """Review a recorded game (finished or not) with the solved table of its rules.

    Raises:
        ValueError: If the table is of other rules, or a step of the record is not legal.
    """
    analysis = analysis or analyse_game(record, table)
    positions = analysis.positions or tuple(record.positions())
    simple = (make_agent(SIMPLE_PLAYER), make_agent(SECOND_PLAYER))
    moves = tuple(_move_review(r, positions[r.index], simple) for r in analysis.rolls)
    players = tuple(_player_review(side, record, analysis, moves) for side in SIDES)
    by_error = sorted((m for m in moves if m.regret > 1e-12), key=lambda m: -m.regret)[:KEY_MOVES]
    by_luck = sorted(moves, key=lambda m: -abs(m.luck))[:KEY_MOVES]
    return GameReview(
        record,
        moves,
        (players[0], players[1]),
        analysis.start_value,
        positions[-1].winner,
        tuple(m.step for m in by_error),
        tuple(m.step for m in by_luck),
        positions,
    )


def _move_review(roll: RollAnalysis, position: Position, simple: tuple[Agent, Agent]) -> MoveReview:
    texts = {m: move_text(position, roll.roll, m) for m in roll.values}
    best = max(roll.values, key=lambda m: (roll.values[m], -m)) if roll.values else None
    regret = max(roll.error, 0.0)
    ranked = sorted(roll.values.values(), reverse=True)
    margin = ranked[0] - ranked[1] if len(ranked) > 1 else 0.0

    def finds(agent: Agent) -> bool:
        return roll.values[agent.select_move(position, roll.roll)] >= ranked[0] - 1e-12

    obvious = margin >= GREAT_MARGIN and finds(simple[0])
    found = margin > BLUNDER and not obvious and finds(simple[1])  # asked only of a candidate brilliancy
    category = category_of(regret, len(roll.values), margin, obvious, found)
    reason = mistake_reason(position, roll.roll, roll.move, best) if category in ERRORS else ""
    return MoveReview(
        roll.index,
        roll.side,
        roll.roll,
        roll.move,
        move_text(position, roll.roll, roll.move),
        {texts[m]: v for m, v in roll.values.items()},
        None if best is None else texts[best],
        roll.before,
        roll.chosen,
        regret,
        roll.luck,
        category,
        roll.after,
        reason,
    )


def _player_review(side: str, record: GameRecord, analysis: GameAnalysis, moves: tuple[MoveReview, ...]):
    own = [m for m in moves if m.side == side]
    choices = [m for m in own if m.accuracy is not None]
    counts = {c: sum(m.category == c for m in own) for c in CATEGORIES}
    mean_regret = sum(m.regret for m in choices) / len(choices) if choices else 0.0
    error = analysis.error(side)
    reasons = Counter(m.reason or "other" for m in own if m.category in ERRORS)
    return PlayerReview(
        side,
        record.players.get(side, ""),
        mean_regret,
        counts,
        analysis.luck(side),
        error,
        analysis.luck_adjusted(side),
        dict(reasons.most_common()),
        len(own),
        standard_rolls(record.rules),
    )


# --- the graph -------------------------------------------------------------------------------------------
def _plot(review: GameReview, path: Path, fmt: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = list(range(len(review.moves) + 1))
    ys = [100 * review.start_chance] + [100 * m.light_chance for m in review.moves]
    fig, ax = plt.subplots(figsize=(9, 3.6))
    ax.fill_between(xs, ys, 50, color="#d8c9a3", alpha=0.5, step=None)
    ax.plot(xs, ys, color="#3b2f2f", linewidth=1.4, label="light's winning chance")
    marks = {"mistake": ("#e69f00", "mistake"), "blunder": ("#c0392b", "blunder")}
    for category, (color, label) in marks.items():
        steps = [m.step for m in review.moves if m.category == category]
        ax.scatter([s + 1 for s in steps], [ys[s + 1] for s in steps], color=color, zorder=3, s=22, label=label)
    ax.axhline(50, color="grey", linewidth=0.6, linestyle=":")
    ax.set_ylim(0, 100)
    ax.set_xlim(0, max(xs[-1], 1))
    ax.set_xlabel("roll")
    ax.set_ylabel("light's winning chance (%)")
    players = review.record.players
    ax.set_title(
        plain_text(
            f"{review.record.rules.name}: {players.get('light') or 'light'} (light) vs "
            f"{players.get('dark') or 'dark'} (dark)" + (f", {review.winner} won" if review.winner else "")
        )
    )
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(path, format=fmt, dpi=110)
    plt.close(fig)


# --- the HTML page -----------------------------------------------------------------------------------------
def _page_data(review: GameReview) -> dict[str, Any]:
    """Everything the page's script draws, as plain JSON."""
    rules = review.record.rules
    return {
        "rules": rules.describe(),
        "pieces": rules.pieces,
        **board_data(rules),
        "positions": [position_data(p) for p in review.positions],
        "moves": [m.to_dict() for m in review.moves],
        "start": review.start_chance,
        "players": {p.side: p.to_dict() for p in review.players},
        "names": review.record.players,
        "winner": review.winner,
        "grades": list(GRADED),
        "key_errors": list(review.key_errors),
        "key_luck": list(review.key_luck),
    }


def _html(review: GameReview) -> str:
    """The review page of ``review`` (one self-contained HTML file)."""
    players = review.record.players
    title = (
        f"{players.get('light') or 'light'} vs {players.get('dark') or 'dark'} - {review.record.rules.name} game review"
    )
    return render_page("review", title, _page_data(review))
