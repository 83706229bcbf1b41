"""The leaderboard: every built-in agent and shipped model on finkel, blitz and masters, from their cards.

Run: ``python -m tools.leaderboard [--agents LIST] [--games 1000] [--slow-games 150] [--out cards.json]``;
``--cards A.json B.json`` prints the tables of cards written before (several runs joined). ``--exact`` adds each
agent's exact win rate against perfect play and its exploitability (``evaluate --exact``), where they fit the time
(with ``--pieces 3`` or ``4`` for every built-in agent that plays them).

Each agent's card (:func:`urgym.evaluation.scoring.card.agent_card`: the mean regret on the 1,000 test positions, the
result against perfect play, luck-adjusted, over ``--games`` games; ``--slow-games`` for the deep searches) on each
rule set it plays, with the decisions per second of its test-set benchmark (answered in batches, one worker, after
a warm-up on a few positions: numba's compiling and loading of cached code are not counted). Prints one table per
rule set, best first, and writes every card to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from urgym.evaluation.scoring.card import agent_card
from urgym.evaluation.scoring.positions import benchmark_positions, score_positions
from urgym.evaluation.scoring.runner import RunOptions
from urgym.solver import TableMissingError, table_for

from benchmarks.common import machine
from urgym import get_rules

AGENTS = (
    "perfect",
    "neural:2",
    "neural",
    "td:depth=2",
    "td",
    "expectimax:7",
    "expectimax:5",
    "ppo",
    "expectimax:3",
    "heuristic",
    "greedy",
    "random",
)
SLOW = ("expectimax:7", "expectimax:5")
PUBLISHED = {
    # Win-% points per decision on finkel, from the published solvers' and papers' reports (docs/learned.md).
    "finkel": [
        ("Olieslagers, distilled network, 4.35M parameters", 0.0013),
        ("Olieslagers, distilled network, 1.13M parameters", 0.0024),
        ("Olieslagers, distilled network, 86k parameters", 0.0100),
        ("Olieslagers, distilled network, 9k parameters", 0.0399),
        ("Olieslagers, distilled network, 3.5k parameters", 0.0783),
        ("fitted expectimax, depth 8", 0.077),
        ("fitted expectimax, depth 7", 0.090),
        ("fitted expectimax, depth 6", 0.102),
        ("fitted expectimax, depth 5", 0.131),
        ("double DQN", 0.55),
        ("random", 2.2),
    ],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default=",".join(AGENTS))
    parser.add_argument("--rules", default="finkel,blitz,masters")
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--slow-games", type=int, default=150)
    parser.add_argument("--out", default="leaderboard-cards.json")
    parser.add_argument("--pieces", type=int, help="pieces per side on every rule set (default: each one's own)")
    parser.add_argument("--exact", action="store_true", help="add the exact columns (evaluate --exact)")
    parser.add_argument(
        "--cards",
        nargs="+",
        metavar="FILE",
        help="print the tables from cards written before (runs nothing; several runs' files join)",
    )
    args = parser.parse_args()
    rule_sets = args.rules.split(",")
    if args.cards:
        joined = {card["agent"]: card for file in args.cards for card in json.loads(Path(file).read_text())}
        cards = list(joined.values())  # an agent in several files: the last file's card
    else:
        print(machine())
        cards = []
        for spec in args.agents.split(","):
            games = args.slow_games if spec in SLOW else args.games
            start = time.perf_counter()
            run = RunOptions(workers=1, progress=False)
            warm_up(spec, rule_sets, args.pieces, run)
            cards.append(agent_card(spec, tuple(rule_sets), games, run=run, pieces=args.pieces, exact=args.exact))
            print(f"{spec}: {time.perf_counter() - start:.0f} s", flush=True)
            Path(args.out).write_text(json.dumps(cards, indent=1))
    for name in rule_sets:
        print(f"\n{name}\n")
        print("\n".join(table(cards, name)))


def warm_up(spec: str, rule_sets: list[str], pieces: int | None, run: RunOptions, positions: int = 20) -> None:
    """Have ``spec`` answer a few test positions of each rule set it plays, so that its speed leaves out start-up."""
    for name in rule_sets:
        try:
            table = table_for(get_rules(name, pieces), solve=False, progress=False)
            score_positions(spec, table, benchmark_positions(table)[:positions], run)
        except (TableMissingError, ValueError):  # no table, or an agent that does not play these rules: its card says
            continue


def table(cards: list[dict], rule_set: str) -> list[str]:
    """One rule set's leaderboard in Markdown: the agents that play it and the published figures, best first."""
    rows: list[tuple[float, str]] = []
    for card in cards:
        entry = card["rule_sets"].get(rule_set, {})
        if "regret" not in entry:
            continue
        seconds = entry["regret_summary"]["seconds_per_move"]
        exact = entry.get("exact")
        exact_cells = f"{exact['win_rate']:.3f}% | {exact['exploitability_points']:.3f}" if exact else " | "
        rows.append(
            (
                entry["regret"],
                f"| `{card['agent']}` | {entry['regret']:.4f} | {_result(entry['vs_perfect'])} | {exact_cells} | "
                f"{card['games']:,} | {1 / seconds:,.0f} |",
            )
        )
    published = PUBLISHED.get(rule_set, []) if not any(card.get("pieces") for card in cards) else []
    rows += [(regret, f"| {label} (published) | {regret:.4f} | | | | | |") for label, regret in published]
    rows.sort(key=lambda row: row[0])
    return [
        "| agent | regret (test set) | vs perfect (luck-adjusted) | exact vs perfect | exploitability (points) | "
        "games | decisions/s |",
        "|---|---|---|---|---|---|---|",
        *(line for _, line in rows),
    ]


def _result(vs_perfect: dict) -> str:
    """The luck-adjusted rate with its interval, or the raw rate where its interval is the narrower (near 0%)."""
    if vs_perfect["raw_is_narrower"]:
        raw = vs_perfect["raw"]
        return f"{raw['rate']:.1%} [{raw['low95']:.1%}, {raw['high95']:.1%}] raw"
    adjusted = vs_perfect["luck_adjusted"]
    return f"{adjusted['shown_mean']:.1%} [{adjusted['shown_low']:.1%}, {adjusted['shown_high']:.1%}]"


if __name__ == "__main__":
    main()
