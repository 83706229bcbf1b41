"""Game review: values, regrets, categories and summaries agree with the table; every output is written."""

import csv
import dataclasses
import json
import re
import shutil

import pytest
from urgym.agents import make_agent
from urgym.commands.review import main as review_main
from urgym.evaluation.review.grades import (
    CATEGORIES,
    ERRORS,
    MIN_RATED_DECISIONS,
    RATINGS,
    accuracy_of,
    category_of,
    rating_of,
    review_game,
)
from urgym.evaluation.review.luck import analyse_game

from urgym import Game
from urgym.notation import move_text
from urgym.records import GameRecord


def play(table, light, dark, seed, game_index=0):
    agents = {"light": make_agent(light, seed=seed), "dark": make_agent(dark, seed=seed + 1)}
    game = Game(table.rules, seed, game_index)
    while not game.is_over:
        game.play(agents[game.turn].select_move(game.position, game.roll))
    return GameRecord.from_game(game, {"light": light, "dark": dark})


@pytest.fixture(scope="module")
def reviewed(finkel3_table):
    record = play(finkel3_table, "random", "greedy", 4)
    return record, review_game(record, finkel3_table)


def test_categories_and_accuracy_follow_their_documented_limits():
    assert category_of(0.0, 0) == "pass" and category_of(0.3, 1) == "forced"
    assert [category_of(r, 2) for r in (0.0, 1e-13, 0.005, 0.01, 0.02, 0.05, 0.0500001, 0.4)] == [
        "best",
        "best",
        "good",
        "good",
        "inaccuracy",
        "mistake",
        "blunder",
        "blunder",
    ]
    # a best move is great when every other move would have been a mistake, brilliant when each a blunder
    assert [category_of(0.0, 3, margin) for margin in (0.0, 0.0249, 0.025, 0.05, 0.0500001, 0.3)] == [
        "best",
        "best",
        "great",
        "great",
        "brilliant",
        "brilliant",
    ]
    assert category_of(0.01, 3, 0.3) == "good"  # the margin grades only the best move
    assert category_of(0.0, 3, 0.3, obvious=True) == "best"  # a best move the simple player finds is no feat
    assert accuracy_of(0.0) == 100.0
    assert accuracy_of(0.25) == pytest.approx(50.0)  # 25 points given away over a game halve it
    assert accuracy_of(0.1) == pytest.approx(80.0) and accuracy_of(0.5) == 0.0 and accuracy_of(0.9) == 0.0
    # each rating holds up to its limit (points given away per game), the next one just above it
    names = [name for name, _ in RATINGS]
    assert names[0] == "Perfect" and names[-1] == "Beginner" and rating_of(0.0) == "Perfect"
    for (name, limit), following in zip(RATINGS, names[1:], strict=False):
        assert rating_of(limit / 100) == name and rating_of(limit / 100 + 1e-9) == following
    assert rating_of(1.0) == "Beginner"


GREEDY = make_agent("greedy")


def test_every_move_is_judged_against_the_table(finkel3_table, reviewed):
    record, review = reviewed
    positions = record.positions()
    assert len(review.moves) == len(record.steps)
    for move, step, position in zip(review.moves, record.steps, positions, strict=False):
        values = finkel3_table.move_values(position, step.roll)
        assert move.values == {move_text(position, step.roll, m): v for m, v in values.items()}
        assert move.notation == move_text(position, step.roll, step.move)
        if values:
            best = max(values.values())
            assert move.values[move.best] == best
            assert move.regret == pytest.approx(best - values[step.move], abs=1e-15)
        ranked = sorted(values.values(), reverse=True)
        greedy = GREEDY.select_move(position, step.roll) if len(values) > 1 else None
        obvious = greedy is not None and values[greedy] == ranked[0]
        expected = category_of(move.regret, len(values), ranked[0] - ranked[1] if len(ranked) > 1 else 0.0, obvious)
        assert move.category == expected
        light_after = finkel3_table.win_probability(positions[move.step + 1], "light")
        assert move.light_chance == pytest.approx(light_after, abs=1e-15)
    assert any(m.category in ("mistake", "blunder") for m in review.moves)  # random play errs


def test_player_summaries_and_key_moves(finkel3_table, reviewed):
    record, review = reviewed
    analysis = analyse_game(record, finkel3_table)
    for player in review.players:
        own = [m for m in review.moves if m.side == player.side]
        assert sum(player.counts.values()) == len(own)
        assert set(player.counts) == set(CATEGORIES)
        assert player.luck == pytest.approx(analysis.luck(player.side))
        assert player.luck_adjusted == pytest.approx(analysis.luck_adjusted(player.side))
        choices = [m for m in own if len(m.values) > 1]
        assert player.error == pytest.approx(sum(m.regret for m in own))  # forced moves give nothing away
        assert player.mean_regret == pytest.approx(sum(m.regret for m in choices) / len(choices))
        assert player.rolls == len(own) and player.standard == 45  # 2 x 3 pieces x 15 tiles / a mean roll of 2
        per_game = player.error * 45 / len(own)
        assert player.game_error == pytest.approx(per_game)
        assert player.accuracy == pytest.approx(max(0.0, 100 - 2 * 100 * per_game))
        assert player.rating == rating_of(per_game)
        errors = [m for m in own if m.category in ERRORS]
        assert sum(player.reasons.values()) == len(errors)
        assert player.reasons.get("other", 0) == sum(not m.reason for m in errors)
    assert review.players[0].accuracy < review.players[1].accuracy  # random (light) plays worse than greedy
    regrets = sorted((m.regret for m in review.moves), reverse=True)
    assert [review.moves[s].regret for s in review.key_errors] == regrets[: len(review.key_errors)]
    lucks = sorted((abs(m.luck) for m in review.moves), reverse=True)
    assert [abs(review.moves[s].luck) for s in review.key_luck] == lucks[:3]


def test_perfect_play_is_all_best(finkel3_table):
    review = review_game(play(finkel3_table, "perfect", "perfect", 2), finkel3_table)
    assert {m.category for m in review.moves} <= {"brilliant", "great", "best", "forced", "pass"}
    assert [p.accuracy for p in review.players] == [100.0, 100.0]


def test_outputs(finkel3_table, reviewed, tmp_path):
    record, review = reviewed
    data = json.loads(review.save_json(tmp_path / "r.json").read_text())
    assert len(data["moves"]) == len(record.steps) and data["winner"] == record.winner
    assert GameRecord.from_dict(data["record"]) == record
    rows = list(csv.DictReader(review.save_csv(tmp_path / "r.csv").open()))
    assert [r["move"] for r in rows] == [m.notation for m in review.moves]
    assert review.save_plot(tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = review.save_html(tmp_path / "r.html").read_text()
    fetched = page.replace('"http://www.w3.org/2000/svg"', "")  # the SVG namespace names, it never loads
    assert "http://" not in fetched and "https://" not in fetched and "<script src" not in page  # self-contained
    text = review.format_text()
    assert "largest errors" in text and record.players["light"] in text
    rows = text.splitlines()[1 : 1 + len(review.moves)]  # light's chance on every row, whoever rolled
    assert [float(re.search(r"(\d+\.\d)%", row).group(1)) for row in rows] == pytest.approx(
        [round(100 * m.light_chance, 1) for m in review.moves], abs=0.051
    )


def test_the_summary_counts_each_players_errors_instead_of_listing_them(reviewed):
    _, review = reviewed
    full, summary = review.format_text(), review.format_text(moves=False)
    for p in review.players:
        errors = sum(1 for m in review.moves if m.side == p.side and m.category in ERRORS)
        if errors:
            assert f"{p.side}'s errors, largest first:" in full
            assert f"{p.side}: {errors} errors" in summary and f"{p.side}'s errors" not in summary
    assert summary.count("played ") == 0 < full.count("played ") or not any(m.category in ERRORS for m in review.moves)


def test_accuracy_means_the_same_over_a_short_game_and_a_long_one(finkel3_table):
    """The same play twice over (the errors and the rolls doubled) rates the same; the errors alone doubled do not."""
    record = play(finkel3_table, "heuristic", "random", 5)
    one = review_game(record, finkel3_table).players[0]
    twice = dataclasses.replace(one, error=2 * one.error, rolls=2 * one.rolls)
    assert twice.accuracy == pytest.approx(one.accuracy) and twice.rating == one.rating
    assert one.game_error > 0
    worse = dataclasses.replace(one, error=2 * one.error)
    assert worse.accuracy < one.accuracy or one.accuracy == 0.0
    # a long game is not several games' worth of errors: its error counts per standard game
    long = dataclasses.replace(one, error=0.6, rolls=int(4 * one.standard))
    assert long.game_error == pytest.approx(0.15) and long.accuracy == pytest.approx(70.0)


def test_standard_game_lengths():
    from urgym.evaluation.review.grades import standard_rolls

    from urgym import get_rules

    lengths = {name: standard_rolls(get_rules(name)) for name in ("finkel", "blitz", "masters", "murray")}
    # 2 x pieces x (path + 1) / mean roll: four binary dice average 2, and so do masters' (1 to 4, no 0)
    assert lengths == pytest.approx({"finkel": 105, "blitz": 85, "masters": 119, "murray": 196})


def test_too_few_decisions_give_no_accuracy_or_rating(finkel3_table):
    record = play(finkel3_table, "perfect", "random", 0)
    short = dataclasses.replace(record, steps=record.steps[:6])
    review = review_game(short, finkel3_table)
    for p in review.players:
        assert p.decisions < MIN_RATED_DECISIONS and not p.rated and p.to_dict()["rated"] is False
    text = review.format_text()
    assert "too few" in text and "Perfect" not in text  # not "100% Perfect" for a game quit early
    whole = review_game(record, finkel3_table)
    rated = [p for p in whole.players if p.decisions >= MIN_RATED_DECISIONS]
    assert all(p.rated for p in rated) and rated


def test_review_command(finkel3_table, reviewed, tmp_path, capsys):
    record, review = reviewed
    record.save(tmp_path / "game.rgn")
    code = review_main(
        [
            str(tmp_path / "game.rgn"),
            "--summary",
            "--json",
            str(tmp_path / "out.json"),
            "--html",
            str(tmp_path / "out.html"),
            "--no-progress",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and "accuracy" in out and "wrote" in out
    assert json.loads((tmp_path / "out.json").read_text())["players"]["light"]["accuracy"] == pytest.approx(
        review.players[0].accuracy
    )
    (tmp_path / "bad.json").write_text(
        json.dumps({**record.to_dict(), "steps": [{"side": "dark", "roll": 1, "move": 0}]})
    )
    with pytest.raises(SystemExit) as exit_info:
        review_main([str(tmp_path / "bad.json")])
    assert exit_info.value.code == 2
    assert "step 0" in capsys.readouterr().err


def _browser():
    """Chromium's executable, or None (the browser test then skips, saying why)."""
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no Chromium on this machine (apt-get install -y chromium); the HTML review page is untested here")


def test_html_page_in_a_headless_browser(finkel3_table, reviewed, tmp_path):
    """The page shows the board of each position, steps with buttons and arrow keys, and draws the graph."""
    executable = _browser()
    from playwright.sync_api import sync_playwright

    record, review = reviewed
    path = review.save_html(tmp_path / "review.html")
    n = len(review.moves)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        page = browser.new_page()
        errors, requests = [], []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: requests.append(r.url) if not r.url.startswith("file:") else None)
        page.goto(path.as_uri())

        def board():
            return {
                side: sorted(
                    page.eval_on_selector_all(
                        f"#board .piece.{side}", "els => els.map(e => e.parentElement.dataset.tile)"
                    )
                )
                for side in ("light", "dark")
            }

        def expect_position(k):
            assert page.get_attribute("body", "data-step") == str(k)
            position = review.positions[k]
            assert board() == {s: sorted(position.tiles(s)) for s in ("light", "dark")}

        expect_position(0)
        for k in range(1, 25):
            page.keyboard.press("ArrowRight")
            expect_position(k)
        page.keyboard.press("ArrowLeft")
        expect_position(23)
        page.click("#next")
        page.click("#next")
        expect_position(25)
        page.keyboard.press("End")
        expect_position(n)
        assert record.winner in page.text_content("#status")
        page.click("#first")
        expect_position(0)
        points = page.get_attribute("#curve", "points").split()
        assert len(points) == n + 1
        assert page.locator("#graph circle.mark").count() == sum(
            m.category in ("mistake", "blunder") for m in review.moves
        )
        page.click(f"#row{n // 2} td")
        expect_position(n // 2)
        assert page.locator("#moves tr.current").count() == 1
        # numbering: position k is before roll k + 1, the row numbered k + 1 (as the terminal numbers it)
        assert page.text_content("#counter") == f"roll {n // 2 + 1} of {n}"
        assert page.text_content(f"#row{n // 2} td") == str(n // 2 + 1)
        # the graph's axes are text: percentages and roll numbers
        assert page.eval_on_selector_all("#graph text.ylabel", "els => els.map(e => e.textContent)") == [
            "0%",
            "25%",
            "50%",
            "75%",
            "100%",
        ]
        assert page.eval_on_selector_all("#graph text.xlabel", "els => els.map(e => e.textContent)")[0] == "0"
        # every grade counted for each player
        for player in review.players:
            for grade, count in player.counts.items():
                if grade in ("forced", "pass"):
                    continue
                cell = page.text_content(f'#grades td[data-grade="{grade}"][data-side="{player.side}"]')
                assert cell == str(count), (player.side, grade)
        # previous/next error: every inaccuracy, mistake and blunder in turn, then it stays on the last
        error_steps = [m.step for m in review.moves if m.category in ("inaccuracy", "mistake", "blunder")]
        page.click("#first")
        for step in error_steps[:4]:
            page.click("#next-error")
            expect_position(step)
            move = review.moves[step]
            assert move.reason in page.text_content("#status") and move.category in page.text_content("#status")
        if len(error_steps) > 1:
            page.click("#prev-error")
            expect_position(error_steps[min(4, len(error_steps)) - 2])
        assert "Regret" in page.text_content("#legend") and "Accuracy" in page.text_content("#legend")
        # key moves are listed and clickable
        keys = page.locator("#keys button.key")
        assert keys.count() == len(review.key_errors) + len(review.key_luck)
        keys.first.click()
        expect_position(review.key_errors[0])
        # the best move is drawn on the board where another move was played
        error = review.moves[review.key_errors[0]]
        on_board = set(record.rules.board)
        best_tiles = [t.upper() for t in re.findall(r"[a-z]\d+", error.best)]
        for cls, tile in (("best-from", best_tiles[0]), ("best-to", best_tiles[1])):
            drawn = page.eval_on_selector_all(f"#board .tile.{cls}", "els => els.map(e => e.dataset.tile)")
            assert drawn == ([tile] if tile in on_board else []), cls  # entering or bearing off: off the board

        # every chance from one side's view (light's: neither player is named human), switchable to dark's
        def chances():
            return [
                float(x) for x in re.findall(r"(\d+\.\d)%", " ".join(page.locator("#status div").all_text_contents()))
            ]

        status = page.locator("#status div").all_text_contents()
        mover = "these" if error.side == "light" else "dark's"
        assert status[0].startswith("Light's winning chance") and status[2].startswith(
            f"Light's winning chance after each of {mover} moves"
        )
        as_light = chances()
        light_before = review.start_chance if error.step == 0 else review.moves[error.step - 1].light_chance
        assert as_light[0] == pytest.approx(100 * light_before, abs=0.051)
        page.select_option("#view", "dark")
        assert page.get_attribute("body", "data-view") == "dark"
        assert page.locator("#status div").first.text_content().startswith("Dark's winning chance")
        assert chances() == pytest.approx([100 - c for c in as_light], abs=0.11)
        assert page.text_content("#moves th:nth-child(6)") == "dark's chance after"
        page.select_option("#view", "light")
        # a phone-sized window: nothing wider than the screen but the tables, which scroll in their own boxes
        page.set_viewport_size({"width": 390, "height": 844})
        widest = page.evaluate("""() => [...document.querySelectorAll('body *')]
            .filter(e => !e.closest('.scroll table'))
            .map(e => [e.getBoundingClientRect().right, e.tagName + '#' + e.id]).sort((a, b) => b[0] - a[0])[0]""")
        assert widest[0] <= 390, widest
        # a real phone lays a page without a viewport setting out 980 px wide and shrinks it: this one fits
        phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, device_scale_factor=3)
        phone.on("pageerror", lambda e: errors.append(str(e)))
        phone.goto(path.as_uri())
        assert phone.evaluate("() => window.innerWidth") == 390
        browser.close()
    assert errors == [] and requests == []


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--plot", "graph.gif", "give a file ending in .png, .pdf, .svg"),
        ("--html", ".", "it is a directory"),
        ("--json", "/proc/out.json", "is not a writable directory"),
    ],
)
def test_review_refuses_bad_output_paths_before_reviewing(
    finkel3_table, reviewed, tmp_path, capsys, option, value, message
):
    record, _ = reviewed
    path = record.save(tmp_path / "game.json")
    with pytest.raises(SystemExit) as info:
        review_main([str(path), option, value])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


HOSTILE_NAMES = [
    "<img src=x onerror=alert(1)>",
    "</script><script>alert(2)</script>",
    "<!--<script>",
    "__DATA__ and __TITLE__",
    "$\\frac{1}{0}$ costs $5",
    '=HYPERLINK("http://evil")',
    "\"'><svg onload=alert(3)>",
]


def _hostile_record(record, light, dark):
    data = record.to_dict()
    data["players"] = {"light": light, "dark": dark}
    return GameRecord.from_dict(data)


def test_hostile_names_reach_the_page_as_text_in_a_browser(finkel3_table, reviewed, tmp_path):
    """Names from a stranger's record never run script, never blank the page and show literally."""
    executable = _browser()
    from playwright.sync_api import sync_playwright

    record, _ = reviewed
    pages = []
    for i in range(0, len(HOSTILE_NAMES), 2):
        light, dark = HOSTILE_NAMES[i], HOSTILE_NAMES[(i + 1) % len(HOSTILE_NAMES)]
        review = review_game(_hostile_record(record, light, dark), finkel3_table)
        pages.append((review.save_html(tmp_path / f"hostile{i}.html"), light, dark, len(review.moves)))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        page = browser.new_page()
        dialogs, errors = [], []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("pageerror", lambda e: errors.append(str(e)))
        for path, light, dark, moves in pages:
            page.goto(path.as_uri())
            summary = page.text_content("#summary")
            assert light in summary and dark in summary  # literally, as text
            assert page.title() == f"{light} vs {dark} - finkel game review"
            assert page.locator("#moves tr[data-step]").count() == moves  # the page was built, not blanked
            assert page.locator("img, svg[onload], #summary script").count() == 0
        browser.close()
    assert dialogs == [] and errors == []


def test_hostile_names_in_the_page_source_cannot_end_the_data(finkel3_table, reviewed, tmp_path):
    record, _ = reviewed
    review = review_game(_hostile_record(record, HOSTILE_NAMES[1], HOSTILE_NAMES[3]), finkel3_table)
    page = review.save_html(tmp_path / "r.html").read_text()
    data = page.split('<script id="review-data" type="application/json">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data and ">" not in data  # no string can end the element or open a comment
    assert json.loads(data)["names"] == {"light": HOSTILE_NAMES[1], "dark": HOSTILE_NAMES[3]}
    title = page.split("<title>", 1)[1].split("</title>", 1)[0]
    assert html_unescape(title) == f"{HOSTILE_NAMES[1]} vs {HOSTILE_NAMES[3]} - finkel game review"


def html_unescape(text):
    import html

    return html.unescape(text)


def test_hostile_names_in_csv_and_plots(finkel3_table, reviewed, tmp_path):
    import matplotlib

    record, _ = reviewed
    review = review_game(_hostile_record(record, HOSTILE_NAMES[5], HOSTILE_NAMES[4]), finkel3_table)
    rows = list(csv.reader(review.save_csv(tmp_path / "r.csv").open()))
    header = rows[0]
    players = [row[header.index("player")] for row in rows[1:]]
    assert {"'" + HOSTILE_NAMES[5], HOSTILE_NAMES[4]} == set(players)  # a formula is neutralised, text is not
    assert all(not cell.startswith(("=", "+", "@")) for row in rows for cell in row)
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # text stays text in the SVG, so it can be read
        svg = review.save_plot(tmp_path / "r.svg").read_text()
    assert "$\\frac{1}{0}$ costs $5" in html_unescape(svg)  # drawn literally, not as mathtext


@pytest.mark.parametrize(
    ("light", "dark", "light_home", "roll", "played", "best", "reason"),
    [
        ([5], [7], 2, 2, 0, 5, "missed a capture"),
        ([14], [], 2, 1, 0, 14, "missed bearing a piece off"),
        ([2], [], 2, 4, 2, 0, "missed a rosette and its extra roll"),
        ([8, 1], [], 1, 2, 8, 1, "gave up the central rosette"),
        ([2], [4], 2, 3, 2, 0, "left a piece open to capture"),
        ([2], [], 2, 3, 2, 0, ""),  # no dark piece in reach: nothing simple to say
    ],
)
def test_mistake_reasons_are_read_from_the_position(light, dark, light_home, roll, played, best, reason):
    from urgym.evaluation.review.grades import mistake_reason

    from urgym import Position, get_rules

    position = Position.from_pieces(
        get_rules("finkel", 3), light=light, dark=dark, light_home=light_home, dark_home=3 - len(dark)
    )
    assert mistake_reason(position, roll, played, best) == reason
