"""``ur-play --web``: the local server of the browser game, its token, and a whole game played by clicking."""

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("flask", reason="the web extra is not installed (pip install -e '.[web]')")

from urgym.agents import make_agent
from urgym.evaluation.play.web import TOKEN_HEADER, WebGame, create_app, game_server
from urgym.solver.cache import load_or_solve

from urgym import GameRecord, get_rules

RULES = get_rules("finkel", 2)
TOKEN = "test-token-123"


@pytest.fixture
def server(private_cache):
    table = load_or_solve(RULES, progress=False)
    game = WebGame(RULES, make_agent("random", seed=1), table, "light", 7)
    httpd = game_server(create_app(game, TOKEN))  # the server ur-play --web runs
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}", game
    httpd.shutdown()


def fetch(url, data=None, headers=None, raw=None):
    request = urllib.request.Request(
        url,
        data=raw if raw is not None else None if data is None else json.dumps(data).encode(),
        headers={"Content-Type": "application/json", **(headers or {})},
    )
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
    status, _ = fetch(
        base + "/api/move", headers={TOKEN_HEADER: TOKEN}, raw=b'{"move": 0, "x": "' + b"a" * 300_000 + b'"}'
    )
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
    from urgym.evaluation.play.web import FORCED_NOTE

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


def _launch(p, executable, base):
    """A page that fails the test on a script error, a dialog or a request outside the server."""
    browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
    page = browser.new_page(accept_downloads=True)
    problems = []
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    page.on("request", lambda r: problems.append(f"outside: {r.url}") if not r.url.startswith(base) else None)
    return browser, page, problems


@contextlib.contextmanager
def chromium_page(base, query="pause=0"):
    """The play page in headless Chromium; a script error, a dialog or a request elsewhere fails the test."""
    executable = _browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser, page, problems = _launch(p, executable, base)
        page.goto(f"{base}/?token={TOKEN}&{query}")
        yield page
        browser.close()
    assert problems == []


# Kept in the page from its first script on: each roll as it was shown (its step, the banner's kind, whether anything
# that moves or hints was live) and when the screen next changed (the next roll or the decision), in the page's clock,
# so what the test checks does not depend on how often a busy machine lets it look.
RECORD_SHOWINGS = """
window.__showings = [];
new MutationObserver(records => {
  for (const r of records) {
    if (r.target !== document.body) continue;
    const now = performance.now(), last = window.__showings[window.__showings.length - 1];
    if (last && last.until === null) last.until = now;
    if (r.attributeName !== "data-showing" || !document.body.dataset.showing) continue;
    const live = document.querySelectorAll("#moves button:not([disabled]), .movable, .hintmark").length;
    window.__showings.push({step: JSON.parse(document.body.dataset.showing).step, until: null, at: now, live,
      banner: document.getElementById("announce").className, ready: document.body.dataset.ready});
  }
}).observe(document, {subtree: true, attributes: true, attributeFilter: ["data-showing", "data-ready"]});
"""


def _seen(page):
    seen = page.get_attribute("body", "data-seen") or ""
    return [int(i) for i in seen.split(",") if i]


def play_by_clicking(page, game, prefer_home):
    """Play the game to its end by clicking the board (a piece at home when ``prefer_home`` allows).

    At each decision, check that every roll since the last one was shown, one at a time, before the decision was
    offered. Returns the clicks and the home pieces clicked.
    """
    clicks = home_clicks = 0
    while True:
        ready = page.get_attribute("body", "data-ready")
        if ready != "true" and page.get_attribute("body", "data-over") != "true":
            # not the player's turn: nothing that moves or hints is live, and the last decision's hint is gone
            live = page.evaluate("""() => [document.querySelectorAll('#moves button:not([disabled])').length,
                document.querySelectorAll('.movable').length, document.querySelectorAll('.hintmark').length,
                document.getElementById('hint-button').disabled]""")
            if page.get_attribute("body", "data-ready") != "true":  # still not ready after reading: a real check
                assert live == [0, 0, 0, True], live
            page.wait_for_timeout(10)
            continue
        state = _state(game)
        # every event of the game so far was shown, in order, and the board shows the position now
        assert _seen(page) == list(range(len(state["events"])))
        pieces = {
            side: sorted(
                page.eval_on_selector_all(f"#board .piece.{side}", "els => els.map(e => e.parentElement.dataset.tile)")
            )
            for side in ("light", "dark")
        }
        position = game.game.position
        assert pieces == {side: sorted(position.tiles(side)) for side in ("light", "dark")}
        for side in ("light", "dark"):
            assert page.locator(f"#{side}-home .piece").count() == position.home(side)
            assert page.locator(f"#{side}-scored .piece").count() == position.scored(side)
        if state["over"]:
            return clicks, home_clicks
        legal = state["moves"]
        home = page.locator(f"#{game.human}-home .piece.movable")
        tiles = page.locator("#board .tile.movable")
        assert home.count() + tiles.count() == len(legal)  # every legal move is clickable: a tile or a home piece
        enter = home.count() > 0 and (prefer_home or not tiles.count())
        target = home.first if enter else tiles.nth(clicks % tiles.count())
        home_clicks += enter
        before = len(state["events"])
        target.click()
        clicks += 1
        wait_until(page, lambda: len(_state(game)["events"]) > before)  # noqa: B023
        assert clicks < 400


def _state(game):
    """The game's state read as a request reads it, under its lock (the server's thread may be changing it)."""
    with game.lock:
        return game.state()


@pytest.mark.parametrize(
    ("rules", "opponent", "side", "viewport"),
    [("finkel", "random", "light", (1280, 800)), ("blitz", "greedy", "dark", (390, 844))],
)
def test_whole_games_by_clicking_on_two_rule_sets_against_two_opponents(server, rules, opponent, side, viewport):
    """A new game is chosen in the page (opponent, rules, pieces, side) and played to its end by clicking.

    On a desktop's and a phone's screen. Pieces at home included; the opponent's moves are shown one at a time before
    each decision, a capture and a rosette's extra roll with their banner; the game ends with the result banner.
    """
    executable = _browser()
    from playwright.sync_api import sync_playwright

    load_or_solve(get_rules(rules, 3), progress=False)  # hints and the graph on both rule sets
    base, game = server
    with sync_playwright() as p:
        browser, page, problems = _launch(p, executable, base)
        page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
        page.add_init_script(RECORD_SHOWINGS)
        page.goto(f"{base}/?token={TOKEN}&pause=40")
        page.wait_for_selector("body[data-ready=true]")
        offered = page.eval_on_selector_all("#opponent option", "els => els.map(e => e.value)")
        assert offered[:4] == ["random", "greedy", "heuristic", "expectimax:1"] and "perfect" in offered
        page.select_option("#opponent", opponent)
        page.select_option("#rules", rules)
        page.select_option("#pieces", "3")
        page.select_option("#side", side)
        page.evaluate("window.__showings = []")  # the game loaded with the page is done: record the new one's
        page.click("#new")
        wait_until(page, lambda: (game.rules.name, game.rules.pieces, game.human) == (rules, 3, side))
        assert game.opponent == opponent and game.rules.pieces == 3
        wait_until(page, lambda: page.get_attribute("body", "data-ready") == "true")
        assert page.text_content("#title") == f"Ur: you ({side}) against {opponent}"
        dice = page.locator("#dice polygon.die").count()
        assert dice == 4  # four tetrahedral dice on both rule sets
        clicks, home_clicks = play_by_clicking(page, game, prefer_home=True)
        # pieces entered by clicking them at home (the first is entered for the player: its only legal move)
        assert game.game.is_over and clicks >= 3 and home_clicks >= 1
        showings = page.evaluate("window.__showings")
        assert [s["step"] for s in showings] == list(range(len(game.events)))  # every roll, once, in order
        for shown, event in zip(showings, game.events, strict=True):
            # shown while nothing was live, with its banner, and left on screen for the pause before the next
            assert shown["ready"] == "false" and shown["live"] == 0, shown
            expected = "capture" if event["capture"] else "rosette" if event["extra_roll"] else None
            assert expected is None or shown["banner"] == expected, (shown, event)
            if event["side"] != side and shown["until"] is not None:
                assert shown["until"] - shown["at"] >= 40 - 2, shown  # a timer may fire a millisecond early
        assert page.text_content("#status") in ("You won!", f"{opponent} won.")
        assert page.is_visible("#result") and page.text_content("#result-title").startswith(
            ("You won", f"{opponent} won")
        )
        browser.close()
    assert problems == []


def test_a_whole_game_with_a_hint_a_download_and_the_review(server, tmp_path):
    executable = _browser()
    from playwright.sync_api import sync_playwright

    base, game = server
    with sync_playwright() as p:
        browser, page, problems = _launch(p, executable, base)
        page.goto(f"{base}/?token={TOKEN}&pause=0")
        page.wait_for_selector("body[data-ready=true]")
        # a hint: every legal move's chance and its loss against the best, in words and on the board
        page.click("#hint-button")
        wait_until(page, lambda: "best:" in page.text_content("#hint"))
        hint = game.hint()
        assert f"best: {hint['best']}" in page.text_content("#hint")
        top = max(hint["values"].values())
        for notation, value in hint["values"].items():
            loss = "the best" if top - value < 5e-5 else f"\u2212{100 * (top - value):.1f} points"
            reason = hint["reasons"].get(notation)
            assert f"{notation} {100 * value:.1f}% ({loss}{': ' + reason if reason else ''})" in page.text_content(
                "#hint"
            )
            mark = page.locator(f'#board .hintmark[data-notation="{notation}"]')
            assert mark.count() == 1
            assert mark.text_content() == ("best" if notation == hint["best"] else f"\u2212{100 * (top - value):.1f}")
            # the label lies inside its tile, not on the border between two
            inner, outer = mark.bounding_box(), mark.locator("xpath=..").bounding_box()
            assert outer["x"] <= inner["x"] and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 0.5
            assert outer["y"] <= inner["y"] and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 0.5
        assert page.get_attribute("#moves button.best", "data-notation") == hint["best"]
        clicks, _ = play_by_clicking(page, game, prefer_home=False)
        assert game.game.is_over and clicks > 3
        assert page.text_content("#status") in ("You won!", "random won.")
        # the end: a banner with the score, the accuracy (or why there is none) and what to do next
        result = game.result()
        loser = "dark" if result["winner"] == "light" else "light"
        score = f"{result['score'][result['winner']]}\u2013{result['score'][loser]}"  # the winner's count first
        assert page.is_visible("#result") and score in page.text_content("#result-title")
        detail = page.text_content("#result-detail")
        if result["accuracy"] is None:
            assert f"Too few decisions with a choice ({result['decisions']})" in detail
        else:
            assert f"{result['accuracy']:.1f}% ({result['rating']})" in detail
        assert page.is_enabled("#show-review") and page.is_hidden("#review-why")
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
        # the rules of the game, from the page
        with page.context.expect_page() as opened:
            page.click("#how-to-play")
        rules_page = opened.value
        rules_page.wait_for_selector("#sections p")
        assert rules_page.locator('p[data-section="Goal"]').text_content().startswith("Each player has 2 pieces")
        assert rules_page.locator("#chances tr").count() == 5
        # a new game as dark: the agent moves first
        page.select_option("#side", "dark")
        page.click("#new")
        wait_until(page, lambda: page.get_attribute("body", "data-ready") == "true" and game.human == "dark")
        assert "You (dark) rolled" in page.text_content("#status")
        # the graph speaks from the player's side: dark's chance now, as the hint does
        wait_until(page, lambda: "your (dark) winning chance" in page.text_content("#graph"))
        shown = float(re.search(r"your \(dark\) winning chance: (\d+\.\d)%", page.text_content("#graph")).group(1))
        assert shown == pytest.approx(100 * (1 - game.chances[-1]), abs=0.051)
        browser.close()
    assert problems == []


def test_a_phone_width_page_fits_the_screen(server):
    executable = _browser()
    from playwright.sync_api import sync_playwright

    base, _ = server
    with sync_playwright() as p:
        browser, page, problems = _launch(p, executable, base)
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(f"{base}/?token={TOKEN}&pause=0")
        page.wait_for_selector("body[data-ready=true]")
        widest = page.evaluate("""() => [...document.querySelectorAll('body *')]
            .map(e => [e.getBoundingClientRect().right, e.tagName + '#' + e.id]).sort((a, b) => b[0] - a[0])[0]""")
        assert widest[0] <= 390, widest
        page.locator(".movable").first.click()  # still playable
        wait_until(
            page,
            lambda: (
                page.get_attribute("body", "data-ready") == "true" or page.get_attribute("body", "data-over") == "true"
            ),
        )
        browser.close()
    assert problems == []


def test_play_web_prints_a_tokened_url_serves_it_and_stops_on_ctrl_c(private_cache):
    load_or_solve(RULES, progress=False)
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "ur-play"), "--web", "--no-browser", "--pieces", "2", "--agent", "greedy"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ},
        start_new_session=True,
    )
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


def test_the_url_reaches_a_file_while_the_server_runs(private_cache, tmp_path):
    """Issue 38: with stdout sent to a file (a service log), the URL and its token must be there at once."""
    load_or_solve(RULES, progress=False)
    log = tmp_path / "ur-play.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [str(Path(sys.executable).parent / "ur-play"), "--web", "--no-browser", "--pieces", "2"],
            stdout=out,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "token=" not in log.read_text():
            time.sleep(0.2)
        assert re.search(r"http://127\.0\.0\.1:\d+/\?token=[\w-]+", log.read_text()), log.read_text()
    finally:
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=30)


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


def test_a_new_game_chooses_opponent_rules_and_pieces_only_among_those_offered(server, private_cache):
    base, game = server
    before = (game.rules, game.opponent, game.seed)
    for body, message in [
        ({"opponent": "engine:rm -rf /"}, "unknown opponent 'engine:rm -rf /'; the page offers random, greedy"),
        ({"opponent": "evil.py:Agent"}, "unknown opponent"),
        ({"opponent": "x" * 5000}, "unknown opponent 'xxxx"),
        ({"rules": "../finkel"}, "unknown rule set '../finkel'; the page offers finkel, blitz"),
        ({"rules": ["finkel"]}, "unknown rule set ['finkel']"),
        ({"pieces": 0}, "pieces must be a whole number from 1 to 7, got 0"),
        ({"pieces": 8}, "got 8"),
        ({"pieces": "3"}, "got '3'"),
        ({"pieces": True}, "got True"),
        ({"pieces": 2.5}, "got 2.5"),
        ({"opponent": "td", "pieces": 3}, "td cannot play finkel"),  # its model learned 7 pieces only
        ({"opponent": "perfect", "rules": "masters", "pieces": 1}, "no solved table of these rules is cached"),
    ]:
        status, text = fetch(base + "/api/new", body, {TOKEN_HEADER: TOKEN})
        error = json.loads(text)["error"]
        assert status == 400 and message in error, (body, error)
        assert len(error) < 400  # a stranger's long value is cut, not echoed in full
        assert (game.rules, game.opponent, game.seed) == before  # the game in progress is kept
    status, text = fetch(
        base + "/api/new",
        {"opponent": "expectimax:1", "rules": "aseb", "pieces": 1, "side": "dark"},
        {TOKEN_HEADER: TOKEN},
    )
    state = json.loads(text)
    assert status == 200 and (state["rules"], state["pieces"], state["opponent"], state["human"]) == (
        "aseb",
        1,
        "expectimax:1",
        "dark",
    )
    assert game.agent.spec == "expectimax:depth=1" and state["board"]["dice"] == 4 and not state["hints"]
    unavailable = {o["spec"]: o["unavailable"] for o in state["opponents"]}
    assert "no solved table" in unavailable["perfect"] and "learned finkel with 7 pieces" in unavailable["ppo"]
    assert unavailable["greedy"] is None


def test_the_how_to_play_page_is_drawn_from_the_rules(server):
    base, _ = server
    for name in ("finkel", "blitz", "masters", "aseb", "murray", "skiriuk"):
        status, body = fetch(f"{base}/how-to-play?token={TOKEN}&rules={name}")
        assert status == 200 and f"How to play Ur: {name}" in body
    status, body = fetch(f"{base}/how-to-play?token={TOKEN}&rules=%3Cscript%3E")
    assert status == 400 and "unknown rule set '<script>'" in body
    assert fetch(f"{base}/how-to-play?rules=finkel")[0] == 403  # the token guards it too


def test_without_a_table_hints_are_the_shipped_networks_estimate_and_say_so(private_cache):
    from urgym.agents.models import shipped_models

    if ("blitz", 5) not in shipped_models():
        pytest.fail("the shipped blitz network is missing from urgym/agents/models")
    rules = get_rules("blitz")
    game = WebGame(rules, make_agent("greedy"), None, "light", 5)
    while len(game.game.legal_moves) < 2:
        game.move(game.game.legal_moves[0])
    state = game.state()
    assert state["hints"] and not state["chances"]  # hints from the network; no exact graph without the table
    hint = game.hint()
    assert not hint["exact"] and "neural network" in hint["source"] and "depth 2" in hint["source"]
    assert set(hint["values"]) == {m["notation"] for m in state["moves"]}
    assert hint["values"][hint["best"]] == max(hint["values"].values())
    with pytest.raises(LookupError, match="the review needs the solved table"):
        game.review_html()


def test_every_rung_of_the_ladder_is_an_agent_named_back_as_the_ladder_names_it():
    from urgym.evaluation.play.web import LADDER, LEARNED_RULES, STRENGTH, _ladder_name

    for spec in LADDER:
        assert _ladder_name(make_agent(spec).spec) == spec
    for spec in LEARNED_RULES:
        assert spec in LADDER
    for rule_set, strengths in STRENGTH.items():
        assert set(strengths) <= set(LADDER), rule_set
        assert strengths["perfect"] == 0.5 and all(0 <= value <= 0.5 for value in strengths.values())


def test_in_chromium_a_hint_without_a_table_says_it_is_the_networks_estimate(private_cache):
    executable = _browser()
    from playwright.sync_api import sync_playwright

    game = WebGame(get_rules("blitz"), make_agent("greedy"), None, "light", 5)  # no blitz-5 table is cached
    httpd = game_server(create_app(game, TOKEN))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_port}"
    try:
        with sync_playwright() as p:
            browser, page, problems = _launch(p, executable, base)
            page.goto(f"{base}/?token={TOKEN}&pause=0")
            page.wait_for_selector("body[data-ready=true]")
            # the page plays a single legal move by itself: wait for a decision with a choice
            wait_until(
                page, lambda: page.get_attribute("body", "data-ready") == "true" and len(game.game.legal_moves) >= 2
            )
            page.click("#hint-button")
            wait_until(page, lambda: "best:" in page.text_content("#hint"))
            text = page.text_content("#hint")
            assert text.startswith("The neural network's estimate") and "not exact" in text
            # no table: no empty graph box, one line saying why and what gives one
            assert not page.is_visible("#graph") and page.is_visible("#graph-note")
            assert "solve --rules blitz --pieces 5" in page.text_content("#graph-note")
            assert f"best: {game.hint()['best']}" in text
            assert problems == []
            browser.close()
    finally:
        httpd.shutdown()


def test_idle_and_excess_connections_are_bounded_and_the_page_still_answers(private_cache):
    """Hundreds of idle connections without the token hold at most the server's slots, and only for a while."""
    import socket

    game = WebGame(RULES, make_agent("random", seed=1), None, "light", 7)
    httpd = game_server(create_app(game, TOKEN), connections=8, idle=1.0)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_port}"
    threads_before = threading.active_count()
    idle = []
    try:
        for _ in range(300):
            sock = socket.create_connection(("127.0.0.1", httpd.server_port))
            idle.append(sock)
        time.sleep(0.3)
        assert threading.active_count() - threads_before <= 8  # one thread per slot at most, not 300
        time.sleep(1.5)  # the idle ones are closed after a second: the page answers again
        status, _ = fetch(f"{base}/api/state?token={TOKEN}")
        assert status == 200
        assert threading.active_count() - threads_before <= 8
    finally:
        for sock in idle:
            sock.close()
        httpd.shutdown()


def test_state_is_never_read_halfway_through_a_new_game(server):
    """/api/state reads under the lock /api/new holds: a state always describes one game."""
    base, _ = server
    stop = threading.Event()
    mixed = []

    def read_states():
        while not stop.is_set():
            _, text = fetch(f"{base}/api/state?token={TOKEN}")
            state, position = json.loads(text), json.loads(text)["position"]
            counts = {len(position[s]) + position["home"][s] + position["scored"][s] for s in ("light", "dark")}
            if counts != {state["pieces"]} or not state["describe"].startswith(f"{state['rules']}:"):
                mixed.append(state)

    readers = [threading.Thread(target=read_states) for _ in range(3)]
    for reader in readers:
        reader.start()
    try:
        for k in range(30):
            rules, pieces = ("masters", 3) if k % 2 else ("finkel", 2)
            status, _ = fetch(f"{base}/api/new?token={TOKEN}", {"rules": rules, "pieces": pieces})
            assert status == 200
    finally:
        stop.set()
        for reader in readers:
            reader.join()
    assert not mixed


def test_a_long_or_odd_agent_spec_never_breaks_the_record_or_the_review(private_cache, tmp_path):
    """An agent spec is not a player name: /record.json and /review answer with a valid form of it."""
    import shutil

    from urgym.agents.models import DEFAULT_TD_MODEL

    folder = tmp_path / ("d" * 150) / "e\x1bf"
    folder.mkdir(parents=True)
    shutil.copy(DEFAULT_TD_MODEL, folder / "td.npz")
    rules = get_rules("finkel")
    game = WebGame(rules, make_agent(f"td:model={folder / 'td.npz'}"), None, "light", 3)
    httpd = game_server(create_app(game, TOKEN))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_port}"
    try:
        status, text = fetch(f"{base}/record.json?token={TOKEN}")
        assert status == 200, text
        record = GameRecord.from_dict(json.loads(text))
        assert record.players["dark"].endswith("…") and "\x1b" not in record.players["dark"]
        assert fetch(f"{base}/review?token={TOKEN}")[0] in (200, 404)  # 404: no table for a review, never 500
        import datetime

        for suffix in ("json", "rgn"):  # downloads named after the game, with nothing of the spec's odd characters
            with urllib.request.urlopen(f"{base}/record.{suffix}?token={TOKEN}", timeout=30) as response:
                disposition = response.headers["Content-Disposition"]
            name = re.fullmatch(r'attachment; filename="([^"]+)"', disposition).group(1)
            assert name.startswith("ur-finkel-vs-td-model-") and len(name) < 90
            assert name.endswith(f"-{datetime.date.today().isoformat()}.{suffix}")
            assert re.fullmatch(r"[A-Za-z0-9.-]+", name)
    finally:
        httpd.shutdown()


@pytest.mark.parametrize("name", ["finkel", "blitz", "masters"])
def test_the_opponents_are_offered_weakest_first_as_measured(name):
    from urgym.evaluation.play.web import WebGame

    game = WebGame(get_rules(name), make_agent("random", seed=1), None, "light", 1)
    offered = game.opponents()
    strengths = [o["strength"] for o in offered if o["strength"] is not None]
    assert strengths == sorted(strengths) and len(strengths) >= 10  # expectimax:1 (0.0%) sat after heuristic
    measured = [o["spec"] for o in offered if o["strength"] is not None]
    agents = [o for o in offered if o["spec"] != "friend"]
    assert measured[-1] == "perfect" and all(o["unavailable"] for o in agents if o["strength"] is None)
    assert offered[-1]["spec"] == "friend" and offered[-1]["unavailable"] is None  # two people: always, and last


def test_the_replay_can_be_skipped_and_its_speed_is_a_setting(server):
    executable = _browser()
    from playwright.sync_api import sync_playwright

    base, game = server
    with sync_playwright() as p:
        browser, page, problems = _launch(p, executable, base)
        page.goto(f"{base}/?token={TOKEN}&pause=3000")
        assert page.input_value("#speed") == "3000"  # the URL's pause, offered beside the named speeds
        page.wait_for_selector("body[data-ready=true]", timeout=60_000)
        skipped = 0
        for _ in range(6):  # a few moves, each replay of the opponent's 3-second rolls cut short
            if game.game.is_over:
                break
            before = len(game.events)
            page.locator("#moves button.move").first.click()
            wait_until(page, lambda before=before: len(game.events) > before)
            waiting = len(game.events) - before - 1  # rolls after the player's own move, 3 s each
            began = time.monotonic()
            if waiting and page.get_attribute("body", "data-ready") != "true":
                page.click("#skip")
                skipped += 1
            page.wait_for_selector("body[data-ready=true], body[data-over=true]", timeout=60_000)
            assert time.monotonic() - began < 2.5 or not waiting  # not waiting * 3 s
            assert page.is_disabled("#skip")  # only a replay can be skipped
        assert skipped >= 1
        # keys: h for a hint, a move's number to play it (the buttons are numbered)
        page.wait_for_selector("body[data-ready=true], body[data-over=true]", timeout=60_000)
        if not game.game.is_over:
            assert page.locator("#moves button.move").first.text_content().startswith("1: ")
            page.keyboard.press("h")
            wait_until(page, lambda: "best:" in page.text_content("#hint"))
            before, first = len(game.events), game.state()["moves"][0]["move"]
            page.keyboard.press("1")
            wait_until(page, lambda: len(game.events) > before)
            assert game.record().steps[before].move == first
        page.select_option("#speed", "0")
        page.goto(f"{base}/?token={TOKEN}")  # no ?pause=: the speed chosen last
        assert page.input_value("#speed") == "0"
        browser.close()
    assert problems == []


def test_the_end_gives_the_score_and_rates_only_games_with_enough_decisions(private_cache):
    from urgym.evaluation.review.grades import MIN_RATED_DECISIONS

    table = load_or_solve(RULES, progress=False)
    game = WebGame(RULES, make_agent("random", seed=1), table, "light", 7)
    assert game.result() is None  # not over yet
    while not game.game.is_over:
        game.move(game.state()["moves"][0]["move"])
    result = game.result()
    position = game.game.position
    assert result["score"] == {"light": position.scored("light"), "dark": position.scored("dark")}
    assert result["winner"] == game.game.winner and max(result["score"].values()) == RULES.pieces
    review = game._review()
    decisions = sum(1 for m in review.moves if m.side == "light" and m.accuracy is not None)
    assert result["decisions"] == decisions
    if decisions >= MIN_RATED_DECISIONS:
        mine = next(p for p in review.players if p.side == "light")
        assert (result["accuracy"], result["rating"]) == (mine.accuracy, mine.rating)
    else:
        assert result["accuracy"] is None and result["rating"] is None
    # without a table: the score, no accuracy, and the review says what would make it possible
    bare = WebGame(RULES, make_agent("random", seed=1), None, "light", 7)
    while not bare.game.is_over:
        bare.move(bare.state()["moves"][0]["move"])
    assert bare.result()["accuracy"] is None and bare.result()["decisions"] is None
    status = bare.review_status()
    assert not status["available"] and "solve --rules finkel --pieces 2" in status["reason"]
    assert "positions" in status["reason"]  # the estimate: what the solve takes
    with pytest.raises(LookupError, match="solve --rules finkel --pieces 2"):
        bare.review_html()


def test_events_say_which_moves_capture_and_which_land_on_a_rosette(server):
    _, game = server
    while not game.game.is_over:
        game.move(game.state()["moves"][-1]["move"])
    for event in game.events:
        if event["from"] is None:
            assert not (event["capture"] or event["rosette"] or event["extra_roll"])
    captures = sum(e["capture"] for e in game.events)
    assert captures == sum("x" in (e["notation"] or "") for e in game.events)
    assert sum(e["rosette"] for e in game.events) == sum((e["notation"] or "").endswith("+") for e in game.events)


def test_opponents_of_other_rules_are_asked_for_before_the_game(server):
    base, game = server
    status, text = fetch(f"{base}/api/opponents?rules=masters&pieces=7", headers={TOKEN_HEADER: TOKEN})
    offered = {o["spec"]: o for o in json.loads(text)["opponents"]}
    assert status == 200 and offered["ppo"]["unavailable"] and offered["random"]["unavailable"] is None
    assert offered["perfect"]["name"] == "King of Ur" and offered["greedy"]["about"]
    for query, message in [
        ("rules=../etc&pieces=2", "unknown rule set '../etc'"),
        ("rules=finkel&pieces=9", "pieces must be a whole number from 1 to 7"),
        ("rules=finkel&pieces=-1", "got '-1'"),
        ("rules=finkel&pieces=%C2%B2", "pieces must be a whole number"),  # "²": a digit to str.isdigit, not to int
        ("rules=finkel&pieces=%D9%A3", "pieces must be a whole number"),  # an Arabic-Indic three
        ("rules=finkel", "got ''"),
    ]:
        status, text = fetch(f"{base}/api/opponents?{query}", headers={TOKEN_HEADER: TOKEN})
        assert status == 400 and message in json.loads(text)["error"], query
    assert game.rules == RULES  # asking changes nothing


def test_in_chromium_rules_refresh_the_opponents_a_new_game_asks_and_the_tutor_warns(server):
    base, game = server
    with chromium_page(base) as page:
        page.wait_for_selector("body[data-ready=true]")
        assert "Pebble" in page.text_content("#opponent-about")  # the level's name and what it does
        assert "marked tips" in page.text_content("#dice-text")  # the dice explained
        # another rule set: its own piece count, and its opponents (asked for before any game starts)
        page.select_option("#rules", "masters")
        wait_until(page, lambda: page.input_value("#pieces") == "7")
        wait_until(page, lambda: page.is_disabled('#opponent option[value="ppo"]'))
        page.select_option("#rules", "finkel")
        page.select_option("#pieces", "7")
        wait_until(page, lambda: not page.is_disabled('#opponent option[value="ppo"]'))
        page.select_option("#pieces", "2")
        wait_until(page, lambda: page.is_disabled('#opponent option[value="ppo"]'))
        page.select_option("#opponent", "random")
        # the tutor: a move that gives away more than the chosen points is questioned first, in the page
        page.check("#tutor")
        page.select_option("#tutor-points", "1")
        for _ in range(60):
            page.wait_for_selector("body[data-ready=true], body[data-over=true]")
            if game.game.is_over:
                break
            hint = game.hint()
            top = max(hint["values"].values())
            bad = [m for m in game.state()["moves"] if top - hint["values"][m["notation"]] > 0.011]
            before = len(game.events)
            if not bad:
                page.locator("#moves button.move").first.click()
                wait_until(page, lambda before=before: len(game.events) > before)
                continue
            page.click(f'#moves button[data-move="{bad[0]["move"]}"]')
            page.wait_for_selector("#tutor-warning:not(.hidden)")
            assert "gives away" in page.text_content("#tutor-text") and len(game.events) == before
            page.click("#tutor-play")
            wait_until(page, lambda before=before: len(game.events) > before)
            assert game.record().steps[before].move == bad[0]["move"]
            break
        else:
            pytest.fail("no move that gives away a point came up")
        # a new game during a game asks in the page (no browser dialog), and keeps the game when told to
        page.wait_for_selector("body[data-ready=true], body[data-over=true]")
        if not game.game.is_over:
            seed = game.seed
            assert page.get_attribute("#newgame-box", "open") is None  # folded away while the game is played
            page.click("#newgame-box summary")
            page.click("#new")
            page.wait_for_selector("#confirm:not(.hidden)")
            page.click("#confirm-no")
            assert game.seed == seed and page.is_hidden("#confirm")
            page.keyboard.press("n")  # the key asks too
            page.wait_for_selector("#confirm:not(.hidden)")
            page.click("#confirm-yes")
            wait_until(page, lambda: game.seed != seed)


def test_in_chromium_moves_slide_and_banners_name_captures_and_rosettes(server):
    base, game = server
    with chromium_page(base, "pause=200") as page:
        banners = set()
        for _ in range(80):
            page.wait_for_selector("body[data-ready=true], body[data-over=true]", timeout=60_000)
            if game.game.is_over:
                break
            before = len(game.events)
            page.locator("#moves button.move").last.click()
            while page.get_attribute("body", "data-ready") != "true" and not game.game.is_over:
                banners.add(page.get_attribute("#announce", "class") or "")
                page.wait_for_timeout(15)
            assert len(game.events) > before
        assert int(page.get_attribute("body", "data-animations") or 0) > 0  # pieces slid
        kinds = {
            "capture" if e["capture"] else "rosette" if e["extra_roll"] else "pass" if e["from"] is None else ""
            for e in game.events
        }
        assert (banners & kinds) - {""}, (banners, kinds)  # the game's captures, rosettes or passes were announced


def test_in_chromium_two_people_play_a_whole_game_on_one_screen(server, tmp_path):
    """Both sides clicked in turn; hints off until asked for; the end banner names the winner and both accuracies."""
    base, game = server
    with chromium_page(base) as page:
        page.wait_for_selector("body[data-ready=true]")
        page.select_option("#opponent", "friend")
        assert "two people on this screen" in page.text_content("#opponent-about")
        page.click("#new")
        wait_until(page, lambda: game.session.two_players and page.get_attribute("body", "data-ready") == "true")
        assert page.text_content("#title") == "Ur: two players on this screen"
        assert page.is_disabled("#hint-button")  # hints off by default between two people
        page.check("#two-hints")
        assert page.is_enabled("#hint-button")
        page.uncheck("#two-hints")
        sides = set()
        for _ in range(400):
            page.wait_for_selector("body[data-ready=true], body[data-over=true]")
            if game.game.is_over:
                break
            side = game.game.turn
            sides.add(side)
            assert page.text_content("#status").startswith(f"{side.capitalize()} rolled")
            before = len(game.events)
            page.locator("#board .tile.movable, .tray .piece.movable").first.click()
            wait_until(page, lambda before=before: len(game.events) > before)
        assert game.game.is_over and sides == {"light", "dark"}
        assert game.record().players == {"light": "human (light)", "dark": "human (dark)"}
        page.wait_for_selector("#result:not(.hidden)")
        winner = game.game.winner
        assert page.text_content("#result-title").startswith(f"{winner.capitalize()} won")
        detail = page.text_content("#result-detail")
        assert "Light: " in detail and "Dark: " in detail
        page.click("#show-review")
        page.frame_locator("#review-frame").locator("#grades").wait_for()


def test_clients_that_send_a_header_line_now_and_then_hold_no_slot_for_long(private_cache):
    """Slots full of connections that trickle headers (never idle long enough to be closed) free themselves."""
    import socket

    game = WebGame(RULES, make_agent("random", seed=1), None, "light", 7)
    httpd = game_server(create_app(game, TOKEN), connections=4, idle=5.0, request_seconds=1.0)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_port}"
    stop = threading.Event()
    socks = [socket.create_connection(("127.0.0.1", httpd.server_port)) for _ in range(4)]

    def trickle(sock):
        try:
            sock.sendall(b"GET /api/state HTTP/1.1\\r\\n")
            while not stop.is_set():
                sock.sendall(b"X-Slow: 1\\r\\n")  # a header line every 0.3 s: never idle for a second
                time.sleep(0.3)
        except OSError:
            pass  # closed by the server: the point

    trickling = [threading.Thread(target=trickle, args=(sock,), daemon=True) for sock in socks]
    for thread in trickling:
        thread.start()
    try:
        time.sleep(1.8)  # past the request deadline: every trickling connection was cut
        status, _ = fetch(f"{base}/api/state?token={TOKEN}")
        assert status == 200
        status, text = fetch(f"{base}/api/new?token={TOKEN}", {"rules": "finkel", "pieces": 2})
        assert status == 200 and json.loads(text)["pieces"] == 2  # a request with a body still reads whole
    finally:
        stop.set()
        for sock in socks:
            sock.close()
        httpd.shutdown()


def test_the_page_of_a_two_player_game_reloads(server):
    from urgym.evaluation.play.web import FRIEND

    base, game = server
    status, _ = fetch(f"{base}/api/new?token={TOKEN}", {"opponent": FRIEND})
    assert status == 200 and game.agent is None
    status, page = fetch(f"{base}/?token={TOKEN}")  # a reload: it was a 500 until another opponent was chosen
    assert status == 200 and "<html" in page.lower()
    fetch(f"{base}/api/new?token={TOKEN}", {"opponent": "random"})
