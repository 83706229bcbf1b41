"""The calibration of the review's accuracy, grades and ratings: the built-in ladder against perfect play.

Run: ``python -m tools.calibrate_review [--rules finkel,blitz,masters] [--games 100] [--workers 2]
[--agents LIST] [--raw FILE]``

Each agent of the ladder (random, greedy, heuristic, expectimax:3, expectimax:7, perfect; or ``--agents``) plays
``--games`` games against perfect play (sides alternate, seed 0); every game is reviewed as ``review`` does, and the
table gives, per rule set and agent, the mean of the agent's per-game accuracy, its mean error per game, per standard
game (what accuracy and ratings are of) and per decision with a choice (win-% points), its rolls per game, its luck-
adjusted result against perfect play (the strength the play page shows), the share of its choices graded brilliant or
great, and the ratings its games got. The review's criteria: accuracy rises along the ladder (the pairs out of order
are named: accuracy measures what the moves give away per roll, which two agents can share while one wins more),
random's mean accuracy is at most 50% and perfect's 100%, and at most 2% of random's choices are brilliant or great.
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


def calibrate(
    rule_set: str, games: int, workers: int, raw: list | None = None, agents: tuple[str, ...] = LADDER
) -> list[dict]:
    from urgym.evaluation.review.grades import RATINGS, review_game
    from urgym.evaluation.scoring.match import play_match
    from urgym.evaluation.scoring.runner import RunOptions
    from urgym.solver import table_for

    from urgym import GameRecord, get_rules

    rules = get_rules(rule_set)
    table = table_for(rules)
    rows = []
    for agent in agents:
        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as folder:
            play_match(
                agent,
                "perfect",
                rules,
                games=games,
                seed=0,
                table=table,
                run=RunOptions(workers=workers, progress=False, save_games=folder),
            )
            players = []
            for path in sorted(Path(folder).glob("game-*.json")):
                record = GameRecord.load(path)
                review = review_game(record, table)
                sides = [p for p in review.players if p.player != "perfect" or agent == "perfect"][:1]
                players.extend(sides)
                if raw is not None:
                    for side in sides:
                        raw.append(
                            {
                                "rules": rule_set,
                                "agent": agent,
                                **side.to_dict(),
                                "regrets": [
                                    m.regret for m in review.moves if m.side == side.side and len(m.values) > 1
                                ],
                                "spreads": [
                                    max(m.values.values()) - min(m.values.values())
                                    for m in review.moves
                                    if m.side == side.side and len(m.values) > 1
                                ],
                            }
                        )
        choices = sum(
            sum(p.counts[c] for c in ("brilliant", "great", "best", "good", "inaccuracy", "mistake", "blunder"))
            for p in players
        )
        hard = sum(p.counts["brilliant"] + p.counts["great"] for p in players)
        ratings = Counter(p.rating for p in players)
        rows.append(
            {
                "rules": rule_set,
                "agent": agent,
                "games": len(players),
                "accuracy": statistics.fmean(p.accuracy for p in players),
                "accuracy_se": statistics.stdev(p.accuracy for p in players) / len(players) ** 0.5
                if len(players) > 1
                else 0.0,
                "regret": statistics.fmean(100 * p.mean_regret for p in players),
                "error": statistics.fmean(100 * p.error for p in players),
                "game_error": statistics.fmean(100 * p.game_error for p in players),
                "rolls": statistics.fmean(p.rolls for p in players),
                "adjusted": statistics.fmean(p.luck_adjusted for p in players),
                "hard_share": hard / max(choices, 1),
                "ratings": ", ".join(f"{name} {ratings[name]}" for name, _ in RATINGS if ratings[name]),
                "seconds": time.perf_counter() - started,
            }
        )
        print(f"  {rule_set} {agent}: {rows[-1]['accuracy']:.1f}% in {rows[-1]['seconds']:.0f} s", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="finkel,blitz,masters")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--agents", default=",".join(LADDER), help="the agents to measure, weakest first")
    parser.add_argument("--raw", help="also write every reviewed game's figures to this JSON file")
    args = parser.parse_args()
    raw: list | None = [] if args.raw else None
    agents = tuple(args.agents.split(","))
    rows = [row for name in args.rules.split(",") for row in calibrate(name, args.games, args.workers, raw, agents)]
    if args.raw:
        import json

        Path(args.raw).write_text(json.dumps(raw))
    from urgym.evaluation.review.grades import RATINGS, rating_of

    print(
        "\n| rule set | agent | games | accuracy (mean of games) | error per game (points) | rolls per game | "
        "error per standard game | its rating | regret per decision (points) | vs perfect (luck-adjusted) | "
        "brilliant or great, of its choices | ratings of its games |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['rules']} | `{row['agent']}` | {row['games']} | {row['accuracy']:.1f}% "
            f"(±{row['accuracy_se']:.1f}) | {row['error']:.1f} | {row['rolls']:.1f} | {row['game_error']:.1f} | "
            f"{rating_of(row['game_error'] / 100)} | "
            f"{row['regret']:.3f} | {100 * row['adjusted']:.1f}% | {100 * row['hard_share']:.2f}% | "
            f"{row['ratings']} |"
        )
    print(
        "\nRatings by error per standard game (points), each up to its limit: "
        + ", ".join(f"{name} {limit:g}" if limit != float("inf") else f"{name} above" for name, limit in RATINGS)
    )
    for name in args.rules.split(","):
        mine = [r for r in rows if r["rules"] == name]
        swapped = [f"{a['agent']}/{b['agent']}" for a, b in itertools.pairwise(mine) if a["accuracy"] >= b["accuracy"]]
        random_row = mine[0]
        print(
            f"{name}: accuracy rises along the ladder: {not swapped}"
            + (f" (out of order: {', '.join(swapped)})" if swapped else "")
            + f"; random {random_row['accuracy']:.1f}% (at most 50%: "
            f"{random_row['accuracy'] <= 50}); perfect {mine[-1]['accuracy']:.1f}%; random's brilliant or great "
            f"{100 * random_row['hard_share']:.2f}% (at most 2%: {random_row['hard_share'] <= 0.02})"
        )


if __name__ == "__main__":
    main()
