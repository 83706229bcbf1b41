"""Terminal tables, and JSON, CSV and plot files (each written atomically: a temporary file renamed)."""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
from urgym.evaluation.scoring.match import MatchResult
from urgym.evaluation.scoring.positions import TEST_SET_VERSION, PositionBenchmark
from urgym.evaluation.scoring.stats import RegretSummary
from urgym.evaluation.scoring.tournament import TournamentResult

from urgym.files import write_atomic
from urgym.notation import move_text

__all__ = [
    "csv_cell",
    "format_match",
    "format_positions",
    "format_tournament",
    "match_rows",
    "plain_text",
    "plot_match",
    "plot_tournament",
    "tournament_rows",
    "write_csv",
    "write_json",
]


def write_json(path: str | os.PathLike, data: dict[str, Any]) -> Path:
    """Write ``data`` as indented JSON, atomically."""
    text = json.dumps(_clean(data), indent=2)
    return write_atomic(path, lambda tmp: tmp.write_text(text + "\n"))


def write_csv(path: str | os.PathLike, rows: list[dict[str, Any]], fields: list[str] | None = None) -> Path:
    """Rows as CSV, atomically; ``fields`` names the columns when there may be no rows.

    Text cells are made safe for spreadsheets (:func:`csv_cell`).
    """
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]) if rows else list(fields or []))
    writer.writeheader()
    writer.writerows({key: csv_cell(value) for key, value in row.items()} for row in rows)
    return write_atomic(path, lambda tmp: tmp.write_text(buffer.getvalue(), encoding="utf-8"))


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A CSV cell that a spreadsheet shows as text.

    A text cell starting like a formula (``=``, ``+``, ``-``, ``@``, a tab or a carriage return) gets a leading ``'``.
    Numbers stay numbers.
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def plain_text(text: str) -> str:
    """``text`` drawn literally by matplotlib: its ``$`` would otherwise start mathtext (or fail to parse)."""
    return text.replace("$", r"\$")


def _clean(value: Any) -> Any:
    """JSON without NaN: NaN and infinities become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


# --- rows -----------------------------------------------------------------------------------------------
def _regret_columns(prefix: str, regret: RegretSummary | None) -> dict[str, Any]:
    keys = ("decisions", "mean", "median", "p95", "perfect_share", "blunders", "seconds_per_move")
    if regret is None:
        return {f"{prefix}{k}": "" for k in keys}
    return {f"{prefix}{k}": getattr(regret, k) for k in keys}


def match_rows(match: MatchResult, benchmarks: dict[str, PositionBenchmark]) -> list[dict[str, Any]]:
    """One CSV row per agent of a match, with its position benchmark when it took one."""
    rows = []
    for side in match.agents:
        low, high = side.wins.interval
        row = {
            "agent": side.spec,
            "rules": match.rules.name,
            "pieces": match.rules.pieces,
            "games": match.games,
            "seed": match.seed,
            "wins": side.wins.wins,
            "win_rate": side.wins.rate,
            "win_low95": low,
            "win_high95": high,
            "light_win_rate": side.as_light.rate,
            "dark_win_rate": side.as_dark.rate,
            "turns_per_player": match.turns_per_player,
            "legal_moves_per_decision": match.legal_moves_per_decision,
        }
        for name, adjusted in (
            ("", side.luck_adjusted),
            ("light_", side.luck_adjusted_as_light),
            ("dark_", side.luck_adjusted_as_dark),
        ):
            row.update(
                {
                    f"{name}luck_adjusted_win_rate": adjusted.mean if adjusted else None,
                    f"{name}luck_adjusted_low95": adjusted.low if adjusted else None,
                    f"{name}luck_adjusted_high95": adjusted.high if adjusted else None,
                }
            )
        row.update(_regret_columns("match_regret_", side.regret))
        bench = benchmarks.get(side.spec)
        row.update(_regret_columns("positions_regret_", bench.regret if bench else None))
        rows.append(row)
    return rows


def tournament_rows(result: TournamentResult) -> list[dict[str, Any]]:
    """One CSV row per ordered pair (agent, opponent)."""
    matrix, adjusted = result.win_matrix, result.adjusted_matrix
    rows = []
    for i, spec in enumerate(result.specs):
        bench = result.benchmarks[i].regret.mean if result.benchmarks else ""
        for j, other in enumerate(result.specs):
            if i != j:
                mean, low, high = adjusted[i, j] if adjusted is not None else ("", "", "")
                rows.append(
                    {
                        "agent": spec,
                        "opponent": other,
                        "win_rate": matrix[i, j],
                        "luck_adjusted_win_rate": mean,
                        "luck_adjusted_low": low,
                        "luck_adjusted_high": high,
                        "match_regret_mean": result.match_regret(i),
                        "positions_regret_mean": bench,
                    }
                )
    return rows


# --- terminal -------------------------------------------------------------------------------------------
def _pp(x: float) -> str:
    """A regret in win-% points: three decimals, or at least two significant digits below 0.1 (a network's)."""
    if x is None or not math.isfinite(x):
        return "-"
    if x == 0 or x >= 0.1:
        return f"{x:.3f}"
    return f"{x:.4f}" if x >= 0.01 else f"{x:#.2g}" if x >= 1e-4 else f"{x:.1e}"


def _rate(per_second: float) -> str:
    return f"{per_second:,.0f}" if per_second >= 100 else f"{per_second:.3g}"


def _ms(seconds: float) -> str:
    return "-" if not math.isfinite(seconds) else f"{seconds * 1e3:.3g} ms"


def _regret_lines(label: str, regret: RegretSummary) -> list[str]:
    return [
        f"  {label}: {regret.decisions:,} decisions with a choice",
        f"    regret (win-% points): mean {_pp(regret.mean)} {_interval(regret)}, median {_pp(regret.median)}, "
        f"95th percentile {_pp(regret.p95)}",
        f"    perfect moves {regret.perfect_share:.1%}, blunders (> 5 points) {regret.blunders:,} "
        f"({regret.blunder_share:.2%}), time per move {_ms(regret.seconds_per_move)}",
    ]


def _interval(regret: RegretSummary) -> str:
    """The mean regret's 95% interval as shown beside it (empty where one decision gives none)."""
    if not math.isfinite(regret.high95):
        return ""
    return f"[{_pp(regret.low95)}, {_pp(regret.high95)}]"


def format_exact(result: Any) -> str:
    """The terminal report of an exact result (:class:`~urgym.evaluation.scoring.exact.ExactResult`)."""
    lines = [
        f"{result.rules}",
        f"{result.agent} against {result.opponent}, exact (every decision of the rule set, no dice sampled):",
        f"  wins {result.win_rate:.3f}%   as light {result.win_rate_light:.3f}%   as dark {result.win_rate_dark:.3f}%",
        f"  ({result.decisions:,} decisions asked, {result.seconds:.1f} s to evaluate)",
    ]
    if not result.exact_policies:
        lines.append(ONE_DRAW_NOTE)
    return "\n".join(lines)


ONE_DRAW_NOTE = (
    "  note: an agent randomizes without saying how (no move_probabilities): these are the figures of one draw of "
    "its move per decision"
)


def format_worst(worst: Any, result: Any) -> str:
    """The terminal report of :func:`~urgym.evaluation.scoring.exact.worst_decisions`."""
    lines = [f"where {result.agent} loses most against {result.opponent} (win-% points per game, weighted by reach):"]
    for rank, decision in enumerate(worst, 1):
        position = decision.position
        lines.append(
            f"{rank:3d}. loses {decision.loss:.4f} points per game here; reached {decision.reach:.4f} times per game "
            f"with {position.turn} to move"
        )
        lines.extend("     " + line for line in str(position).splitlines())
        for roll, chance, move, best, regret in decision.rolls:
            lines.append(
                f"     roll {roll} (chance {chance:.4f}): plays {move_text(position, roll, move)}, "
                f"best {move_text(position, roll, best)}, "
                f"regret {regret:.3f} points"
            )
    if not worst:
        lines.append("  none: the agent's moves lose nothing against perfect play")
    return "\n".join(lines)


def format_exact_tournament(result: Any) -> str:
    """The terminal report of :func:`~urgym.evaluation.scoring.exact.exact_tournament`: a win-rate table."""
    names = result.agents
    width = max(len(n) for n in names)
    lines = [
        result.rules,
        "exact head-to-head win rates, row against column, percent (sides averaged; every decision, no dice sampled):",
        " " * (width + 2) + "  ".join(f"{n[:10]:>10}" for n in names) + "        mean",
    ]
    for i, name in enumerate(names):
        cells = "  ".join(f"{'-':>10}" if i == j else f"{w:10.3f}" for j, w in enumerate(result.win_rate[i]))
        lines.append(f"{name:<{width}}  {cells}  {result.mean(i):10.3f}")
    if not result.exact_policies:
        lines.append(ONE_DRAW_NOTE)
    return "\n".join(lines)


def format_exploitability(exploit: dict[str, Any]) -> str:
    """The terminal report of :func:`~urgym.evaluation.scoring.exact.exploitability`."""
    versus = exploit["vs_best_response"]
    return (
        f"against its best response (a perfect adversary that knows its moves): wins {versus['win_rate']:.3f}%; "
        f"exploitability {exploit['exploitability_points']:.3f} win-% points (the best response wins "
        f"{exploit['best_response_win_rate']:.3f}%, perfect play 50%)"
    )


def format_match(match: MatchResult, benchmarks: dict[str, PositionBenchmark]) -> str:
    """The terminal report of a match and the agents' position benchmarks."""
    a, b = match.agents
    lines = [
        f"{a.spec} vs {b.spec} on {match.rules.describe()}",
        f"{match.games:,} games (sides alternate), seed {match.seed}, {match.seconds:.1f} s "
        f"({_rate(match.games_per_second)} games/s)",
        f"game length {match.turns_per_player:.2f} turns per player; "
        f"{match.legal_moves_per_decision:.2f} legal moves per decision",
        "",
    ]
    for side in match.agents:
        lines.append(f"{side.spec}")
        lines.append(f"  wins {side.wins}   as light {side.as_light}   as dark {side.as_dark}  (95% Wilson)")
        if side.luck_adjusted is not None:
            if side.luck_adjusted.width < side.wins.width:
                quote = "the dice taken out with the solved table: the figure to quote"
            else:
                quote = (
                    "the dice taken out with the solved table; here the raw interval is the narrower one, "
                    "so quote the raw rate"
                )
            lines.append(f"  luck-adjusted win rate {side.luck_adjusted} (95%; {quote})")
            per_side = [
                f"as {name} {interval}"
                for name, interval in (("light", side.luck_adjusted_as_light), ("dark", side.luck_adjusted_as_dark))
                if interval
            ]
            lines.append("    luck-adjusted " + "   ".join(per_side))
        if side.regret is not None:
            lines += _regret_lines("match play", side.regret)
        bench = benchmarks.get(side.spec)
        if bench is not None:
            lines += _regret_lines(_benchmark_label(bench), bench.regret)
    return "\n".join(lines)


def _benchmark_label(bench: PositionBenchmark) -> str:
    return f"position benchmark ({bench.split} set v{TEST_SET_VERSION}, {bench.regrets.shape[0]:,} positions)"


def format_positions(rules: Any, benchmarks: dict[str, PositionBenchmark]) -> str:
    """The terminal report of position benchmarks alone (``evaluate --games 0``)."""
    lines = [f"position benchmark on {rules.describe()}, no games played", ""]
    for spec, bench in benchmarks.items():
        lines += [spec, *_regret_lines(_benchmark_label(bench), bench.regret)]
    return "\n".join(lines)


def format_tournament(result: TournamentResult) -> str:
    """The luck-adjusted win matrix with its intervals (the figure to quote), the raw one, and each agent's regret."""
    names = result.specs
    width = max(19, *(len(n) for n in names)) + 2
    lines = [result.describe()]
    adjusted = result.adjusted_matrix
    if adjusted is not None:
        lines.append("luck-adjusted win rate of row against column [95% interval] (the dice taken out: quote this):")
        lines += _matrix_lines(names, width, lambda i, j: _adjusted_cell(adjusted[i, j]))
        if ((adjusted[:, :, 1] < 0) | (adjusted[:, :, 2] > 1)).any():
            lines.append("* clipped to 0-100%: near an edge the unbiased estimate can leave it (--json has both)")
        lines.append("")
    matrix = result.win_matrix
    lines.append("raw win rate of row against column:")
    lines += _matrix_lines(names, width, lambda i, j: f"{matrix[i, j]:.1%}")
    lines += ["", f"{'agent':<{width}}{'mean regret, positions':>24}{'mean regret, matches':>24}"]
    for i, name in enumerate(names):
        bench = _pp(result.benchmarks[i].regret.mean) if result.benchmarks else "-"
        lines.append(f"{name:<{width}}{bench:>24}{_pp(result.match_regret(i)):>24}")
    lines.append("(regret in win-% points per decision with a choice)")
    return "\n".join(lines)


def _adjusted_cell(cell: np.ndarray, digits: int = 1) -> str:
    """A luck-adjusted rate and its interval as shown: clipped to 0-100%, marked ``*`` where that clipped it."""
    mean, low, high = np.clip(cell, 0.0, 1.0)
    mark = "*" if cell[1] < 0 or cell[2] > 1 else ""
    return f"{100 * mean:.{digits}f}% [{100 * low:.{digits}f}, {100 * high:.{digits}f}]{mark}"


def _matrix_lines(names: tuple[str, ...], width: int, cell) -> list[str]:
    lines = [" " * width + "".join(f"{n:>{width}}" for n in names)]
    for i, name in enumerate(names):
        cells = (f"{'-' if i == j else cell(i, j):>{width}}" for j in range(len(names)))
        lines.append(f"{name:<{width}}" + "".join(cells))
    return lines


# --- plots ----------------------------------------------------------------------------------------------
def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save_figure(fig, path: str | os.PathLike) -> Path:
    suffix = Path(path).suffix.lstrip(".") or "png"
    out = write_atomic(path, lambda tmp: fig.savefig(tmp, format=suffix, bbox_inches="tight"))
    _pyplot().close(fig)
    return out


def plot_match(path: str | os.PathLike, match: MatchResult, benchmarks: dict[str, PositionBenchmark]) -> Path:
    """Win rates with intervals, and the distribution of each agent's regrets on the position benchmark."""
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
    labels, rates, errors = [], [], [[], []]
    for side in match.agents:
        for label, rate in (("all", side.wins), ("light", side.as_light), ("dark", side.as_dark)):
            low, high = rate.interval
            labels.append(f"{plain_text(side.spec)}\n{label}")
            rates.append(rate.rate)
            errors[0].append(rate.rate - low)
            errors[1].append(high - rate.rate)
    left.bar(range(len(rates)), rates, yerr=errors, capsize=3, color=["C0"] * 3 + ["C1"] * 3)
    left.set_xticks(range(len(rates)), labels, fontsize=7)
    left.axhline(0.5, color="grey", lw=0.8)
    left.set_ylabel("win rate (95% Wilson interval)")
    left.set_title(f"{match.games:,} games on {match.rules.name}")
    for spec, bench in benchmarks.items():
        values = sorted(bench.regrets)
        right.plot(values, [(i + 1) / len(values) for i in range(len(values))], label=plain_text(spec))
    right.set_xscale("symlog", linthresh=0.01)
    right.set_xlabel("regret (win-% points)")
    right.set_ylabel("share of positions")
    right.set_title("position benchmark: regret distribution")
    if benchmarks:
        right.legend()
    return _save_figure(fig, path)


def plot_tournament(path: str | os.PathLike, result: TournamentResult) -> Path:
    """The win matrix as a heat map, and each agent's mean regret."""
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5.4), layout="constrained")
    adjusted = result.adjusted_matrix
    matrix = result.win_matrix if adjusted is None else adjusted[:, :, 0]
    image = left.imshow(matrix, vmin=0, vmax=1, cmap="RdBu")
    n = len(result.specs)
    names = [plain_text(spec) for spec in result.specs]
    left.set_xticks(range(n), names, rotation=45, ha="right", fontsize=8)
    left.set_yticks(range(n), names, fontsize=8)
    for i in range(n):
        for j in range(n):
            if i != j:
                text = (
                    f"{matrix[i, j]:.0%}"
                    if adjusted is None
                    else _adjusted_cell(adjusted[i, j], digits=0).replace(" [", "\n[")
                )
                ink = "white" if abs(matrix[i, j] - 0.5) > 0.3 else "black"  # readable on the darkest cells
                left.text(j, i, text, ha="center", va="center", fontsize=7, color=ink)
    left.set_title(
        "win rate of row against column"
        if adjusted is None
        else "luck-adjusted win rate of row against column [95% interval]\n(* clipped to 0-100%)",
        fontsize=10,
    )
    fig.suptitle(plain_text(f"tournament: {result.describe()}"))
    fig.colorbar(image, ax=left)
    regrets = (
        [b.regret.mean for b in result.benchmarks] if result.benchmarks else [result.match_regret(i) for i in range(n)]
    )
    right.barh(range(n), regrets)
    right.set_yticks(range(n), names, fontsize=8)
    right.invert_yaxis()
    right.set_xlabel("mean regret per decision (win-% points)")
    right.set_title("position benchmark" if result.benchmarks else "match play")
    return _save_figure(fig, path)
