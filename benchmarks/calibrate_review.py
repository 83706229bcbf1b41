"""The calibration of the review's accuracy, grades and ratings: the built-in ladder against perfect play.

Run: ``python -m benchmarks.calibrate_review [--rules finkel,blitz,masters] [--games 100] [--workers 2]``

Each agent of the ladder (random, greedy, heuristic, expectimax:3, expectimax:7, perfect) plays ``--games`` games
against perfect play (sides alternate, seed 0); every game is reviewed as ``review`` does, and the table gives,
per rule set and agent, the mean of the agent's per-game accuracy, its mean regret per decision with a choice
(win-% points), the share of its choices graded brilliant or great, and the ratings its games got. The review's
criteria: accuracy rises strictly along the ladder, random's mean accuracy is at most 50% and perfect's 100%, and
at most 2% of random's choices are brilliant or great.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

LADDER = ("random", "greedy", "heuristic", "expectimax:3", "expectimax:7", "perfect")


def calibrate(rule_set: str, games: int, workers: int) -> list[dict]:
    from urgym.evaluation.match import play_match
    from urgym.evaluation.review import RATINGS, review_game
    from urgym.evaluation.runner import RunOptions
    from urgym.solver import table_for

    from urgym import GameRecord, get_rules

    rules = get_rules(rule_set)
    table = table_for(rules)
    rows = []
    for agent in LADDER:
        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as folder:
            play_match(agent, "perfect", rules, games=games, seed=0, table=table,
                       run=RunOptions(workers=workers, progress=False, save_games=folder))
            players = []
            for path in sorted(Path(folder).glob("game-*.json")):
                record = GameRecord.load(path)
                review = review_game(record, table)
                sides = [p for p in review.players if p.player != "perfect" or agent == "perfect"][:1]
                players.extend(sides)
        choices = sum(sum(p.counts[c] for c in ("brilliant", "great", "best", "good", "inaccuracy", "mistake",
                                                   "blunder")) for p in players)
        hard = sum(p.counts["brilliant"] + p.counts["great"] for p in players)
        ratings = Counter(p.rating for p in players)
        rows.append({"rules": rule_set, "agent": agent, "games": len(players),
                     "accuracy": statistics.fmean(p.accuracy for p in players),
                     "regret": statistics.fmean(100 * p.mean_regret for p in players),
                     "hard_share": hard / max(choices, 1),
                     "ratings": ", ".join(f"{name} {ratings[name]}" for name, _ in RATINGS if ratings[name]),
                     "seconds": time.perf_counter() - started})
        print(f"  {rule_set} {agent}: {rows[-1]['accuracy']:.1f}% in {rows[-1]['seconds']:.0f} s", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="finkel,blitz,masters")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    rows = [row for name in args.rules.split(",") for row in calibrate(name, args.games, args.workers)]
    print("\n| rule set | agent | games | accuracy (mean of games) | regret per decision (points) | brilliant or "
          "great, of its choices | ratings of its games |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['rules']} | `{row['agent']}` | {row['games']} | {row['accuracy']:.1f}% | {row['regret']:.3f} | "
              f"{100 * row['hard_share']:.2f}% | {row['ratings']} |")
    for name in args.rules.split(","):
        mine = [r for r in rows if r["rules"] == name]
        rising = all(a["accuracy"] < b["accuracy"] for a, b in itertools.pairwise(mine))
        random_row = mine[0]
        print(f"{name}: accuracy rises along the ladder: {rising}; random {random_row['accuracy']:.1f}% (at most 50%: "
              f"{random_row['accuracy'] <= 50}); perfect {mine[-1]['accuracy']:.1f}%; random's brilliant or great "
              f"{100 * random_row['hard_share']:.2f}% (at most 2%: {random_row['hard_share'] <= 0.02})")


if __name__ == "__main__":
    main()
