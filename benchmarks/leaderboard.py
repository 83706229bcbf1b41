"""The leaderboard: every built-in agent and shipped model on finkel, blitz and masters, from their cards.

Run: ``python -m benchmarks.leaderboard [--agents LIST] [--games 1000] [--slow-games 150] [--out cards.json]``

Each agent's card (:func:`urgym.evaluation.card.agent_card`: the mean regret on the 1,000 test positions, the
result against perfect play, luck-adjusted, over ``--games`` games; ``--slow-games`` for the deep searches) on each
rule set it plays, with the decisions per second of its test-set benchmark (answered in batches, one worker).
Prints one table per rule set, best first, and writes every card to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from urgym.evaluation.card import agent_card
from urgym.evaluation.runner import RunOptions

from benchmarks.common import machine

AGENTS = ("perfect", "neural:2", "neural", "td:2", "td", "expectimax:7", "expectimax:5", "ppo", "expectimax:3",
          "heuristic", "greedy", "random")
SLOW = ("expectimax:7", "expectimax:5")
PUBLISHED = {
    # Win-% points per decision on finkel, from the published solvers' and papers' reports (docs/learned.md).
    "finkel": [("Olieslagers, distilled network, 4.35M parameters", 0.0013),
               ("Olieslagers, distilled network, 1.13M parameters", 0.0024),
               ("Olieslagers, distilled network, 86k parameters", 0.0100),
               ("Olieslagers, distilled network, 9k parameters", 0.0399),
               ("Olieslagers, distilled network, 3.5k parameters", 0.0783),
               ("fitted expectimax, depth 8", 0.077), ("fitted expectimax, depth 7", 0.090),
               ("fitted expectimax, depth 6", 0.102), ("fitted expectimax, depth 5", 0.131),
               ("double DQN", 0.55), ("random", 2.2)],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default=",".join(AGENTS))
    parser.add_argument("--rules", default="finkel,blitz,masters")
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--slow-games", type=int, default=150)
    parser.add_argument("--out", default="leaderboard-cards.json")
    args = parser.parse_args()
    print(machine())
    cards = []
    for spec in args.agents.split(","):
        games = args.slow_games if spec in SLOW else args.games
        start = time.perf_counter()
        cards.append(agent_card(spec, tuple(args.rules.split(",")), games=games,
                                run=RunOptions(workers=1, progress=False)))
        print(f"{spec}: {time.perf_counter() - start:.0f} s", flush=True)
        Path(args.out).write_text(json.dumps(cards, indent=1))
    for name in args.rules.split(","):
        rows = [(c["agent"], c["rule_sets"][name], c["games"]) for c in cards if "regret" in c["rule_sets"][name]]
        rows.sort(key=lambda row: row[1]["regret"])
        print(f"\n{name}\n\n| agent | regret (test set) | vs perfect (luck-adjusted) | games | decisions/s |")
        print("|---|---|---|---|---|")
        for agent, entry, games in rows:
            adjusted = entry["vs_perfect"]["luck_adjusted"]
            seconds = entry["regret_summary"]["seconds_per_move"]
            print(f"| `{agent}` | {entry['regret']:.4f} | {adjusted['shown_mean']:.1%} [{adjusted['shown_low']:.1%}, "
                  f"{adjusted['shown_high']:.1%}] | {games} | {1 / seconds:,.0f} |")
        for label, regret in PUBLISHED.get(name, []):
            print(f"| {label} (published) | {regret} | | | |")


if __name__ == "__main__":
    main()
