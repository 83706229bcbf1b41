"""One player over many reviewed games.

Accuracy and rating, error and luck per game, grades counted, the most frequent kinds of mistake, and the accuracy of
each game in the order played (``review FOLDER``).

The overall accuracy and rating are those of the player's mean error per standard game (the winning chance their
moves gave away in a game, scaled to the rolls of a standard game:
:attr:`~urgym.evaluation.review.PlayerReview.game_error`, :func:`urgym.evaluation.review.accuracy_of`,
:func:`~urgym.evaluation.review.rating_of`): the accuracy is the mean of the games' accuracies before each is clipped
at 0.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from urgym.evaluation.review.grades import GRADED, GameReview, PlayerReview, accuracy_of, rating_of
from urgym.evaluation.scoring.report import plain_text, write_json

from urgym.files import PLOT_FORMATS, check_output, write_atomic

__all__ = ["PlayerSummary", "player_names", "summarise_player", "the_player"]


@dataclass(frozen=True)
class GameLine:
    """The player's part of one game."""

    name: str
    """The record it comes from (its file name)."""
    side: str
    review: PlayerReview
    won: bool | None
    """Whether the player won (None: unfinished)."""

    @property
    def choices(self) -> int:
        """The player's decisions with a choice of moves (every graded move is one)."""
        return sum(self.review.counts[c] for c in GRADED)


@dataclass(frozen=True)
class PlayerSummary:
    """A player's play over several games, in the order given."""

    player: str
    games: tuple[GameLine, ...]

    @property
    def choices(self) -> int:
        """Decisions with a choice, over every game."""
        return sum(g.choices for g in self.games)

    @property
    def mean_regret(self) -> float:
        """Mean regret (probability) over every decision with a choice of every game."""
        total = sum(g.review.mean_regret * g.choices for g in self.games)
        return total / self.choices if self.choices else 0.0

    @property
    def mean_error(self) -> float:
        """Mean winning chance (probability) the player's moves gave away per standard game (``game_error``)."""
        return sum(g.review.game_error for g in self.games) / len(self.games) if self.games else 0.0

    @property
    def accuracy(self) -> float:
        """The accuracy over every game (of the mean error per standard game)."""
        return accuracy_of(self.mean_error)

    @property
    def rating(self) -> str:
        """The rating of the mean error per standard game."""
        return rating_of(self.mean_error)

    @property
    def counts(self) -> dict[str, int]:
        """The player's moves per grade, over every game."""
        return {c: sum(g.review.counts[c] for g in self.games) for c in GRADED}

    @property
    def reasons(self) -> dict[str, int]:
        """How many of the player's errors had each reason, most frequent first.

        Errors are inaccuracies, mistakes and blunders; ``other``: none of the simple reasons of
        :func:`~urgym.evaluation.review.mistake_reason`.
        """
        total: Counter[str] = Counter()
        for g in self.games:
            total.update(g.review.reasons or {})
        return dict(total.most_common())

    def to_dict(self) -> dict[str, Any]:
        """The summary as plain JSON."""
        return {
            "format": "urgym-player-summary",
            "version": 1,
            "player": self.player,
            "games": len(self.games),
            "accuracy": self.accuracy,
            "rating": self.rating,
            "mean_error": self.mean_error,
            "mean_regret": self.mean_regret,
            "choices": self.choices,
            "counts": self.counts,
            "reasons": self.reasons,
            "won": sum(g.won is True for g in self.games),
            "per_game": [
                {
                    "record": g.name,
                    "side": g.side,
                    "accuracy": g.review.accuracy,
                    "rating": g.review.rating,
                    "mean_regret": g.review.mean_regret,
                    "error": g.review.error,
                    "game_error": g.review.game_error,
                    "luck": g.review.luck,
                    "luck_adjusted": g.review.luck_adjusted,
                    "won": g.won,
                    "choices": g.choices,
                }
                for g in self.games
            ],
        }

    def format_text(self) -> str:
        """The games one line each, then the player's totals."""
        width = max(8, *(len(g.name) for g in self.games))
        lines = [
            f"{self.player}: {len(self.games)} games, {self.choices:,} decisions with a choice",
            f"{'#':>3}  {'record':{width}} {'side':5} {'result':6} {'accuracy':>8} {'rating':12} "
            f"{'regret':>7} {'error':>7} {'luck':>7}",
        ]
        for k, g in enumerate(self.games, 1):
            result = "won" if g.won else "lost" if g.won is False else "-"
            lines.append(
                f"{k:>3}  {g.name:{width}} {g.side:5} {result:6} {g.review.accuracy:7.1f}% "
                f"{g.review.rating:12} {100 * g.review.mean_regret:6.2f}p {100 * g.review.error:6.1f}p "
                f"{100 * g.review.luck:+6.1f}p"
            )
        won = sum(g.won is True for g in self.games)
        lines.append(
            f"overall: accuracy {self.accuracy:.1f}% ({self.rating}), error {100 * self.mean_error:.1f} "
            f"points per standard game, mean regret {100 * self.mean_regret:.2f} points per decision, won {won} of "
            f"{len(self.games)}"
        )
        lines.append("moves per grade: " + ", ".join(f"{c} {n}" for c, n in self.counts.items()))
        if self.reasons:
            lines.append(
                "errors by kind, most frequent first: " + ", ".join(f"{kind} {n}" for kind, n in self.reasons.items())
            )
        lines.append(
            "(regret: per decision with a choice; error: winning chance given away in the game, accuracy and "
            "rating of that error per standard game; luck: the "
            "dice's net gift; p: percentage points)"
        )
        return "\n".join(lines)

    def save_json(self, path: str | os.PathLike) -> Path:
        """Write the summary as JSON, atomically."""
        return write_json(path, self.to_dict())

    def save_plot(self, path: str | os.PathLike) -> Path:
        """Accuracy of each game in the order played, with the overall accuracy (PNG, PDF or SVG)."""
        check_output(path, PLOT_FORMATS)
        return write_atomic(path, lambda tmp: self._plot(tmp, Path(path).suffix.lstrip(".") or "png"))

    def _plot(self, path: Path, fmt: str) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        xs = list(range(1, len(self.games) + 1))
        fig, ax = plt.subplots(figsize=(8, 3.4))
        ax.plot(xs, [g.review.accuracy for g in self.games], marker="o", color="#3b2f2f", label="game accuracy")
        ax.axhline(self.accuracy, color="#c0392b", linestyle="--", linewidth=1, label="over all games")
        ax.set_ylim(0, 100)
        ax.set_xlabel("game, in the order given")
        ax.set_ylabel("accuracy (%)")
        ax.set_title(f"{plain_text(self.player)}: {len(self.games)} games", fontsize=10)
        ax.legend(loc="lower right", fontsize=8)
        fig.tight_layout()
        fig.savefig(path, format=fmt)
        plt.close(fig)


def player_names(reviews: list[GameReview]) -> set[str]:
    """The names that play in every one of ``reviews``."""
    names = [{p.player for p in r.players} for r in reviews]
    return set.intersection(*names) if names else set()


def the_player(names: Iterable[set[str]]) -> str:
    """The one name in every one of ``names`` (each game's players).

    Raises:
        ValueError: If no single name plays in every game (naming those that do, if several).
    """
    sets = list(names)
    common = set.intersection(*sets) if sets else set()
    if len(common) != 1:
        raise ValueError(
            "give the player to summarise (--player NAME): "
            + (
                f"{' and '.join(sorted(repr(n) for n in common))} play in every game"
                if common
                else "no name plays in every game"
            )
        )
    return common.pop()


def summarise_player(reviews: Iterable[tuple[str, GameReview]], player: str | None = None) -> PlayerSummary:
    """The summary of ``player`` (by the name in the records) over ``reviews`` (``(record name, review)`` pairs).

    Without ``player``, the one name that plays in every game is taken (``reviews`` are then all held at once); with
    it, ``reviews`` may be a generator: each review is read, reduced to the player's part and dropped, so the memory
    does not grow with the number of games.

    Raises:
        ValueError: If ``player`` is missing from a game, no single name plays in every game, or there are none.
    """
    if player is None:
        reviews = list(reviews)
        player = the_player({p.player for p in r.players} for _, r in reviews)
    lines = []
    for name, review in reviews:
        mine = [p for p in review.players if p.player == player]
        if not mine:
            raise ValueError(
                f"{name}: {player!r} does not play in it (its players: "
                f"{', '.join(repr(p.player) for p in review.players)})"
            )
        side = mine[0]  # a name on both sides (self-play): light's side
        won = None if review.winner is None else review.winner == side.side
        lines.append(GameLine(name, side.side, side, won))
        del review, mine  # before the next review is made: one game's review in memory at a time, not two
    if not lines:
        raise ValueError("no game records to summarise")
    return PlayerSummary(player, tuple(lines))
