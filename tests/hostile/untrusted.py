"""Files from strangers and outputs aimed carelessly (the untrusted-input round).

Every case is judged as in ``tests.hostile.commands`` (one clear line and status 2, or a clear library error), and
besides:

- ``data-loss``: an input, a special file, a cached table or a folder of earlier records changed;
- ``security``: a file written outside its folder, code run from a state string, markup or a live formula from a
  name in a page or a CSV, a name drawn as mathtext;
- ``accepted``: hostile data taken as valid (a silent wrong result), or a written file with the wrong mode.
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import stat
import struct
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from tests.hostile.commands import run_command, run_library_case
from tests.hostile.judge import BIN, RGU, Outcome

HOSTILE_NAMES = [
    "<img src=x onerror=alert(1)>",
    "</script><script>alert(2)</script>",
    "<!--<script>",
    "__DATA__ __TITLE__",
    "$\\frac{1}{0}$ and $5",
    '=HYPERLINK("http://evil")',
    "+1-1",
    "@SUM(A1)",
    "\"'><svg onload=alert(3)>",
    "-2+3",
]


# --- inputs ---------------------------------------------------------------------------------------------------
def _record(folder: Path) -> dict:
    from urgym import Game, GameRecord

    game = Game("finkel", seed=0, pieces=2)
    while not game.is_over:
        game.play(game.legal_moves[0])
    return GameRecord.from_game(game, {"light": "ann", "dark": "bob"}).to_dict()


def _with(data: dict, path: str, value: object) -> dict:
    """A deep copy of ``data`` with the field at ``path`` (``rules.name``, ``steps.0.roll``) set; ``...`` deletes."""
    data = json.loads(json.dumps(data))
    *parents, last = path.split(".")
    node = data
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    key = int(last) if isinstance(node, list) else last
    if value is ...:
        del node[key]
    else:
        node[key] = value
    return data


RECORD_FIELDS = [  # (field, hostile value, what the error must name)
    ("version", True, "version"),
    ("version", 1.0, "version"),
    ("version", "1", "version"),
    ("version", 2, "version"),
    ("version", None, "version"),
    ("format", "urgym-game-recordx", "format"),
    ("format", ..., "format"),
    ("seed", -1, "seed"),
    ("seed", 1.5, "seed"),
    ("seed", "7", "seed"),
    ("seed", 2**64, "seed"),
    ("seed", True, "seed"),
    ("game", -1, "game"),
    ("game", 2**63, "game"),
    ("game", [], "game"),
    ("players", 7, "players"),
    ("players", ["a"], "players"),
    ("players", None, "players"),
    ("players.light", 3, "name"),
    ("players.light", ["x"], "name"),
    ("players.light", None, "name"),
    ("players.referee", "x", "referee"),
    ("players.light", "x" * 1000, "characters"),
    ("players.light", "a\u001b[2Jb", "control character"),
    ("players.dark", "a\nb", "control character"),
    ("players.dark", "a\u0000b", "control character"),
    ("players.dark", "a\u202eb", "control character"),
    ("players.dark", "\ud800", "control character"),
    ("steps", 5, "steps"),
    ("steps", None, "steps"),
    ("steps", {}, "steps"),
    ("steps.0", 1, "step 0"),
    ("steps.0.side", "purple", "step 0"),
    ("steps.0.roll", 1.5, "step 0"),
    ("steps.0.roll", True, "step 0"),
    ("steps.0.roll", "2", "step 0"),
    ("steps.0.move", 0.0, "step 0"),
    ("steps.0.move", "0", "step 0"),
    ("steps.0.extra", 1, "step 0"),
    ("steps.0.roll", 9, "step 0"),
    ("winner", "nobody", "winner"),
    ("winner", 1, "winner"),
    ("extra", 1, "extra"),
    ("rules", "finkel", "rule set"),
    ("rules", None, "rule set"),
    ("rules.name", "../../escaped", "name"),
    ("rules.name", "/tmp/abs", "name"),
    ("rules.name", "a/b", "name"),
    ("rules.name", "..", "name"),
    ("rules.name", "", "name"),
    ("rules.name", "x" * 41, "name"),
    ("rules.name", "<script>", "name"),
    ("rules.name", 5, "name"),
    ("rules.safe_rosettes", "no", "safe_rosettes"),
    ("rules.safe_rosettes", "false", "safe_rosettes"),
    ("rules.safe_rosettes", 0, "safe_rosettes"),
    ("rules.rosette_extra_roll", None, "rosette_extra_roll"),
    ("rules.capture_extra_roll", 1, "capture_extra_roll"),
    ("rules.roll_probabilities", [0.5, 0.6], "roll probabilities"),
    ("rules.roll_probabilities", [-0.5, 0.5, 0.5, 0.5, 0.0], "roll probabilities"),
    ("rules.roll_probabilities", ["0.5", "0.5"], "roll_probabilities"),
    ("rules.roll_probabilities", [], "roll probabilities"),
    ("rules.roll_probabilities", 1, "roll_probabilities"),
    ("rules.path", "A4", "path"),
    ("rules.path", ["Z9"], "tile"),
    ("rules.path", [], "path"),
    ("rules.rosettes", [["A1"]], "tile"),
    ("rules.pieces", 0, "pieces"),
    ("rules.pieces", 16, "pieces"),
    ("rules.pieces", 2.0, "pieces"),
    ("rules.pieces", "2", "pieces"),
    ("rules.pieces", True, "pieces"),
    ("rules.colour", "red", "colour"),
    ("rules.path", ..., "path"),
]
RAW_RECORDS = [  # (file name, bytes, what the error must name)
    ("dup-top.json", b'{"format": "urgym-game-record", "format": "urgym-game-record"}', "twice"),
    ("deep.json", b"[" * 200_000 + b"]" * 200_000, "nested too deeply"),
    ("nan.json", b'{"format": "urgym-game-record", "version": NaN}', "NaN"),
    ("inf.json", b'{"format": "urgym-game-record", "version": Infinity}', "Infinity"),
    ("latin1.json", '{"players": "caf\u00e9"}'.encode("latin-1"), "UTF-8"),
    ("null.json", b"null", "not a urgym game record"),
    ("number.json", b"42", "not a urgym game record"),
    ("list.json", b"[]", "not a urgym game record"),
    ("trailing.json", b'{"a": 1} x', "not valid JSON"),
    ("empty.json", b"", "not valid JSON"),
    ("bom.json", b"\xef\xbb\xbf{}", "not valid JSON"),
]


def _rgn_cases(text: str) -> list[tuple[str, str, str]]:
    """(name, RGN text, what the error must name)."""
    body = text.split("\n\n", 1)[1]
    return [
        ("dup-meta", text.replace('[Pieces "2"]', '[Pieces "2"]\n[Pieces "2"]'), "given twice"),
        ("dup-name", text.replace('[Light "ann"]', '[Light "ann"]\n[Light "eve"]'), "given twice"),
        ("turn-number", text.replace("\n2. ", "\n5. ", 1), "numbered"),
        ("turn-zero", text.replace("\n1. ", "\n0. ", 1), "numbered"),
        ("no-slash", text.replace(" / ", " ", 1), "must come before it"),
        ("seed-negative", text.replace('[Seed "0"]', '[Seed "-1"]'), "Seed"),
        ("seed-huge", text.replace('[Seed "0"]', f'[Seed "{2**64}"]'), "Seed"),
        ("seed-word", text.replace('[Seed "0"]', '[Seed "zero"]'), "Seed"),
        ("game-huge", text.replace('[Game "0"]', f'[Game "{2**63}"]'), "Game"),
        ("pieces-word", text.replace('[Pieces "2"]', '[Pieces "two"]'), "Pieces"),
        ("pieces-arabic", text.replace('[Pieces "2"]', '[Pieces "\u0662"]'), "Pieces"),
        ("pieces-many", text.replace('[Pieces "2"]', '[Pieces "99"]'), "pieces"),
        ("rules-traversal", text.replace('[Rules "finkel"]', '[Rules "../../escaped"]'), "escaped"),
        ("rules-unknown", text.replace('[Rules "finkel"]', '[Rules "chess"]'), "chess"),
        ("name-newline", text.replace('[Light "ann"]', '[Light "a\\nb"]'), "control character"),
        ("name-escape", text.replace('[Light "ann"]', '[Light "a\u001b[2J"]'), "control character"),
        ("meta-open", text.replace('[Light "ann"]', '[Light "ann]'), "metadata line"),
        ("action-junk", text.replace(body, "1. zz9 / c5c1\n"), "zz9"),
        ("end-early", text.replace(body, body.split("/")[0].strip() + "#\n"), "#"),
        ("wrong-side", text.replace(body, "1. c5c2\n"), "no piece"),
    ]


RULES_FILE_CASES = [(f, v, w) for f, v, w in RECORD_FIELDS if f.startswith("rules.")]


def _rgu_cases() -> list[tuple[str, bytes, str]]:
    """Hostile RoyalUr tables built from RoyalUr's own 2-piece table."""
    from urgym.solver import read_rgu

    theirs = read_rgu(RGU)
    keys = theirs.keys.copy()
    values = np.rint(theirs.values * 65535).astype(np.int64)
    header = theirs.header

    def blob(k, v, h=header, entries=None, maps=1):
        text = json.dumps(h).encode()
        k = np.asarray(k, dtype=">u4")
        v = np.asarray(v, dtype=">u2")
        count = len(k) if entries is None else entries
        return (
            b"RGU\x00"
            + struct.pack(">i", len(text))
            + text
            + struct.pack(">ii", maps, count)
            + k.tobytes()
            + v.tobytes()
        )

    won = int(np.flatnonzero(values == 65535)[0])
    inner = int(np.flatnonzero((values > 1000) & (values < 60000))[len(values) // 3])

    def changed(array, index, value):
        array = array.copy()
        array[index] = value
        return array

    settings = header["game_settings"]
    return [
        ("dup-key", blob(changed(keys, 1, keys[0]), values), "ascending"),
        ("high-bit", blob(np.sort(changed(keys, -1, keys[-1] | (1 << 31))), values), "outside"),
        ("middle", blob(np.sort(changed(keys, -1, (keys[-1] & ~(8191 << 6)) | (7000 << 6))), values), "outside"),
        ("home-7", blob(np.sort(changed(keys, -1, keys[-1] | (7 << 28))), values), "pieces"),
        ("all-zero", blob(keys, np.zeros_like(values)), "worth 1"),
        ("all-max", blob(keys, np.full_like(values, 65535)), "solve the game"),
        ("won-not-1", blob(keys, changed(values, won, 7)), "worth 1"),
        ("bellman", blob(keys, changed(values, inner, (values[inner] + 5000) % 65536)), "solve the game"),
        ("constant", blob(keys, np.where(values == 65535, 65535, 30000)), "solve the game"),
        ("header-list", blob(keys, values, [1]), "not an object"),
        ("header-string", blob(keys, values, "x"), "not an object"),
        ("header-dup", b"RGU\x00" + struct.pack(">i", 17) + b'{"a": 1, "a": 2}' + b"\x00" * 20, "twice"),
        ("settings-list", blob(keys, values, {**header, "game_settings": []}), "game_settings"),
        ("pieces-9", blob(keys, values, {**header, "game_settings": {**settings, "start_pieces": 9}}), "start_pieces"),
        (
            "pieces-str",
            blob(keys, values, {**header, "game_settings": {**settings, "start_pieces": "2"}}),
            "start_pieces",
        ),
        ("no-entries", blob([], [], entries=0), "no entries"),
        ("negative-entries", blob(keys, values, entries=-3), "entries"),
        ("maps-2", blob(keys, values, maps=2), "maps"),
        ("cut-header", RGU.read_bytes()[:9], "truncated"),
        ("cut-keys", RGU.read_bytes()[: len(RGU.read_bytes()) // 2], "truncated"),
    ]


# --- checks -----------------------------------------------------------------------------------------------------
def _snapshot(paths: list[Path]) -> list[tuple]:
    """What must not change: each path's kind, mode and content (or its listing, for a folder)."""
    out = []
    for path in paths:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            out.append((str(path), None))
            continue
        if stat.S_ISREG(st.st_mode):
            out.append((str(path), "file", st.st_mode, path.read_bytes()))
        elif stat.S_ISDIR(st.st_mode):
            out.append(
                (str(path), "dir", sorted((p.name, p.read_bytes() if p.is_file() else b"") for p in path.iterdir()))
            )
        elif stat.S_ISLNK(st.st_mode):
            out.append((str(path), "link", os.readlink(path)))
        else:
            out.append((str(path), "special", stat.S_IFMT(st.st_mode)))
    return out


def _guarded(outcome, protected: list[Path], before: list[tuple], Outcome):
    after = _snapshot(protected)
    if after != before:
        changed = [b[0] for a, b in zip(after, before, strict=True) if a != b]
        return Outcome(outcome.case, "data-loss", f"changed: {', '.join(changed)}")
    return outcome


def _escaped(root: Path) -> bool:
    """Did anything named 'escaped' get written above the audit's folder (a path traversal)?"""
    return any(
        p.name.startswith("escaped")
        for base in (root.parent, root.parent.parent, Path("/tmp"))
        for p in base.glob("escaped*")
    )


# --- the cases ------------------------------------------------------------------------------------------------
def _prepared(folder: Path) -> tuple[Path, dict]:
    work = folder / "untrusted"
    work.mkdir(exist_ok=True)
    record = _record(work)
    (work / "rec.json").write_text(json.dumps(record))
    return work, record


PARTS: dict[str, Callable[[Path, dict], list]] = {
    "records": lambda work, record: _record_cases(work, record, run_command, run_library_case, Outcome),
    "RGN": lambda work, record: _rgn_command_cases(work, record, run_command, run_library_case),
    "rules files": lambda work, record: _rules_file_cases(work, record, run_command),
    "RoyalUr tables": lambda work, record: _rgu_command_cases(work, run_command, run_library_case),
    "outputs": lambda work, record: _output_cases(work, run_command, Outcome),
    "hostile names": lambda work, record: _hostile_name_cases(work, record, Outcome),
    "library calls": lambda work, record: [run_library_case(*case) for case in _library_cases(work, Outcome)],
}
"""Each part of the round: (work folder, a good record) -> the outcomes of its cases."""


def run_part(name: str, folder: Path) -> list:
    """The outcomes of one part, in a work folder of ``folder``, with the round's security checks after it."""
    work, record = _prepared(folder)
    outcomes = PARTS[name](work, record)
    if (work / "pwned").exists():
        outcomes.append(Outcome("code from an OpenSpiel state string", "security", "the crafted pickle ran"))
    if _escaped(folder):
        outcomes.append(Outcome("path traversal", "security", "a file named 'escaped' was written"))
    return outcomes


def _record_cases(work, record, run_command, run_library_case, Outcome) -> list:
    from urgym import GameRecord

    outcomes = []
    for i, (field, value, what) in enumerate(RECORD_FIELDS):
        path = work / f"record-{i:02d}.json"
        path.write_text(json.dumps(_with(record, field, value)))
        before = _snapshot([path])
        outcome = run_command(["review", path.name, "--summary", "--no-solve"], (what, path.name), {}, work)
        outcome.case = f"record {field}={value!r}"[:80] + " (review)"
        outcomes.append(_guarded(outcome, [path], before, Outcome))
        outcomes.append(
            run_library_case(f"GameRecord.load(record {field}={value!r})"[:90], lambda p=path: GameRecord.load(p), what)
        )
    for name, data, what in RAW_RECORDS:
        path = work / name
        path.write_bytes(data)
        outcome = run_command(["review", name, "--no-solve"], (what, name), {}, work)
        outcome.case = f"raw record {name} (review)"
        outcomes.append(outcome)
        outcomes.append(run_library_case(f"GameRecord.load({name})", lambda p=path: GameRecord.load(p), what))
    return outcomes


def _rgn_command_cases(work, record, run_command, run_library_case) -> list:
    from urgym import GameRecord

    text = GameRecord.from_dict(record).to_rgn()
    outcomes = []
    for name, bad, what in _rgn_cases(text):
        path = work / f"{name}.rgn"
        path.write_text(bad)
        outcome = run_command(["review", path.name, "--summary", "--no-solve"], what, {}, work)
        outcome.case = f"RGN {name} (review)"
        outcomes.append(outcome)
        outcomes.append(run_library_case(f"GameRecord.from_rgn({name})", lambda t=bad: GameRecord.from_rgn(t), what))
    return outcomes


def _rules_file_cases(work, record, run_command) -> list:
    outcomes = []
    for i, (field, value, what) in enumerate(RULES_FILE_CASES):
        path = work / f"rules-{i:02d}.json"
        path.write_text(json.dumps(_with(record["rules"], field.split(".", 1)[1], value)))
        outcome = run_command(
            ["solve", "--rules-file", path.name, "--pieces", "1", "--out", "r.urtable", "--no-progress"], what, {}, work
        )
        outcome.case = f"rules file {field}={value!r}"[:80] + " (solve --rules-file)"
        outcomes.append(outcome)
    return outcomes


def _rgu_command_cases(work, run_command, run_library_case) -> list:
    from urgym import solver

    good = work / "good.urtable"
    solver.solve(solver.read_rgu(RGU).rules, progress=False).save(good)
    outcomes = []
    for name, blob, what in _rgu_cases():
        path = work / f"{name}.rgu"
        path.write_bytes(blob)
        for argv in (
            ["solve", "--import-rgu", path.name, "--out", "imported.urtable"],
            ["solve", "--compare", path.name, good.name],
        ):
            outcome = run_command(argv, (what, path.name), {}, work)
            outcome.case = f"RoyalUr table {name} ({argv[1]})"
            outcomes.append(outcome)
        outcomes.append(run_library_case(f"read_rgu({name})", lambda p=path: solver.read_rgu(p), what))
    return outcomes


def _output_cases(work, run_command, Outcome) -> list:
    """Outputs aimed at inputs, each other, special files and used folders: refused, and nothing changed."""
    from urgym.solver import cache_slots, load_or_solve

    from urgym import get_rules

    out = work / "outputs"
    out.mkdir()
    (out / "rec.json").write_text((work / "rec.json").read_text())
    (out / "target.txt").write_text("precious")
    os.symlink(out / "target.txt", out / "link.json")
    os.mkfifo(out / "fifo.json")
    (out / "folder").mkdir()
    used = out / "used"
    used.mkdir()
    (used / "game-000000.json").write_text("earlier record")
    (used / "notes.txt").write_text("mine")
    pair = out / "t" / "greedy-vs-random"
    pair.mkdir(parents=True)
    (pair / "game-000001.json").write_text("earlier record")
    load_or_solve(get_rules("finkel", 2), progress=False)
    slot = cache_slots(get_rules("finkel", 2))[0]
    protected = [
        out / "rec.json",
        out / "target.txt",
        out / "link.json",
        out / "fifo.json",
        out / "folder",
        used,
        pair,
        slot,
        Path("/dev/null"),
    ]
    small = ["--pieces", "2", "--no-progress"]
    cases = [
        (["review", "rec.json", "--json", "rec.json"], "would replace"),
        (["review", "rec.json", "--csv", "rec.json"], "would replace"),
        (["review", "rec.json", "--html", "./rec.json"], "would replace"),
        (["review", "rec.json", "--html", "folder/../rec.json"], "would replace"),
        (["review", "rec.json", "--json", "x.json", "--csv", "x.json"], "both write"),
        (["review", "rec.json", "--json", "-", "--html", "-"], "both write"),
        (["review", "rec.json", "--json", "/dev/null"], "device"),
        (["review", "rec.json", "--json", "link.json"], "symbolic link"),
        (["review", "rec.json", "--json", "fifo.json"], "FIFO"),
        (["review", "rec.json", "--html", "folder"], "directory"),
        (["review", "rec.json", "--html", "newfolder/"], "names a folder"),
        (["review", "rec.json", "--json", ""], "empty output path"),
        (["review", "rec.json", "--plot", "fifo.json"], ".png"),
        (["evaluate", "--agent", "greedy", *small, "--games", "2", "--save-games", "used"], "already holds"),
        (["evaluate", "--tournament", "greedy,random", *small, "--games", "2", "--save-games", "t"], "already holds"),
        (["stats", *small, "--games", "2", "--save-games", "used"], "already holds"),
        (["evaluate", "--agent", "greedy", *small, "--json", "o", "--csv", "o"], "both write"),
        (["evaluate", "--agent", "greedy", *small, "--csv", "/dev/null"], "device"),
        (["evaluate", "--agent", "greedy", *small, "--plot", "link.png"], "link.png"),
        (["solve", "--pieces", "2", "--tol", "0.9"], "ground truth"),
        (["solve", "--pieces", "2", "--dtype", "float32"], "ground truth"),
        (["solve", "--pieces", "2", "--tol", "0.9", "--out", str(slot)], "inside urgym's table cache"),
        (["solve", "--rules-file", "rec.json", "--out", "rec.json"], "would replace"),
        (["solve", "--rules-file", "rec.json", "--out", "./rec.json", "--tol", "0.001"], "would replace"),
        (["solve", "--pieces", "1", "--out", "fifo.json"], "FIFO"),
        (["solve", "--pieces", "1", "--out", "link.json"], "symbolic link"),
        (["ur-play", "--save", "fifo.json", "--pieces", "2"], "FIFO"),
        (["ur-play", "--save", "folder", "--pieces", "2"], "directory"),
        (["train", "--algo", "td-lambda", *small, "--out", "rec.json", "--timesteps", "10"], "rec.json"),
    ]
    if RGU.exists():
        (out / "t.rgu").write_bytes(RGU.read_bytes())
        protected.append(out / "t.rgu")
        cases.append((["solve", "--import-rgu", "t.rgu", "--out", "t.rgu"], "would replace"))
    os.symlink(out / "target.txt", out / "link.png")
    outcomes = []
    for argv, what in cases:
        before = _snapshot(protected)
        outcome = run_command(argv, what, {}, out)
        outcome.case = "output: " + outcome.case
        outcomes.append(_guarded(outcome, protected, before, Outcome))
    outcomes.append(_mode_case(out, Outcome))
    return outcomes


def _mode_case(out: Path, Outcome):
    """A new output gets the umask's mode and a replaced one keeps its own."""
    (out / "kept.json").write_text("{}")
    os.chmod(out / "kept.json", 0o644)
    old = os.umask(0o002)
    try:
        result = subprocess.run(
            [str(BIN / "review"), "rec.json", "--json", "new.json", "--csv", "kept.json", "--summary"],
            cwd=out,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        os.umask(old)
    modes = {
        name: stat.S_IMODE(os.stat(out / name).st_mode) for name in ("new.json", "kept.json") if (out / name).exists()
    }
    case = "output modes: a new file has the umask's, a replaced one keeps its own"
    if result.returncode != 0 or modes != {"new.json": 0o664, "kept.json": 0o644}:
        return Outcome(case, "accepted", f"status {result.returncode}, modes {modes}")
    return Outcome(case, "clear", f"modes {modes}")


def _hostile_name_cases(work, record, Outcome) -> list:
    """Valid records with hostile names: the review succeeds, and the page, CSV and plot keep the names as text."""
    rc = work / "mplrc"
    rc.mkdir()
    (rc / "matplotlibrc").write_text("svg.fonttype: none\n")  # text stays text in the SVG, so it can be read
    outcomes = []
    for i, name in enumerate(HOSTILE_NAMES):
        data = _with(_with(record, "players.light", name), "players.dark", HOSTILE_NAMES[-1 - i])
        path = work / f"named-{i}.json"
        path.write_text(json.dumps(data))
        page, table, plot = work / f"named-{i}.html", work / f"named-{i}.csv", work / f"named-{i}.svg"
        result = subprocess.run(
            [
                str(BIN / "review"),
                path.name,
                "--html",
                page.name,
                "--csv",
                table.name,
                "--plot",
                plot.name,
                "--summary",
            ],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "MATPLOTLIBRC": str(rc)},
        )
        case = f"hostile name {name!r} (review --html --csv --plot)"
        if result.returncode != 0:
            outcomes.append(
                Outcome(
                    case, "accepted" if "Traceback" not in result.stderr else "traceback", result.stderr.strip()[-200:]
                )
            )
            continue
        problems = (
            _page_problems(page.read_text(), name) + _csv_problems(table) + _plot_problems(plot.read_text(), name)
        )
        outcomes.append(Outcome(case, "security" if problems else "clear", "; ".join(problems) or "names kept as text"))
    return outcomes


def _page_problems(page: str, name: str) -> list[str]:
    import html

    problems = []
    data = page.split('type="application/json">', 1)[1].split("</script>", 1)[0]
    if "<" in data or ">" in data:
        problems.append("the embedded data can end its script element")
    if json.loads(data)["names"]["light"] != name:
        problems.append("the name did not survive in the page's data")
    if "innerHTML" in page:
        problems.append("the page's script uses innerHTML")
    title = page.split("<title>", 1)[1].split("</title>", 1)[0]
    if "<" in title or html.unescape(title).split(" vs ")[0] != name:
        problems.append("the title is not the escaped name")
    return problems


def _csv_problems(path: Path) -> list[str]:
    import csv

    cells = [cell for row in csv.reader(path.open(encoding="utf-8")) for cell in row]
    live = [c for c in cells if c.startswith(("=", "+", "@", "\t", "\r")) or (c.startswith("-") and not _is_number(c))]
    return [f"live formula cells in the CSV: {live[:2]}"] if live else []


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _plot_problems(svg: str, name: str) -> list[str]:
    import html

    title = html.unescape(svg)
    return [] if name in title else ["the plot's title does not show the name literally"]


def _library_cases(work: Path, Outcome) -> Iterator[tuple[str, Callable[[], object], str]]:
    import pyspiel
    from urgym.agents import make_agent

    import urgym.openspiel  # noqa: F401
    from urgym import Game, GameRecord, Position, Rules, get_rules, simulate, solver
    from urgym.env import UrEnv
    from urgym.multiagent import env as ma_env
    from urgym.multiagent import raw_env

    finkel2 = get_rules("finkel", 2)
    table = solver.load_or_solve(finkel2, progress=False)
    start = Position.start(finkel2)
    marker = work / "pwned"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    crafted = "history=\nmove_number=0\n__dict__=" + base64.b64encode(pickle.dumps({"x": Payload()})).decode()
    game = pyspiel.load_game("urgym", {"rules": "finkel", "pieces": 2})
    for text, what in (
        (crafted, "not a number"),
        ("2,9", "not legal"),
        ("9", "chance outcome"),
        ("x", "number"),
        ("2,,0", "number"),
        ("-1", "number"),
        ("2 0", "number"),
        ("1" * 30, "chance outcome"),
        ("2,0" + ",0" * 50, "legal"),
        ("\u0662", "number"),
        ("", None),
    ):
        if what is None:
            continue
        yield f"game.deserialize_state({text[:30]!r})", lambda t=text: game.deserialize_state(t), what

    def chance_seven():
        state = game.new_initial_state()
        try:
            state.apply_action(7)
        finally:
            if state.history() or state.roll is not None:
                raise AssertionError("an illegal chance action changed the state")
        return state

    def terminal_apply():
        state = game.new_initial_state()
        rolls = iter([1, 2, 3, 4] * 200)
        while not state.is_terminal():
            state.apply_action(next(rolls) if state.is_chance_node() else state.legal_actions()[-1])
        return state.apply_action(0)

    yield "OpenSpiel apply_action(7) at a chance node", chance_seven, "chance outcome 7"
    yield "OpenSpiel apply_action on a terminal state", terminal_apply, "game is over"
    for params, what in (
        ({"pieces": 0}, "pieces"),
        ({"pieces": -5}, "pieces"),
        ({"pieces": 16}, "pieces"),
        ({"rules": "../x"}, "rule set"),
    ):
        yield f"pyspiel.load_game('urgym', {params})", lambda p=params: pyspiel.load_game("urgym", p), what
    yield "table.win_probability(side='x')", lambda: table.win_probability(start, side="x"), "side"
    for index in (-1, table.index.size, 1.5, True):
        yield f"table.value_at({index!r})", lambda i=index: table.value_at(i), "index"
    for code in (-12345, 2**63, 1 << 20, 15 << 54):
        yield f"Position(rules, {code})", lambda c=code: Position(finkel2, c), "position code"
    yield "Position('finkel', 0)", lambda: Position("finkel", 0), "rules"

    def perfect_other_rules():
        agent = make_agent("perfect", table=table)
        return agent.select_move(Position.start(get_rules("finkel", 3)), 2)

    yield "make_agent('perfect', table=T) on other rules", perfect_other_rules, "was given the table"
    yield "make_agent('perfect', table=42)", lambda: make_agent("perfect", table=42), "table"
    for make in (ma_env, raw_env):
        yield (
            f"PettingZoo {make.__name__}.last() before reset",
            lambda m=make: m(rules="finkel", pieces=2).last(),
            "reset",
        )

        def after_end(m=make):
            env = m(rules="finkel", pieces=1)
            env.reset(seed=0)
            for _ in env.agent_iter():
                observation, _, done, cut, _ = env.last()
                env.step(None if done or cut else int(np.flatnonzero(observation["action_mask"])[0]))
            return env.step(0)

        yield f"PettingZoo {make.__name__}.step after the end", after_end, "game is over"
    for text in (None, 42, b"1. a5a3"):
        yield f"GameRecord.from_rgn({text!r})", lambda t=text: GameRecord.from_rgn(t), "RGN text"
    for seed in (-1, 2**64, 1.5, "3"):
        yield f"Game(seed={seed!r})", lambda s=seed: Game("finkel", seed=s), "seed"
        yield f"simulate(seed={seed!r})", lambda s=seed: simulate("finkel", games=2, seed=s), "seed"
        yield f"UrEnv.reset(seed={seed!r})", lambda s=seed: UrEnv(pieces=2).reset(seed=s), "seed"
    yield "Game(game=2**63)", lambda: Game("finkel", game=2**63), "game"
    for kwargs, what in (
        ({"name": "../x"}, "name"),
        ({"name": "x/y"}, "name"),
        ({"dice": [float("nan")] * 5}, "finite"),
        ({"safe_rosettes": "no"}, "safe_rosettes"),
        ({"dice": ["0.5", "0.5"]}, "dice"),
    ):
        args = {"name": "custom", "path": ["A1", "B1", "B2"], "rosettes": ["A1"], "pieces": 2, **kwargs}
        yield f"Rules.custom({kwargs})", lambda a=args: Rules.custom(**a), what
    for name, value in (("name", "../../escaped"), ("safe_rosettes", "no"), ("pieces", 2.0)):
        yield (
            f"Rules.from_dict({name}={value!r})",
            lambda n=name, v=value: Rules.from_dict({**finkel2.to_dict(), n: v}),
            name,
        )

    def impostor_rgn():
        impostor = Rules.custom(
            "finkel", path=list(reversed(finkel2.path)), rosettes=sorted(finkel2.rosettes), pieces=2
        )
        game = Game(impostor, seed=0)
        while not game.is_over:
            game.play(game.legal_moves[0])
        return GameRecord.from_game(game).to_rgn()

    yield "to_rgn of custom rules named 'finkel'", impostor_rgn, "custom rules named 'finkel'"
