"""Game review time on finkel with the table cached: the `review` command end to end, and `review_game` alone.

Run: ``python -m benchmarks.bench_review [--repeats 5]``

Reviews two records of an expectimax:2 (light) against heuristic (dark) game: its first 90 rolls, and the
whole game. The command's time is a fresh process each run (start-up, imports, numba's cache, loading and
checking the table, the review, the terminal table); further runs add the page, JSON and CSV, then the graph.
``review_game`` is timed in this process after a warm-up (numba compiled, table loaded).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from urgym.agents import make_agent
from urgym.evaluation.review.grades import review_game
from urgym.solver import table_for

from benchmarks.common import machine
from urgym import Game, GameRecord, get_rules


def _game(rules) -> GameRecord:
    agents = {"light": make_agent("expectimax:2", seed=1), "dark": make_agent("heuristic", seed=2)}
    game = Game(rules, seed=3, game=0)
    while not game.is_over:
        game.play(agents[game.turn].select_move(game.position, game.roll))
    return GameRecord.from_game(game, {"light": "expectimax:2", "dark": "heuristic"})


def _command(record_path: Path, extra: list[str], repeats: int) -> list[float]:
    review = shutil.which("review") or str(Path(sys.executable).with_name("review"))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([review, str(record_path), *extra], check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rules = get_rules("finkel")
    table = table_for(rules, solve=False)
    whole = _game(rules)
    first90 = GameRecord(rules, whole.steps[:90], whole.players, whole.seed, whole.game)
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as folder:
        for name, record in (("first 90 rolls", first90), (f"whole game, {len(whole.steps)} rolls", whole)):
            path = record.save(Path(folder) / "game.json")
            review_game(record, table)  # warm-up
            inner = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                review_game(record, table)
                inner.append(time.perf_counter() - start)
            files = ["--html", f"{folder}/r.html", "--json", f"{folder}/r.json", "--csv", f"{folder}/r.csv"]
            plain = _command(path, [], args.repeats)
            pages = _command(path, files, args.repeats)
            full = _command(path, [*files, "--plot", f"{folder}/r.png"], args.repeats)
            print(
                f"{name}: review_game {statistics.median(inner) * 1e3:.0f} ms; `review` command "
                f"{statistics.median(plain):.2f} s, with --html --json --csv {statistics.median(pages):.2f} s, "
                f"and --plot (matplotlib) {statistics.median(full):.2f} s (medians of {args.repeats}; plain runs "
                f"{', '.join(f'{t:.2f}' for t in plain)})"
            )


if __name__ == "__main__":
    main()
