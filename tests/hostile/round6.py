"""The sixth round of hostile inputs: a benchmark whose results cannot be forged, run folders that never cost a file.

Results edited, trimmed, repeated, shortened or copied for the leaderboard; run folders whose records were edited or
planted; folders of the user's given as ``--out``; FIFOs, devices and deep JSON where a record is read; checkpoints
and callbacks of other rules; options a mode ignores; late and unclear errors; a finkel-7 solve started unasked; and
what was left from earlier rounds (a port in use, a review of mixed games, the largest seed, a plug-in's policy
table, a damaged table's solve).

Each case is judged as in ``tests.hostile.commands`` (one clear line and the right status, or correct behaviour),
and besides: ``forged`` (a damaged, edited or foreign result ranked or counted), ``data-loss`` (a file of the
user's removed or replaced), ``hang``, ``exhausted``, ``traceback``, ``unclear``.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import shutil
import socket
import subprocess
import sys
import warnings
from pathlib import Path

from tests.hostile.judge import SMALL, judge, library_case, review_peak_bytes, run, run_in_process

SHIPPED = Path(__file__).resolve().parents[2] / "evaluation" / "bench" / "baseline-finkel-3-v1.td-lambda.json"


def _bench(argv: list[str], work: Path, words: str, case: str, status: int = 2, Outcome=None):
    """``urgym bench ARGV`` in this process, judged: one clear line with ``words``."""
    code, out, err = run_in_process(["urgym", "bench", *argv], work, {})
    if code is None:
        return Outcome(case, "hang", "no answer within the case's time")
    lines = [line for line in err.strip().splitlines() if line.strip()]
    if "Traceback" in err:
        return Outcome(case, "traceback", lines[-1][:160])
    if code != status or not lines or words not in lines[-1]:
        return Outcome(
            case, "forged" if code == 0 else "unclear", f"status {code}; {(lines or [out[-160:]])[-1][:160]!r}"
        )
    return Outcome(case, "clear", lines[-1][:160])


# --- 1. results the leaderboard must not believe --------------------------------------------------------------------
def _forged_results(work: Path, Outcome) -> list:
    from urgym.evaluation.bench.provenance import figures_digest
    from urgym.evaluation.bench.results import summarize

    shipped = json.loads(SHIPPED.read_text())

    def edited_summary(r):
        r["summary"]["final"]["win_rate"]["mean"] = 45.0

    def trimmed(r):
        r["per_seed"], r["seeds"] = r["per_seed"][:2], r["seeds"][:2]
        r["summary"] = summarize({"task": r["task"], "algo": r["algo"]}, r["per_seed"], {})["summary"]

    def repeated(r):
        r["per_seed"] = [r["per_seed"][0]] * 5
        r["seeds"] = [0] * 5

    def inverted(r):
        interval = r["summary"]["final"]["win_rate"]
        interval["low95"], interval["high95"] = interval["high95"], interval["low95"]

    def better(r):
        r["per_seed"][0]["final"]["win_rate"] += 5

    cases = [
        ("a result whose summary was edited", edited_summary, "is not what the seeds give"),
        ("2 seeds of a 5-seed task that say they are complete", trimmed, "result.complete says True"),
        ("one seed listed five times", repeated, "lists a seed twice"),
        ("an interval turned inside out", inverted, "is not what the seeds give"),
        ("a copy of a shipped baseline with a better figure", better, "final is not its last point's figures"),
    ]
    outcomes = []
    for case, change, words in cases:
        forged = copy.deepcopy(shipped)
        change(forged)
        path = work / f"{case.replace(' ', '-')}.json"
        path.write_text(json.dumps(forged))
        outcomes.append(_bench(["--leaderboard", str(path)], work, words, case, Outcome=Outcome))
    for case, task, words in (
        ("a result of a shortened task under finkel-3-v1", {"budget": 4_000}, "is not one of the benchmark's"),
        ("a result of a task no benchmark has", {"name": "go-9", "id": "go-9-v1"}, "is not one of the benchmark's"),
    ):
        foreign = copy.deepcopy(shipped)
        foreign["task"] = {key: value for key, value in {**foreign["task"], **task}.items() if key != "digest"}
        path = work / f"{case.replace(' ', '-')}.json"
        path.write_text(json.dumps(foreign))
        outcomes.append(_bench(["--leaderboard", str(path)], work, words, case, Outcome=Outcome))
    # A forged copy whose figures, digests and summary agree: it ranks, but never as the shipped baseline.
    copied = copy.deepcopy(shipped)
    copied["per_seed"][0]["curve"][-1]["win_rate"] += 5
    copied["per_seed"][0]["final"]["win_rate"] += 5
    copied["per_seed"][0]["digest"] = figures_digest(copied["per_seed"][0])
    copied["summary"] = summarize({"task": copied["task"], "algo": copied["algo"]}, copied["per_seed"], {})["summary"]
    path = work / "better-copy.json"
    path.write_text(json.dumps(copied))
    code, out, _ = run_in_process(["urgym", "bench", "--leaderboard", str(path), str(path), str(SHIPPED)], work, {})
    small = out.split("finkel-4-v1")[0]
    rows = [line for line in small.splitlines() if line.strip().startswith("td-lambda")]
    marks = sorted(line.split()[1] for line in rows)
    case = "a consistent forged copy beside the shipped baseline, given twice, and the baseline given again"
    listed_once = out.count("given again") == 2 and len(rows) == 2
    told_apart = marks == ["given", "shipped"]
    outcomes.append(
        Outcome(
            case, "clear" if code == 0 and listed_once and told_apart else "forged", f"rows {marks}; {out[-200:]!r}"
        )
    )
    return outcomes


# --- 2. run folders that must not be believed, and nothing of the user's lost -----------------------------------
def _run_folder_cases(work: Path, Outcome) -> list:
    from urgym.evaluation.bench import get_task, run_task
    from urgym.evaluation.bench.protocol import SeedRun, finished_seeds
    from urgym.evaluation.bench.provenance import figures_digest
    from urgym.evaluation.training.algorithms import get_algorithm

    task = dataclasses.replace(get_task("finkel-3"), pieces=2, budget=1_000, eval_every=500, seeds=2)
    base = work / "base"
    result = run_task(task, "td-lambda", base, progress=False)
    outcomes = []

    def edit_final(r):
        r["final"]["win_rate"] += 1

    def short(r):
        r["decisions"] = 14
        r["curve"] = [{**r["curve"][0], "decisions": 14}]
        r["final"] = {k: v for k, v in r["curve"][0].items() if k != "seconds"}

    def other_algo(r):
        r["algo"] = "dqn"

    def huge(r):
        r["padding"] = "x" * (86 << 20)

    for case, change, words in (
        ("a seed record whose final figure was edited", edit_final, "final is not its last point's"),
        ("a seed record short of the budget", short, "fall short of the budget"),
        ("a seed record of another algorithm", other_algo, "names algo 'dqn'"),
        ("an 86 MB seed record", huge, "more than"),
    ):
        folder = work / case.replace(" ", "-")
        shutil.copytree(base, folder)
        record_path = folder / "seed-1" / "seed.json"
        record = json.loads(record_path.read_text())
        change(record)
        if change is not edit_final:  # a forger who knows the digest: only the checks of what it claims stand
            record["digest"] = figures_digest(record)
        record_path.write_text(json.dumps(record))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            again = run_task(task, "td-lambda", folder, progress=False)
        said = " ".join(str(w.message) for w in caught)
        counted = json.loads((folder / "seed-1" / "seed.json").read_text()) == record
        same = again["per_seed"][1]["digest"] == result["per_seed"][1]["digest"]
        verdict = "clear" if words in said and not counted and same else "forged"
        outcomes.append(Outcome(case, verdict, said[:160]))
        td = get_algorithm("td-lambda")
        if case == "a seed record short of the budget":  # the estimate does not count it as done either
            record_path.write_text(json.dumps(record))
            done = finished_seeds(folder, 2, SeedRun(task, td, td.defaults()))
            outcomes.append(
                Outcome("the estimate with a record short of the budget", "clear" if done == 1 else "forged", str(done))
            )
    # --out at a folder of the user's that holds a seed-0/
    mine = work / "my-folder"
    (mine / "seed-0").mkdir(parents=True)
    (mine / "seed-0" / "notes.txt").write_text("the user's")
    outcomes.append(
        _bench(
            ["--task", "finkel-3", "--algo", "td", "--seeds", "1", "--out", str(mine)],
            work,
            "holds files urgym did not write",
            "--out at a folder of the user's holding a seed-0/",
            Outcome=Outcome,
        )
    )
    if (mine / "seed-0" / "notes.txt").read_text() != "the user's":
        outcomes[-1] = Outcome(outcomes[-1].case, "data-loss", "the user's file was removed")
    planted = work / "planted"
    shutil.copytree(base, planted)
    (planted / "run.json").unlink()
    outcomes.append(
        _bench(
            ["--task", "finkel-3", "--algo", "dqn", "--seeds", "1", "--out", str(planted)],
            work,
            "holds files urgym did not write",
            "--out at seeds of another algorithm without run.json",
            Outcome=Outcome,
        )
    )
    # --agent --out aimed at a trained run, and at a results.json urgym never wrote
    for case, folder, words in (
        ("--agent --out at a trained run", base, "holds a trained run"),
        (
            "--agent --out at a folder holding a results.json of the user's",
            mine,
            "is not an agent's result urgym wrote",
        ),
    ):
        results = folder / "results.json"
        if folder == mine:
            results.write_text('{"mine": true}')
        before = results.read_bytes()
        outcome = _bench(
            ["--task", "finkel-3", "--agent", "greedy", "--out", str(folder)], work, words, case, Outcome=Outcome
        )
        outcomes.append(
            outcome if results.read_bytes() == before else Outcome(case, "data-loss", "results.json replaced")
        )
    # a seed folder that is a link outside the run, or a link loop; curves.png a folder; run.json a list
    (work / "elsewhere").mkdir(exist_ok=True)
    for case, prepare, words in (
        ("a seed folder that is a link outside the run", lambda f: _relink(f, work / "elsewhere"), "symbolic link"),
        ("a seed folder that is a link loop", lambda f: _relink(f, f / "seed-1"), "symbolic link"),
        (
            "curves.png that is a folder",
            lambda f: (f / "curves.png").unlink() or (f / "curves.png").mkdir(),
            "curves.png",
        ),
        ("run.json that is a list", lambda f: (f / "run.json").write_text("[1, 2]"), "not a run's record"),
    ):
        folder = work / case.replace(" ", "-").replace(".", "")
        shutil.copytree(base, folder)
        prepare(folder)
        outcome = library_case(case, lambda f=folder: run_task(task, "td-lambda", f, progress=False), words, Outcome)
        if any((work / "elsewhere").iterdir()):
            outcome = Outcome(case, "data-loss", "trained into a folder outside the run")
        outcomes.append(outcome)
    return outcomes


def _relink(folder: Path, target: Path) -> None:
    shutil.rmtree(folder / "seed-1")
    (folder / "seed-1").symlink_to(target)


# --- 3. reads that must not hang or exhaust ----------------------------------------------------------------------
def _read_cases(work: Path, Outcome) -> list:
    outcomes = []
    fifo = work / "fifo.json"
    os.mkfifo(fifo)
    deep = work / "deep.json"
    deep.write_text("[" * 100 + "]" * 100)
    deeper = work / "deeper.json"
    deeper.write_text("[" * 100_000 + "]" * 100_000)
    for case, path, words in (
        ("a FIFO as the leaderboard's file", fifo, "not a regular file"),
        ("/dev/zero as the leaderboard's file", Path("/dev/zero"), "not a regular file"),
        ("a leaderboard file nested 100 deep", deep, "levels deep"),
        ("a leaderboard file nested 100,000 deep", deeper, "nested too deeply"),
    ):
        outcomes.append(_bench(["--leaderboard", str(path)], work, words, case, Outcome=Outcome))
    from urgym.evaluation.bench import get_task, run_task

    task = dataclasses.replace(get_task("finkel-3"), pieces=2, budget=500, eval_every=500, seeds=1)
    run_fifo = work / "run-fifo"
    run_fifo.mkdir()
    os.mkfifo(run_fifo / "run.json")
    call = lambda: run_task(task, "td-lambda", run_fifo, progress=False)  # noqa: E731
    outcomes.append(_library_hang("a FIFO as run.json", call, Outcome))
    seed_fifo = work / "seed-fifo"
    run_task(task, "td-lambda", seed_fifo, progress=False)
    (seed_fifo / "seed-0" / "seed.json").unlink()
    os.mkfifo(seed_fifo / "seed-0" / "seed.json")
    outcomes.append(
        _library_hang("a FIFO as seed.json", lambda: run_task(task, "td-lambda", seed_fifo, progress=False), Outcome)
    )
    return outcomes


def _library_hang(case: str, call, Outcome):
    from tests.hostile.judge import TimeLimitError, time_limit

    try:
        with time_limit(20):
            call()
    except TimeLimitError:
        return Outcome(case, "hang", "no answer")
    except Exception as err:  # a refusal of any kind is fine: it did not wait
        return Outcome(case, "clear", f"{type(err).__name__}: {err}"[:160])
    return Outcome(case, "clear", "answered")


# --- 4. identities and callbacks ---------------------------------------------------------------------------------
def _identity_cases(work: Path, Outcome) -> list:
    outcomes = []
    out = work / "resume"
    first = ["train", "--algo", "td-lambda", "--pieces", "2", "--timesteps", "60000", "--eval-every", "20000"]
    run_in_process([*first, "--out", str(out), "--no-progress"], work, {})
    if not (out / "checkpoint.pkl").exists():  # finished: make a checkpoint of 2 pieces by cutting a run short
        code = (
            "import sys; from urgym.evaluation.training import run as r\n"
            "calls=[]\norig=r.TrainingRun.evaluate\n"
            "def cut(self, done):\n    calls.append(done)\n    orig(self, done)\n"
            "    if len(calls) == 2: raise SystemExit(9)\n"
            "r.TrainingRun.evaluate = cut\n"
            "from urgym.commands.train import main; main(sys.argv[1:])\n"
        )
        shutil.rmtree(out)
        subprocess.run([sys.executable, "-c", code, *first[1:], "--out", str(out), "--no-progress"], cwd=work)
    result = run(
        [
            "train",
            "--algo",
            "td-lambda",
            "--pieces",
            "3",
            "--timesteps",
            "60000",
            "--eval-every",
            "20000",
            "--resume",
            "--out",
            str(out),
        ],
        work,
    )
    outcomes.append(judge(result, "pieces", "train --resume with a checkpoint of 2 pieces and --pieces 3"))
    outcomes.append(_callback_case(Outcome))
    return outcomes


def _callback_case(Outcome):
    from sb3_contrib import MaskablePPO
    from urgym.evaluation.bench.callback import exact_metrics_callback
    from urgym.solver import load_or_solve

    from urgym import get_rules
    from urgym.sb3 import SB3VecEnv

    env = SB3VecEnv(num_envs=2, rules=get_rules("finkel", 2), opponent="greedy")
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=16, n_epochs=1, seed=0)
    problems = []
    try:
        model.learn(32, callback=exact_metrics_callback("finkel-3", every=16))
        problems.append("a model of 2 pieces measured under finkel-3-v1")
    except ValueError as err:
        if "not finkel-3-v1's" not in str(err):
            problems.append(str(err))
    for call, words in (
        (lambda: exact_metrics_callback(None), "task must be a benchmark task"),
        (lambda: exact_metrics_callback("finkel-3", csv="/tmp"), "directory"),
        (
            lambda: exact_metrics_callback("finkel-3", table=load_or_solve(get_rules("finkel", 2), progress=False)),
            "not finkel-3-v1's",
        ),
    ):
        try:
            call()
            problems.append(f"accepted: {words}")
        except ValueError as err:
            if words not in str(err):
                problems.append(str(err))
    case = "the callback with a model or table of other pieces, no task, a CSV path that is a folder"
    return Outcome(case, "clear" if not problems else "unclear", "; ".join(problems)[:160])


# --- 5. guards, options, earlier rounds ------------------------------------------------------------------------------
def _option_cases(work: Path, Outcome) -> list:
    """Each option the audit gave a mode that ignores it: refused, naming the option and the mode."""
    cases = (
        (
            "--jobs with --agent",
            ["--task", "mini-2", "--agent", "greedy", "--jobs", "2"],
            "--jobs does not go with --agent",
        ),
        (
            "--seeds with --agent",
            ["--task", "mini-2", "--agent", "greedy", "--seeds", "3"],
            "--seeds does not go with --agent",
        ),
        (
            "--seed with --algo",
            ["--task", "mini-2", "--algo", "td", "--out", "x", "--seed", "3"],
            "--seed does not go with --algo",
        ),
        ("--leaderboard with --algo", ["--task", "mini-2", "--algo", "td", "--leaderboard"], "separate modes"),
        ("--leaderboard with --jobs", ["--leaderboard", "--jobs", "2"], "--jobs does not go with --leaderboard"),
        ("--list with --task", ["--list", "--task", "mini-2"], "--task does not go with --list"),
        ("--list with --out", ["--list", "--out", "x"], "--out does not go with --list"),
    )
    return [_bench(argv, work, words, case, Outcome=Outcome) for case, argv, words in cases]


def _guard_cases(work: Path, Outcome) -> list:
    outcomes = []
    empty = work / "empty-cache"
    empty.mkdir()
    code, _, err = run_in_process(
        ["urgym", "bench", "--task", "finkel-7-v1", "--algo", "alphazero", "--out", str(work / "az")],
        work,
        {"URGYM_CACHE": str(empty)},
    )
    line = (err.strip().splitlines() or [""])[-1]
    said = code == 2 and "GB of memory" in line and "min" in line and not any(empty.iterdir())
    outcomes.append(
        Outcome(
            "urgym bench --task finkel-7-v1 --algo alphazero with no table", "clear" if said else "unclear", line[:160]
        )
    )
    from urgym.agents import make_agent

    try:
        make_agent("expectimax:threads=2")
        outcomes.append(Outcome("expectimax:threads=2, as the changelog gives it", "clear", "accepted"))
    except ValueError as err:
        outcomes.append(Outcome("expectimax:threads=2, as the changelog gives it", "unclear", str(err)[:160]))
    return outcomes


def _earlier_cases(work: Path, Outcome) -> list:
    outcomes = []
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        result = run(["ur-play", "--web", "--no-browser", "--port", str(port), *SMALL], work, timeout=60)
        outcomes.append(judge(result, f"port {port}", "ur-play --web --port P on a port in use"))
    from urgym.solver import load_or_solve

    from urgym import get_rules

    load_or_solve(get_rules("finkel", 2), progress=False)
    result = run(
        ["evaluate", "--exact", "--tournament", "greedy,random,heuristic", "--seed", "18446744073709551614", *SMALL],
        work,
        timeout=300,
    )
    outcomes.append(
        Outcome(
            "evaluate --exact --tournament with the largest seed",
            "clear" if result is not None and result.returncode == 0 and "heuristic" in result.stdout else "traceback",
            (result.stderr if result else "hang")[-160:],
        )
    )
    plugin = work / "listpolicy.py"
    plugin.write_text(
        "from urgym.agents import Agent\n"
        "class ListPolicy(Agent):\n"
        "    def select_move(self, position, roll):\n        return position.legal_moves(roll)[0]\n"
        "    def policy_table(self, rules, progress=True):\n        return [0, 1, 2]\n"
    )
    result = run(["evaluate", "--agent", f"{plugin}:ListPolicy", "--exact", *SMALL], work, timeout=300)
    outcomes.append(judge(result, "got a list", "a plug-in whose policy table is a list"))
    games = work / "games"
    games.mkdir()
    steps = [{"side": "light" if k % 2 == 0 else "dark", "roll": 0, "move": None} for k in range(10)]
    for name, pieces, players in (("a", 2, {"light": "me", "dark": "you"}), ("b", 3, {"light": "x", "dark": "y"})):
        record = {
            "format": "urgym-game-record",
            "version": 1,
            "rules": get_rules("finkel", pieces).to_dict(),
            "players": players,
            "seed": None,
            "game": None,
            "steps": steps,
            "winner": None,
        }
        (games / f"game-{name}.json").write_text(json.dumps(record))
    outcomes.append(judge(run(["review", str(games)], work), "different rules", "review of a folder of mixed rules"))
    (games / "game-b.json").unlink()
    result = run(["review", str(games), str(games / "game-a.json"), "--player", "nobody"], work)
    outcomes.append(judge(result, "'nobody' does not play", "review --player naming no player of the games"))
    cache = work / "damaged-cache"
    cache.mkdir()
    env = {**os.environ, "URGYM_CACHE": str(cache)}
    path = subprocess.run(
        [
            sys.executable,
            "-c",
            "from urgym import get_rules; from urgym.solver import cached_table_path; "
            "print(cached_table_path(get_rules('masters', 8)))",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(path).write_bytes(os.urandom(4096))
    result = run(["ur-play", "--rules", "masters", "--pieces", "8", "--agent", "perfect"], work, timeout=120, env=env)
    outcomes.append(judge(result, "GB of memory", "ur-play on a damaged masters-8 table"))
    return outcomes


def _long_review_cases(work: Path, Outcome) -> list:
    """``review FOLDER`` of 1 and of 3 records of 100,000 rolls each: the peak must not grow with the records."""
    from urgym import get_rules

    steps = [{"side": "light" if k % 2 == 0 else "dark", "roll": 0, "move": None} for k in range(100_000)]
    record = {
        "format": "urgym-game-record",
        "version": 1,
        "rules": get_rules("finkel", 2).to_dict(),
        "players": {"light": "me", "dark": "you"},
        "seed": None,
        "game": None,
        "steps": steps,
        "winner": None,
    }
    peaks = {}
    for count in (1, 3):
        folder = work / f"long-{count}"
        folder.mkdir()
        for k in range(count):
            (folder / f"game-{k}.json").write_text(json.dumps(record))
        peaks[count] = review_peak_bytes(folder, "me")
    growth = peaks[3] - peaks[1]
    case = "review of 3 records of 100,000 rolls against 1"
    verdict = "clear" if growth < 46e6 else "exhausted"  # the issue saw 46 MB more a record
    return [Outcome(case, verdict, f"peak {peaks[1] / 1e6:.0f} MB and {peaks[3] / 1e6:.0f} MB")]


PARTS = [
    _forged_results,
    _run_folder_cases,
    _read_cases,
    _identity_cases,
    _option_cases,
    _guard_cases,
    _earlier_cases,
    _long_review_cases,
]
"""Each part of the round: (work folder, Outcome) -> the outcomes of its cases."""
