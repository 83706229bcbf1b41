"""Screenshots of the play and review pages for the README (desktop and phone width), in headless Chromium.

Run: ``python docs/screenshots.py`` (needs the web extra, playwright and Chromium: ``apt-get install -y chromium``).
It serves a finkel game with 3 pieces against ``greedy`` with a fixed seed, clicks the first movable piece (or piece
at home) a few times, takes a hint, opens the review at the game's largest error and the rules page, and saves
``docs/play-desktop.png``, ``docs/play-phone.png``, ``docs/review-desktop.png``, ``docs/review-phone.png`` and
``docs/howto-desktop.png``; then plays the game to its end (the first movable piece each time) and saves
``docs/play-end-desktop.png``, the end banner.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright
from urgym.agents import make_agent
from urgym.evaluation.play.web import WebGame, create_app
from urgym.solver.cache import load_or_solve
from werkzeug.serving import make_server

from urgym import get_rules

HERE = Path(__file__).parent
TOKEN = "screenshots"


def main() -> None:
    rules = get_rules("finkel", 3)
    game = WebGame(rules, make_agent("greedy", seed=0), load_or_solve(rules, progress=False), "light", 11)
    httpd = make_server("127.0.0.1", 0, create_app(game, TOKEN), threaded=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_port}/?token={TOKEN}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto(url + "&pause=0")
        for _ in range(12):
            page.wait_for_selector("body[data-ready=true]")
            page.locator(".movable").first.click()
            page.wait_for_timeout(150)
        page.wait_for_selector("body[data-ready=true]")
        page.click("#hint-button")
        page.wait_for_timeout(300)
        page.screenshot(path=str(HERE / "play-desktop.png"))
        page.set_viewport_size({"width": 390, "height": 844})
        page.screenshot(path=str(HERE / "play-phone.png"))
        page.set_viewport_size({"width": 1280, "height": 1000})
        while not game.game.is_over:
            page.wait_for_selector("body[data-ready=true], body[data-over=true]")
            if game.game.is_over:
                break
            page.locator(".movable").first.click()
            page.wait_for_timeout(100)
        page.wait_for_selector("#result:not(.hidden)")
        page.screenshot(path=str(HERE / "play-end-desktop.png"))
        review = browser.new_page(viewport={"width": 1000, "height": 900})
        review.goto(url.replace("/?", "/review?"))
        review.locator("#keys button.key").first.click()  # the largest error: played and best move drawn
        review.evaluate("() => window.scrollTo(0, 0)")  # the click scrolled down to the button
        review.screenshot(path=str(HERE / "review-desktop.png"))
        review.set_viewport_size({"width": 390, "height": 844})
        review.screenshot(path=str(HERE / "review-phone.png"))
        rules_page = browser.new_page(viewport={"width": 1000, "height": 1150})
        rules_page.goto(url.replace("/?", "/how-to-play?"))
        rules_page.screenshot(path=str(HERE / "howto-desktop.png"))
        browser.close()
    httpd.shutdown()


if __name__ == "__main__":
    main()
