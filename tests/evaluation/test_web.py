"""``ur-play --web``: the local server of the browser game, its token, and a whole game played by clicking."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("flask", reason="the web extra is not installed (pip install -e '.[web]')")

from urgym.agents import make_agent
from urgym.evaluation.web import TOKEN_HEADER, WebGame, create_app
from urgym.solver.cache import load_or_solve

from urgym import GameRecord, get_rules

RULES = get_rules("finkel", 2)
TOKEN = "test-token-123"


@pytest.fixture
def server(private_cache):
    from werkzeug.serving import make_server

    table = load_or_solve(RULES, progress=False)
    game = WebGame(RULES, make_agent("random", seed=1), table, "light", 7)
    httpd = make_server("127.0.0.1", 0, create_app(game, TOKEN), threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}", game
    httpd.shutdown()


def fetch(url, data=None, headers=None, raw=None):
    request = urllib.request.Request(url, data=raw if raw is not None else None if data is None else
                                     json.dumps(data).encode(),
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_requests_without_the_token_or_from_another_host_are_refused(server):
    base, game = server
    for path in ("/", "/api/state", "/api/hint", "/record.json", "/record.rgn", "/review"):
        assert fetch(base + path)[0] == 403, path
        assert fetch(f"{base}{path}?token=wrong")[0] == 403, path
    before = len(game.game.history)
    assert fetch(base + "/api/move", {"move": 0})[0] == 403
    assert fetch(base + "/api/new", {"side": "dark"}, {TOKEN_HEADER: "nope"})[0] == 403
    assert len(game.game.history) == before and game.human == "light"
    # DNS rebinding: a page on another host name that resolves here still names its own host
    assert fetch(f"{base}/api/state?token={TOKEN}", headers={"Host": "attacker.example:80"})[0] == 403
    status, body = fetch(f"{base}/?token={TOKEN}")
    assert status == 200 and "<title>" in body
    status, body = fetch(base + "/api/state", headers={TOKEN_HEADER: TOKEN})
    assert status == 200 and json.loads(body)["human"] == "light"


def test_illegal_moves_and_sides_get_a_clear_error_and_change_nothing(server):
    base, _ = server
    state = json.loads(fetch(base + "/api/state", headers={TOKEN_HEADER: TOKEN})[1])
    legal = [m["move"] for m in state["moves"]]
    illegal = next(m for m in range(RULES.length + 1) if m not in legal)
    for bad in (illegal, "0", 1.5, None, True):
        status, body = fetch(base + "/api/move", {"move": bad}, {TOKEN_HEADER: TOKEN})
        assert status == 400 and "is not a legal move" in json.loads(body)["error"], bad
    status, body = fetch(base + "/api/new", {"side": "purple"}, {TOKEN_HEADER: TOKEN})
    assert status == 400 and "side must be light, dark or random" in json.loads(body)["error"]
    for path in ("/api/move", "/api/new"):
        for hostile in (b"[0]", b'"dark"', b"3", b"null", b"{not json", b""):
            status, body = fetch(base + path, headers={TOKEN_HEADER: TOKEN}, raw=hostile)
            assert status == 400 and "must be a JSON object" in json.loads(body)["error"], (path, hostile)
    assert json.loads(fetch(base + "/api/state", headers={TOKEN_HEADER: TOKEN})[1]) == state


def test_oversized_and_deeply_nested_bodies_are_refused(server):
    base, game = server
    before = len(game.game.history)
    status, _ = fetch(base + "/api/move", headers={TOKEN_HEADER: TOKEN}, raw=b'{"move": 0, "x": "' + b"a" * 300_000
                      + b'"}')
    assert status == 413
    status, body = fetch(base + "/api/move", headers={TOKEN_HEADER: TOKEN}, raw=b"[" * 8000 + b"]" * 8000)
    assert status == 400 and "must be a JSON object" in json.loads(body)["error"]
    status, body = fetch(base + "/api/move", headers={TOKEN_HEADER: TOKEN}, raw=b'{"move": NaN}')
    assert status == 400
    assert len(game.game.history) == before


def test_a_hint_after_the_game_or_out_of_turn_is_a_clear_answer(server):
    base, game = server
    with game.lock:  # play the game out with the human's first legal move each time
        while not game.game.is_over:
            game.move(game.game.legal_moves[0])
    status, body = fetch(base + "/api/hint", headers={TOKEN_HEADER: TOKEN})
    assert status == 409 and json.loads(body)["error"] == "the game is over: no move to hint at"
    assert fetch(base + "/record.json", headers={TOKEN_HEADER: TOKEN})[0] == 200


def test_the_humans_only_legal_move_is_played_for_them(private_cache):
    from urgym.evaluation.web import FORCED_NOTE

    game = WebGame(RULES, make_agent("random", seed=3), load_or_solve(RULES, progress=False), "light", 11)
    while not game.game.is_over:
        assert game.game.turn == "light" and len(game.game.legal_moves) > 1  # asked only for a real choice
        game.move(game.game.legal_moves[-1])
    forced = [e for e in game.events if e["text"].endswith(FORCED_NOTE)]
    assert forced and all(e["side"] == "light" for e in forced)
    record = game.record()  # the forced moves are in the record like any other
    positions = record.positions()
    for step, position in zip(record.steps, positions, strict=False):
        if step.side == "light" and step.move is not None and len(position.legal_moves(step.roll)) == 1:
            assert step.move == position.legal_moves(step.roll)[0]


def test_the_favicon_is_no_content_without_the_token(server):
    base, _ = server
    assert fetch(base + "/favicon.ico")[0] == 204


def wait_until(page, check, timeout=30.0):
    """Poll ``check()`` (page.wait_for_function evaluates strings, which the page's CSP forbids, rightly)."""
    import time

    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the page did not get there in time"
        page.wait_for_timeout(20)


def _browser():
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.skip("no Chromium on this machine (apt-get install -y chromium); the play page is untested here")
    return path


def test_a_whole_game_against_random_by_clicking_with_a_hint_a_download_and_the_review(server, tmp_path):
    executable = _browser()
    from playwright.sync_api import sync_playwright

    base, game = server
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        page = browser.new_page(accept_downloads=True)
        errors, dialogs, outside = [], [], []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(base) else None)
        page.goto(f"{base}/?token={TOKEN}")
        page.wait_for_selector("#board .tile.movable")
        # a hint: every legal move's chance and the best marked
        page.click("#hint-button")
        wait_until(page, lambda: "best:" in page.text_content("#hint"))
        hint = game.hint()
        assert f"best: {hint['best']}" in page.text_content("#hint")
        top = max(hint["values"].values())
        for notation, value in hint["values"].items():  # each move's chance and its loss against the best
            loss = "the best" if top - value < 5e-5 else f"\u2212{100 * (top - value):.1f} points"
            assert f"{notation} {100 * value:.1f}% ({loss})" in page.text_content("#hint")
        assert page.get_attribute("#moves button.best", "data-notation") == hint["best"]
        clicks = 0
        while page.get_attribute("body", "data-over") != "true":
            events = page.get_attribute("body", "data-events")
            tiles = page.locator("#board .tile.movable")
            assert tiles.count() == len(game.state()["moves"])  # every legal move is clickable on the board
            tiles.first.click()
            clicks += 1
            wait_until(page, lambda: page.get_attribute("body", "data-events") != events  # noqa: B023
                       or page.get_attribute("body", "data-over") == "true")
            assert page.locator("#graph polyline#curve").count() == 1
            assert clicks < 400
        assert game.game.is_over and clicks > 3
        assert page.text_content("#status") in ("You won!", "random won.")
        # the record downloads as JSON and RGN, and replays to the same end
        with page.expect_download() as download:
            page.click("#download-json")
        saved = tmp_path / "game.json"
        download.value.save_as(saved)
        record = GameRecord.load(saved)
        assert record.players == {"light": "human", "dark": "random"} and record.replay().is_over
        assert record.to_dict() == game.record().to_dict()
        with page.expect_download() as download:
            page.click("#download-rgn")
        download.value.save_as(tmp_path / "game.rgn")
        assert GameRecord.load(tmp_path / "game.rgn").to_dict()["steps"] == record.to_dict()["steps"]
        # the review of that game, in the same page
        page.click("#show-review")
        frame = page.frame_locator("#review-frame")
        frame.locator("#grades").wait_for()
        assert frame.locator("#board .tile").count() >= len(RULES.board)
        assert "human vs random" in frame.locator("#title").text_content()
        # a new game as dark: the agent moves first
        page.select_option("#side", "dark")
        page.click("#new")
        wait_until(page, lambda: page.get_attribute("body", "data-over") == "false")
        assert "You (dark) rolled" in page.text_content("#status") and game.human == "dark"
        page.set_viewport_size({"width": 390, "height": 844})
        page.screenshot(path=str(tmp_path / "phone.png"))
        browser.close()
    assert errors == [] and dialogs == [] and outside == []


def test_play_web_prints_a_tokened_url_serves_it_and_stops_on_ctrl_c(private_cache):
    load_or_solve(RULES, progress=False)
    process = subprocess.Popen([str(Path(sys.executable).parent / "ur-play"), "--web", "--no-browser", "--pieces", "2",
                                "--agent", "greedy"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ}, start_new_session=True)
    try:
        url = None
        for line in process.stdout:
            found = re.search(r"http://127\.0\.0\.1:\d+/\?token=[\w-]+", line)
            if found:
                url = found.group(0)
                break
        assert url, "no URL printed"
        status, body = fetch(url)
        assert status == 200 and "Ur: play greedy (finkel)" in body
        assert fetch(url.split("?")[0])[0] == 403
    finally:
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0 and out.strip().splitlines()[-1] == "Server stopped.", (out, err)
    assert "Traceback" not in err


def test_the_live_chances_are_the_tables_chances_of_the_records_positions(private_cache):
    """The page's graph, kept as the game goes, equals light's chance at every position of the game's record."""
    table = load_or_solve(RULES, progress=False)
    passes = 0
    for seed in range(12, 20):
        game = WebGame(RULES, make_agent("greedy", seed=3), table, ("dark", "light")[seed % 2], seed)
        while not game.game.is_over:
            game.move(game.game.legal_moves[-1])
        positions = game.record().positions()
        assert len(game.events) == len(game.record().steps) == len(positions) - 1
        assert game.chances == [table.win_probability(p, "light") for p in positions]
        passes += sum(e["notation"].endswith("-") for e in game.events)
    assert passes > 0  # passes were told, and their positions counted
