"""``evaluate``: how far an agent is from perfect play.

Examples::

    evaluate --agent expectimax --depth 7                  # against perfect play on finkel
    evaluate --agent greedy --opponent expectimax:3 --games 2000 --json out.json
    evaluate --tournament random,greedy,heuristic,expectimax:3,expectimax:7,perfect --plot t.png
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from agents import agent_help, builtin_name, make_agent
from evaluation import training
from evaluation.card import CARD_RULE_SETS, agent_card, card_header, card_row
from evaluation.match import play_match, record_name, records_directory
from evaluation.positions import benchmark_positions, score_positions
from evaluation.report import (
    format_match,
    format_tournament,
    match_rows,
    plot_match,
    plot_tournament,
    tournament_rows,
    write_csv,
    write_json,
)
from evaluation.runner import BACKENDS, default_workers, require_ray
from evaluation.tournament import pair_folders, run_tournament, tournament_specs
from evaluation.training import ALGORITHMS, VEC_ENVS, plot_curves, train_ppo, train_td
from solver import PositionIndex, SolvedTable, cached_table_path, is_cached, solve_command, table_for
from urgym import RULE_SET_NAMES, Rules, get_rules
from urgym.cli import ArgumentParser, command, seed
from urgym.files import PLOT_FORMATS, STDOUT, check_distinct, check_output, require_extra

__all__ = ["main", "play_main", "review_main", "stats_main", "train_main"]

DEFAULT_GAMES = 150
SOLVE_RATE = 200_000
"""Positions a core solves per second (measured on finkel: 138 M positions in 341 s on 2 cores)."""


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="evaluate", description="Benchmark an agent against perfect play (or any other agent).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("Examples::")[1] + "\nAgent parameters may follow --agent as options "
        "(--depth 7), or be written into the spec (expectimax:7).\n\nagents:\n" + agent_help())
    parser.add_argument("--agent", help="the agent to evaluate (a spec: expectimax, expectimax:7, greedy, ...)")
    parser.add_argument("--opponent", default="perfect", help="its opponent's spec (default: perfect)")
    parser.add_argument("--tournament", help="comma-separated specs: every pair plays, every agent is benchmarked")
    parser.add_argument("--rules", default=None,
                        help=f"rule set: {', '.join(RULE_SET_NAMES)} (default finkel; with --card, a comma-separated "
                        "list, default finkel,blitz,masters)")
    parser.add_argument("--pieces", type=int, help="pieces per side (default: the rule set's)")
    parser.add_argument("--games", type=int, default=DEFAULT_GAMES,
                        help=f"games per match, sides alternating (default {DEFAULT_GAMES})")
    parser.add_argument("--positions", type=int, default=1000,
                        help="positions of the position benchmark (default 1000; 0 skips it)")
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes (default: all cores; the main process alone for agents that run best "
                        "there, such as neural networks, which answer a thousand games in one batch)")
    parser.add_argument("--seed", type=seed, default=0, help="seed of the dice and the agents (default 0)")
    parser.add_argument("--json", help="write the results as JSON to this path (- for standard output)")
    parser.add_argument("--csv", help="write the results as CSV to this path (- for standard output)")
    parser.add_argument("--plot", help="write a plot to this path (.png, .pdf, .svg)")
    parser.add_argument("--save-games", metavar="DIR",
                        help="write every game's record to DIR (game-000000.json, ...; review them with `review`); "
                        "a folder that already holds records is refused")
    parser.add_argument("--replace-games", action="store_true",
                        help="with --save-games: delete the records already in DIR (game-*.json) first")
    parser.add_argument("--card", action="store_true",
                        help="the agent's card: its regret on the position benchmark and its result against perfect "
                        "play on every solved rule set it can play (--rules: a comma-separated subset of "
                        "finkel,blitz,masters), as one leaderboard row and, with --json, as JSON")
    parser.add_argument("--backend", default="process", choices=BACKENDS,
                        help="run games in local worker processes or as Ray tasks (default process)")
    parser.add_argument("--ray-address", help="the Ray cluster to use with --backend ray (default: local)")
    _table_options(parser)
    return parser


def _table_options(parser: argparse.ArgumentParser) -> None:
    """The options every command that needs a solved table shares."""
    parser.add_argument("--no-solve", action="store_true",
                        help="stop, with the command to run, instead of solving a missing table")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


@command("evaluate")
def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.card:
        return _card_main(parser, args, extra)
    if args.tournament and args.agent:
        parser.error("give either --agent or --tournament, not both")
    if not args.tournament and not args.agent:
        parser.error("give --agent SPEC (for example --agent expectimax --depth 7) or --tournament SPEC,SPEC,...")
    if extra and not args.agent:
        hint = ""
        if args.tournament and not extra[0].startswith("-"):
            hint = (f"; the agents of --tournament are one comma-separated list: --tournament "
                    f"{','.join([args.tournament, *(e for e in extra if not e.startswith('-'))])}")
        parser.error(f"unrecognized arguments: {' '.join(extra)}{hint}")
    for name, value in (("games", args.games), ("workers", 1 if args.workers is None else args.workers)):
        if value < 1:
            parser.error(f"--{name} must be at least 1, got {value}")
    if args.positions < 0:
        parser.error(f"--positions must be 0 or more, got {args.positions}")
    if args.positions and args.pieces == 1:
        parser.error("with 1 piece no decision has a choice of moves, so there is no position benchmark; "
                     "give --positions 0 or more pieces")
    try:
        _check_modes(args)
        rules = get_rules("finkel" if args.rules is None else args.rules, args.pieces)
        specs = _specs(args, extra)
        for spec in specs:
            make_agent(spec).check_rules(rules)
        if args.tournament:
            canonical = tournament_specs(list(specs))  # refuses an agent given twice
            folders = pair_folders(canonical, args.save_games) if args.save_games is not None else {}
        else:
            folders = {None: args.save_games} if args.save_games is not None else {}
        for folder in folders.values():  # before any game: a bad or used folder is refused now
            records_directory(folder, args.replace_games)
        _check_outputs(args)
    except ValueError as err:
        parser.error(str(err))
    table = _table(rules, args, parser, specs)
    positions = []
    if table is not None and args.positions:
        try:  # before any long work: a rule set with few choices may not offer enough positions
            positions = benchmark_positions(table, args.positions)
        except ValueError as err:
            parser.error(f"{err} (--positions 0 skips the position benchmark)")
    # None: every core, or the main process alone for an agent that runs best there (a neural network)
    common = dict(workers=args.workers, backend=args.backend, ray_address=args.ray_address,
                  progress=not args.no_progress)
    out = _report_stream(args)
    if args.tournament:
        result = run_tournament(list(specs), rules, args.games, args.seed, table, args.positions, **common,
                                save_games=args.save_games, replace_games=args.replace_games)
        print(format_tournament(result), file=out)
        _write(args, result.to_dict(), tournament_rows(result), lambda path: plot_tournament(path, result))
        return 0
    match = play_match(specs[0], specs[1], rules, args.games, args.seed, table, **common, save_games=args.save_games,
                       replace_games=args.replace_games)
    benchmarks = {}
    if positions:
        for spec in dict.fromkeys(specs):
            bench = score_positions(spec, table, positions, **common)
            benchmarks[bench.spec] = bench
    print(format_match(match, benchmarks), file=out)
    if args.save_games is not None:
        print(f"saved {match.games} game records in {args.save_games}", file=out)
    data = {"match": match.to_dict(), "position_benchmark": [b.to_dict() for b in benchmarks.values()]}
    _write(args, data, match_rows(match, benchmarks), lambda path: plot_match(path, match, benchmarks))
    return 0


def _card_main(parser: argparse.ArgumentParser, args: argparse.Namespace, extra: list[str]) -> int:
    """``evaluate --agent SPEC --card``: the agent's card (see :mod:`evaluation.card`)."""
    if not args.agent:
        parser.error("--card needs --agent SPEC")
    for option, given in (("--tournament", args.tournament), ("--opponent", args.opponent != "perfect"),
                          ("--csv", args.csv), ("--plot", args.plot), ("--save-games", args.save_games),
                          ("--backend", args.backend != "process")):
        if given:
            parser.error(f"{option} does nothing with --card (a card plays perfect play on each rule set)")
    if args.games < 1 or (args.workers is not None and args.workers < 1) or args.positions < 1:
        parser.error("--games, --workers and --positions must be at least 1 with --card")
    names = tuple(n.strip() for n in (",".join(CARD_RULE_SETS) if args.rules is None else args.rules).split(","))
    try:
        rule_sets = tuple(get_rules(n, args.pieces).name for n in names if n)
        spec = _specs(args, extra)[0]
        make_agent(spec)
        _check_outputs(args)
    except ValueError as err:
        parser.error(str(err))
    card = agent_card(spec, rule_sets, args.games, args.seed, args.positions, args.workers, not args.no_solve,
                      not args.no_progress, args.pieces)
    out = _report_stream(args)
    print(card_header(rule_sets), file=out)
    print(card_row(card), file=out)
    for name, entry in card["rule_sets"].items():
        if "skipped" in entry:
            print(f"{name}: skipped ({entry['skipped']})", file=out)
    if args.json is not None:
        _wrote(write_json(args.json, card), out)
    return 0


def _check_modes(args: argparse.Namespace) -> None:
    """Refuse options that the chosen mode would ignore."""
    if args.ray_address is not None and args.backend != "ray":
        raise ValueError("--ray-address names a Ray cluster for --backend ray; add --backend ray or leave it out")
    if args.replace_games and args.save_games is None:
        raise ValueError("--replace-games goes with --save-games DIR")
    if args.backend == "ray":
        require_ray()  # a missing extra is said now, not after the solve


def _report_stream(args: argparse.Namespace):
    """Where the report is printed: standard output, or standard error when an output file is ``-``."""
    used = [getattr(args, option, None) for option in ("json", "csv", "plot", "html")]
    return sys.stderr if STDOUT in used else sys.stdout


def _specs(args: argparse.Namespace, extra: list[str]) -> tuple[str, ...]:
    if args.tournament:
        specs = tuple(s.strip() for s in args.tournament.split(",") if s.strip())
        if len(specs) < 2:
            raise ValueError(f"a tournament needs at least two agents, got {args.tournament!r}")
        return specs
    agent = args.agent
    if extra:
        if ":" in agent or " " in agent:
            raise ValueError(f"give the agent's parameters either in the spec ({agent!r}) or as options "
                             f"({' '.join(extra)}), not both")
        agent = " ".join([agent, *extra])
    return agent, args.opponent


def _table(rules: Rules, args: argparse.Namespace, parser: argparse.ArgumentParser,
           specs: tuple[str, ...], record: str | None = None) -> SolvedTable | None:
    """The rule set's solved table: loaded from the cache, or solved and cached (unless --no-solve). A table that
    is not ground truth (RoyalUr's 16-bit import) is used with a note saying so. ``record``: the game record that
    holds custom rules, for the ``solve`` command to suggest."""
    try:
        index = PositionIndex(rules)
    except ValueError as err:
        if any(builtin_name(s) == "perfect" for s in specs):
            parser.error(f"the perfect player needs a solved table: {err}")
        print(f"note: {err}; regrets and the position benchmark are skipped", file=sys.stderr)
        return None
    path = cached_table_path(rules)
    if not is_cached(rules):
        command = solve_command(rules, record)
        minutes = index.size / (SOLVE_RATE * default_workers()) / 60
        if args.no_solve:
            print(f"No solved table for {rules.describe()} at {path}.\nCreate it with:  {command}\n"
                  f"({index.size:,} positions, about {minutes:.0f} min on this machine)", file=sys.stderr)
            raise SystemExit(3)
        try:
            check_output(path)
        except ValueError as err:
            raise ValueError(f"cannot cache the solved table: {err}; set URGYM_CACHE to a writable folder") from None
        print(f"No solved table for {rules.name} ({rules.pieces} pieces) yet: solving it now ({index.size:,} "
              f"positions, about {max(minutes, 0.1):.1f} min here) and caching it at {path}. It is reused from "
              f"then on; `{command}` does the same.", file=sys.stderr)
    start = time.perf_counter()
    table = table_for(rules, solve=True, progress=not args.no_progress)
    if time.perf_counter() - start > 5:
        print(f"table ready in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    if table.precision_note:
        print(f"note: {table.precision_note}", file=sys.stderr)
    return table


def _check_outputs(args: argparse.Namespace, inputs: dict[str, str] | None = None) -> None:
    """Refuse, before any work starts, output paths that cannot be written as files (or a plot of an unknown type),
    and outputs that would replace an input or each other."""
    outputs = {}
    for option in ("json", "csv", "plot", "html"):
        path = getattr(args, option, None)
        if path is not None:
            try:
                check_output(path, PLOT_FORMATS if option == "plot" else None, stdout=True)
            except ValueError as err:
                raise ValueError(f"--{option}: {err}") from None
            outputs[f"--{option}"] = path
    check_distinct(outputs, inputs)


def _write(args: argparse.Namespace, data: dict, rows: list[dict], plot) -> None:
    out = _report_stream(args)
    if args.json is not None:
        _wrote(write_json(args.json, data), out)
    if args.csv is not None:
        _wrote(write_csv(args.csv, rows), out)
    if args.plot is not None:
        _wrote(plot(args.plot), out)


def _wrote(path, out) -> None:
    if str(path) != STDOUT:
        print(f"wrote {path}", file=out)


# --- review -----------------------------------------------------------------------------------------------
def build_review_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="review", description="Review a recorded game against perfect play: every move's winning chance, "
        "the best move, regrets, categories, accuracy, luck and the key moves.",
        epilog="Records are urgym's JSON game records (play --save, evaluate --save-games) or RGN (.rgn). "
        "Categories and the accuracy formula are defined in the README (Game review).")
    parser.add_argument("record", help="the game record (.json, or .rgn)")
    parser.add_argument("--rules", help="the rule set of an RGN file that names none")
    parser.add_argument("--pieces", type=int, help="pieces per side, with --rules")
    parser.add_argument("--json", help="write the review as JSON to this path (- for standard output)")
    parser.add_argument("--csv", help="write one row per roll as CSV to this path (- for standard output)")
    parser.add_argument("--plot", help="write the win-probability graph to this path (.png, .pdf, .svg)")
    parser.add_argument("--html", help="write a self-contained HTML page to this path (board, graph, moves; - for "
                        "standard output)")
    parser.add_argument("--summary", action="store_true", help="print only the players' summary and key moves")
    _table_options(parser)
    return parser


@command("review")
def review_main(argv: list[str] | None = None) -> int:
    from evaluation.review import review_game
    from urgym.records import GameRecord

    parser = build_review_parser()
    args = parser.parse_args(argv)
    try:
        if args.pieces is not None and not args.rules:
            raise ValueError("--pieces needs --rules (they give the rule set of an RGN file that names none)")
        rules = get_rules(args.rules, args.pieces) if args.rules is not None else None
        _check_outputs(args, {"the game record": args.record})
        record = GameRecord.load(args.record, rules)
        if rules is not None and record.rules != rules:
            raise ValueError(f"{args.record} is a game of {record.rules.describe()}, not of the --rules/--pieces "
                             f"given ({rules.describe()})")
    except FileNotFoundError:
        parser.error(f"no such game record: {args.record}")
    except ValueError as err:
        parser.error(str(err))
    table = _table(record.rules, args, parser, (), record=args.record)
    if table is None:
        parser.error(f"a review needs a solved table, and {record.rules.describe()} cannot be solved")
    review = review_game(record, table)
    out = _report_stream(args)
    print(review.format_text(moves=not args.summary), file=out)
    for option, save in (("json", review.save_json), ("csv", review.save_csv), ("plot", review.save_plot),
                         ("html", review.save_html)):
        if getattr(args, option) is not None:
            _wrote(save(getattr(args, option)), out)
    return 0


# --- stats ------------------------------------------------------------------------------------------------
def build_stats_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="stats", description="Game-tree statistics (turns per player N, branching factor b, (b*c)^N) under "
        "each counting rule, from self-play games or saved records, beside the exact position count.",
        epilog="Raposo & Lamont (2023) report b = 2.45 and N = 106.35 from 2,000 games of expectimax:7 "
        "self-play under finkel; `stats --agent expectimax:7` plays the same (slow: about an hour on 2 cores).")
    parser.add_argument("--rules", default="finkel", help=f"rule set: {', '.join(RULE_SET_NAMES)} (default finkel)")
    parser.add_argument("--pieces", type=int, help="pieces per side (default: the rule set's)")
    parser.add_argument("--agent", help="the agent playing itself (default perfect)")
    parser.add_argument("--games", type=int, help="self-play games (default 2000, as the paper)")
    parser.add_argument("--seed", type=seed, default=0, help="seed of the dice (default 0)")
    parser.add_argument("--records", metavar="DIR", help="count these saved records (.json, .rgn) instead of playing")
    parser.add_argument("--save-games", metavar="DIR", help="keep the self-play games' records in DIR (a folder "
                        "that already holds records is refused)")
    parser.add_argument("--replace-games", action="store_true",
                        help="with --save-games: delete the records already in DIR (game-*.json) first")
    parser.add_argument("--json", help="write the statistics as JSON to this path (- for standard output)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: all cores)")
    _table_options(parser)
    return parser


@command("stats")
def stats_main(argv: list[str] | None = None) -> int:
    import tempfile
    from pathlib import Path

    from evaluation.game_stats import format_stats, game_tree_stats
    from urgym.records import GameRecord

    parser = build_stats_parser()
    args = parser.parse_args(argv)
    for name, value in (("games", args.games), ("workers", args.workers)):
        if value is not None and value < 1:
            parser.error(f"--{name} must be at least 1, got {value}")
    try:
        rules = get_rules(args.rules, args.pieces)
        if args.replace_games and args.save_games is None:
            raise ValueError("--replace-games goes with --save-games DIR")
        if args.records is not None and (args.save_games, args.agent, args.games) != (None, None, None):
            raise ValueError("--records counts saved games; --agent, --games and --save-games are for playing new ones")
        args.agent = "perfect" if args.agent is None else args.agent
        args.games = 2000 if args.games is None else args.games
        _check_outputs(args)
        if args.records is not None:
            if not args.records.strip() or not Path(args.records).is_dir():
                raise ValueError(f"no game records in {args.records!r}: it is not a folder")
            files = sorted(p for p in Path(args.records).glob("*") if p.suffix in (".json", ".rgn"))
            if not files:
                raise ValueError(f"no game records (.json, .rgn) in {args.records}")
            stats = game_tree_stats(GameRecord.load(p, rules) for p in files)
            source = f"records in {args.records}"
        else:
            make_agent(args.agent)
            if args.save_games is not None:
                records_directory(args.save_games, args.replace_games)
    except ValueError as err:
        parser.error(str(err))
    if args.records is None:
        table = _table(rules, args, parser, (args.agent,))
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(scratch if args.save_games is None else args.save_games)
            play_match(args.agent, args.agent, rules, args.games, args.seed, table, workers=args.workers,
                       progress=not args.no_progress, save_games=folder, replace_games=args.replace_games)
            stats = game_tree_stats(GameRecord.load(folder / record_name(g)) for g in range(args.games))
        source = f"{make_agent(args.agent).spec} self-play, seed {args.seed}"
    try:
        positions = PositionIndex(stats.rules).size
    except ValueError:
        positions = None
    out = _report_stream(args)
    print(format_stats(stats, source, positions), file=out)
    if args.json is not None:
        data = {**stats.to_dict(), "source": source, "positions": positions}
        _wrote(write_json(args.json, data), out)
    return 0


# --- train ------------------------------------------------------------------------------------------------
@command("train", interrupted="the best model so far is in --out")
def train_main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="train", description=training.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algo", default="maskable-ppo", choices=ALGORITHMS)
    parser.add_argument("--rules", default="finkel", help=f"rule set: {', '.join(RULE_SET_NAMES)} (default finkel)")
    parser.add_argument("--pieces", type=int, help="pieces per side (default: the rule set's)")
    parser.add_argument("--timesteps", type=int, default=5_000_000, help="the learner's moves to train for")
    parser.add_argument("--minutes", type=float, help="also stop after this much training time")
    parser.add_argument("--opponent", action="append",
                        help="an agent spec, or 'self' for the learner's own live policy; repeat for a mixture "
                        "(dealt to the environments in turn). maskable-ppo only; default: self and greedy")
    parser.add_argument("--out", required=True, help="directory for models, card, curve and logs")
    parser.add_argument("--seed", type=seed, default=0)
    parser.add_argument("--envs", type=int, default=16,
                        help="environments stepped together (maskable-ppo; default 16)")
    parser.add_argument("--vec-env", default="native", choices=VEC_ENVS,
                        help="native: every game stepped together in numba, opponents batched (default, fastest); "
                        "dummy: one UrEnv after another in this process; subproc: one process each (no 'self')")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of the learner (default 1)")
    parser.add_argument("--eval-every", type=int, help="timesteps between position-benchmark scorings")
    parser.add_argument("--eval-positions", type=int, default=500,
                        help="validation positions scored to pick the best model (default 500; never the test set "
                        "that evaluate reports)")
    parser.add_argument("--hidden", type=int, default=80, help="hidden units of the TD network")
    parser.add_argument("--alpha", type=float, default=0.1, help="TD learning rate (decays to a tenth)")
    parser.add_argument("--lam", type=float, default=0.7, help="TD trace decay lambda")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    args = parser.parse_args(argv)
    if args.timesteps < 1:
        parser.error(f"--timesteps must be at least 1, got {args.timesteps}")
    if args.minutes is not None and not 0 < args.minutes < math.inf:
        parser.error(f"--minutes must be a positive number, got {args.minutes}")
    for name, value, low in (("hidden", args.hidden, 1), ("envs", args.envs, 1), ("threads", args.threads, 1),
                             ("eval-every", args.eval_every, 1), ("eval-positions", args.eval_positions, 1)):
        if value is not None and value < low:
            parser.error(f"--{name} must be at least {low}, got {value}")
    if not 0 < args.alpha < math.inf:
        parser.error(f"--alpha (the TD learning rate) must be a positive finite number, got {args.alpha}")
    if not 0 <= args.lam <= 1:
        parser.error(f"--lam (the TD trace decay) must be from 0 to 1, got {args.lam}")
    try:
        rules = get_rules(args.rules, args.pieces)
    except ValueError as err:
        parser.error(str(err))
    if args.algo == "td-lambda" and args.opponent:
        parser.error("td-lambda learns by self-play; --opponent is for maskable-ppo")
    opponents = args.opponent or ["self", "greedy"]
    try:
        for spec in opponents:
            if spec != "self":
                make_agent(spec)
    except ValueError as err:
        parser.error(str(err))
    if args.algo == "maskable-ppo" and len(opponents) > args.envs:
        parser.error(f"{len(opponents)} opponents are dealt to the environments in turn: give --envs of at least "
                     f"{len(opponents)}, got {args.envs}")
    if args.vec_env == "subproc" and "self" in opponents:
        parser.error("--opponent self plays the live learner, which lives in this process: use --vec-env native "
                     "(default) or dummy with it")
    if args.algo == "maskable-ppo":
        try:  # before the table, which may take minutes to solve
            require_extra("sb3_contrib", "learn", "train --algo maskable-ppo")
        except ImportError as err:
            parser.error(str(err))
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        parser.error(f"--out {args.out} is a file; give a folder for the models, card, curve and logs")
    try:
        check_output(out / "curve.csv")  # the folder can be created and written, before any training
    except ValueError as err:
        parser.error(f"--out: {err}")
    out.mkdir(parents=True, exist_ok=True)
    table = table_for(rules, solve=True, progress=not args.no_progress)
    if args.algo == "td-lambda":
        result = train_td(rules, table, out, args.timesteps, args.minutes, args.seed, args.hidden, args.alpha,
                          args.lam, args.eval_every or 1_000_000, args.eval_positions, not args.no_progress)
    else:
        result = train_ppo(rules, table, out, args.timesteps, args.minutes, opponents, args.seed, args.envs,
                           args.vec_env, args.threads, args.eval_every or 200_000, args.eval_positions,
                           progress=not args.no_progress)
    plot_curves({args.algo: out / "curve.csv"}, out / "curve.png")
    print(f"trained {result['timesteps']:,} timesteps in {result['seconds'] / 60:.1f} min; best mean regret "
          f"{result['best_regret']:.3f} win-% points; models in {out}")
    return 0


def play_main(argv: list[str] | None = None) -> int:
    """``play``: the terminal game of :mod:`agents.cli`, with ``--web`` served by :mod:`evaluation.web`."""
    from agents.cli import main
    from evaluation.web import serve

    return main(argv, web=serve)
