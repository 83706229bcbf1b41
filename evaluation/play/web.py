"""``ur-play --web``: play an agent in the browser, served from this machine only (the ``web`` extra, Flask).

The server listens on 127.0.0.1 and answers only requests that carry its token (a random string in the URL it
prints, as Jupyter does: ``?token=`` for pages and downloads, the ``X-Urgym-Token`` header for the page's calls)
and name the server itself as their host (so a web page elsewhere cannot reach it by DNS rebinding). The page
(``pages/play.html``) is self-contained: nothing is fetched from the network.

One game at a time, held by :class:`WebGame`, a thin shell over the one
:class:`~urgym.evaluation.play.session.GameSession` the terminal plays too: every request that changes the game
answers with the whole state (:meth:`WebGame.state`), which the page draws, showing the rolls and moves since the
human's last decision one at a time. A new game may change the opponent (one of :data:`LADDER`, or the one named
on the command line), the rule set and the piece count; the page can never name any other agent (an engine or a
file would run code).
"""

from __future__ import annotations

import contextlib
import datetime
import hmac
import io
import json
import re
import secrets
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from urgym.agents import Agent, make_agent
from urgym.agents.models import shipped_models
from urgym.agents.networks.neural import shipped_estimate
from urgym.evaluation.pages import board_data, position_data, render_page
from urgym.evaluation.play.session import Event, GameSession, cached_table, describe_move
from urgym.evaluation.review.grades import GameReview, mistake_reason, review_game
from urgym.solver import SolvedTable
from urgym.solver.budget import check_solvable, estimate_solve

from urgym import RULE_SET_NAMES, SIDES, Game, GameRecord, Position, Rules, get_rules
from urgym.checks import short_repr
from urgym.files import loads_json, require_extra
from urgym.howto import dice_count, dice_text, how_to_play
from urgym.notation import move_text

__all__ = [
    "FORCED_NOTE",
    "FRIEND",
    "LADDER",
    "LEVELS",
    "MAX_BODY",
    "STRENGTH",
    "TOKEN_HEADER",
    "WebGame",
    "create_app",
    "serve",
]

TOKEN_HEADER = "X-Urgym-Token"

LADDER = (
    "random",
    "greedy",
    "heuristic",
    "expectimax:1",
    "expectimax:3",
    "expectimax:5",
    "ppo",
    "expectimax:7",
    "td",
    "td:depth=2",
    "neural",
    "neural:2",
    "perfect",
)
"""The opponents a new game offers, roughly weakest first; :meth:`WebGame.opponents` sorts them by measured strength
where every one was measured (the learned ones only on the rules their models learned)."""

FRIEND = "friend"
"""The opponent that is a second person on the same screen (two people take turns; no agent plays)."""

LEVELS: dict[str, tuple[str, str]] = {
    "random": ("Pebble", "moves at random"),
    "greedy": ("Magpie", "captures when it can, else takes a rosette, else runs its leading piece"),
    "heuristic": ("Scribe", "weighs every move by the paper's gain: safety, rosettes, captures, progress"),
    "expectimax:1": ("Apprentice", "looks at its own move only, judging the board by progress"),
    "expectimax:3": ("Reckoner", "looks three plies ahead through the dice"),
    "expectimax:5": ("Strategist", "looks five plies ahead through the dice"),
    "expectimax:7": ("Sage", "looks seven plies ahead through the dice (slow to answer)"),
    "ppo": ("Gambler", "a network that learned by playing itself (PPO)"),
    "td": ("Veteran", "a network that learned by playing itself (TD learning)"),
    "td:depth=2": ("Elder", "that self-taught network, looking two plies ahead"),
    "neural": ("Oracle", "a network taught by perfect play"),
    "neural:2": ("High priest", "that network, looking two plies ahead"),
    "perfect": ("King of Ur", "plays the solved game: the best move every time"),
    FRIEND: ("A friend", "two people on this screen, taking turns; hints stay off unless you turn them on"),
}
"""A name and a one-line description of each level of the ladder, as the page shows them (the spec beside)."""

LEARNED_RULES = {"ppo": ("finkel", 7), "td": ("finkel", 7), "td:depth=2": ("finkel", 7)}
"""The rule set and piece count each shipped model was trained on (and the only one the page offers it on)."""

STRENGTH: dict[str, dict[str, float]] = json.loads(
    (Path(__file__).with_name("strengths.json")).read_text(encoding="utf-8")
)["strength"]
"""Measured strength of the ladder's agents per rule set (a share, 0-1), shown beside each in the page: read from
``strengths.json`` beside this module, which says how and when it was measured."""


class WebGame:
    """The game the page shows.

    A :class:`~urgym.evaluation.play.session.GameSession` (the human's side, the agent, the events), the opponents a new
    game may choose, and light's winning chance after each event (with the table).
    """

    def __init__(
        self, rules: Rules, agent: Agent, table: SolvedTable | None, side: str = "light", seed: int | None = None
    ) -> None:
        self.rules, self.agent, self.table = rules, agent, table
        self.opponent = _ladder_name(agent.spec)  # as the page names it (LADDER's, the command line's, or FRIEND)
        self._first, self._first_rules = agent, rules  # the command line's opponent stays offered
        self._estimates: dict[Rules, Any] = {}  # the network's estimate per rule set, for hints without a table
        self.lock = threading.Lock()  # one request reads or changes the game at a time
        self._reviewed: tuple[tuple[int, int], GameReview] | None = None
        self.new(side, seed)

    def new(
        self,
        side: str,
        seed: int | None,
        opponent: str | None = None,
        rules: str | None = None,
        pieces: int | None = None,
    ) -> None:
        """Start a new game with the human on ``side`` (``light``, ``dark`` or ``random``).

        Optionally against another ``opponent`` (a spec of :meth:`opponents`) on another rule set (a name of
        :data:`~urgym.RULE_SET_NAMES`) and piece count.

        Raises:
            ValueError: For a side, opponent, rule set or piece count the page may not choose, saying which are
                allowed; the current game is kept.
        """
        if side not in (*SIDES, "random"):
            raise ValueError(f"side must be light, dark or random, got {side!r}")
        if (opponent, rules, pieces) != (None, None, None):
            self._configure(
                opponent or self.opponent,
                self.rules.name if rules is None else rules,
                self.rules.pieces if pieces is None else pieces,
            )
        if seed is None:
            seed = int(np.random.default_rng().integers(2**63))
        if side == "random":
            side = SIDES[int(np.random.default_rng(seed).integers(2))]
        if hasattr(self.agent, "reseed"):
            self.agent.reseed(seed)
        if self.table is None and self.rules not in self._estimates:  # loaded once per rule set
            self._estimates[self.rules] = shipped_estimate(self.rules)
        hints = self.table if self.table is not None else self._estimates[self.rules]
        self.session = GameSession(self.rules, self.agent, side, seed, hints)
        self.events: list[dict[str, Any]] = []
        self.chances = [] if self.table is None else [self.table.win_probability(self.session.game.position, "light")]
        self._show(self.session.advance())

    @property
    def game(self) -> Game:
        """The game being played."""
        return self.session.game

    @property
    def human(self) -> str:
        """The human's side."""
        return self.session.human

    @property
    def seed(self) -> int:
        """The game's dice seed."""
        return self.session.seed

    def move(self, move: Any) -> None:
        """Play the human's ``move`` (a source path position), then the agent's moves up to the human's next turn.

        Raises:
            ValueError: When it is not the human's turn, or ``move`` is not one of the legal moves.
        """
        self._show(self.session.play(move))

    def hint(self) -> dict[str, Any]:
        """Every legal move's winning chance for the human, the best move, and what each other move misses.

        Exact from the solved table, else the rule set's shipped neural network's estimate (``exact`` False, ``source``
        naming it).

        Raises:
            LookupError: When no solved table of the rules is cached and no neural network plays them.
            ValueError: When the game is over or it is not the human's turn.
        """
        hint = self.session.hint()
        position, roll = self.game.position, self.game.roll
        return {
            "values": {move_text(position, roll, m): v for m, v in hint.values.items()},
            "best": move_text(position, roll, hint.best),
            "reasons": {  # what a move misses next to the best, in the review's words ("" when nothing plain)
                move_text(position, roll, m): mistake_reason(position, roll, m, hint.best)
                for m in hint.values
                if m != hint.best
            },
            "before": hint.before,
            "exact": hint.exact,
            "source": hint.source,
        }

    def opponents(self, rules: Rules | None = None) -> list[dict[str, Any]]:
        """The opponents a new game on ``rules`` (default: the current ones) may choose.

        Spec, level name and description, measured strength (None where not measured) and why it cannot play these
        rules (None when it can).
        """
        rules = rules or self.rules
        table = self.table if rules == self.rules else cached_table(rules)
        measured = STRENGTH.get(rules.name, {}) if rules == get_rules(rules.name) else {}
        offered = [
            {
                "spec": spec,
                "name": LEVELS.get(spec, (spec, ""))[0],
                "about": LEVELS.get(spec, ("", "the opponent named on the command line"))[1],
                "strength": measured.get(spec),
                "unavailable": self._unavailable(spec, rules, table),
            }
            for spec in self._offered()
        ]
        agents = [o for o in offered if o["spec"] != FRIEND]
        if all(o["strength"] is not None for o in agents if o["unavailable"] is None):  # else the ladder's order
            agents.sort(key=lambda o: (o["strength"] is None, o["strength"] or 0.0))  # weakest first, as measured
        offered = agents + [o for o in offered if o["spec"] == FRIEND]
        return offered

    def record(self) -> GameRecord:
        """The game so far as a record."""
        return self.session.record()

    def review_html(self) -> str:
        """The review page of the game so far (needs the solved table)."""
        if self.table is None:
            raise LookupError(self.review_status()["reason"])
        return self._review().to_html()

    def _review(self) -> GameReview:
        """The review of the game so far, made once per position reached (the banner and the page share it)."""
        key = (self.seed, len(self.events))
        if self._reviewed is None or self._reviewed[0] != key:
            self._reviewed = (key, review_game(self.record(), self.table))
        return self._reviewed[1]

    def result(self) -> dict[str, Any] | None:
        """The end of the game for the page's banner: the score, and the human's accuracy and rating (with the table).

        None while the game goes on. Accuracy and rating come from the review, and only once the human has made
        :data:`~urgym.evaluation.review.grades.MIN_RATED_DECISIONS` decisions with a choice (fewer say too little).
        """
        if not self.game.is_over:
            return None
        position = self.game.position
        result: dict[str, Any] = {
            "winner": self.game.winner,
            "score": {side: position.scored(side) for side in SIDES},
            "players": {side: {"accuracy": None, "rating": None, "decisions": None} for side in SIDES},
        }
        if self.table is not None:
            for p in self._review().players:
                rated = p.rated
                result["players"][p.side] = {
                    "accuracy": p.accuracy if rated else None,
                    "rating": p.rating if rated else None,
                    "decisions": p.decisions,
                }
        result.update(result["players"][self.human])  # the person's own (against an agent)
        return result

    def review_status(self) -> dict[str, Any]:
        """Whether the page can review this game; if not, why, and the command that makes it possible."""
        if self.table is not None:
            return {"available": True, "reason": None}
        rules = self.rules
        try:
            estimate = estimate_solve(rules)
            check_solvable(rules, estimate)
        except ValueError as err:
            return {"available": False, "reason": f"no solved table can be made of {rules.describe()}: {err}"}
        return {
            "available": False,
            "reason": f"the review needs the solved table of {rules.name} with {rules.pieces} pieces, not cached "
            f"yet: solve --rules {rules.name} --pieces {rules.pieces} makes it ({estimate.describe()})",
        }

    def state(self) -> dict[str, Any]:
        """Everything the page draws.

        The position, the roll and its legal moves (when the human is to move), what happened since the last move,
        light's winning chance after each move (with the table), and the end.
        """
        game, position = self.game, self.game.position
        deciding = not game.is_over and game.turn == self.human
        moves = []
        if deciding:
            for m in game.legal_moves:
                source, target = _move_tiles(position, game.roll, m)
                moves.append(
                    {
                        "move": m,
                        "notation": move_text(position, game.roll, m),
                        "from": source,
                        "to": target,
                        "text": describe_move(position, game.roll, m),
                    }
                )
        rules = self.rules
        return {
            "position": position_data(position),
            "human": self.human,
            "agent": None if self.agent is None else self.agent.spec,
            "two_players": self.agent is None,
            "roll": game.roll if deciding else None,
            "moves": moves,
            "events": self.events,
            "chances": self.chances,
            "over": game.is_over,
            "winner": game.winner,
            "seed": self.seed,
            "hints": self.session.hint_source() is not None,
            "rules": rules.name,
            "pieces": rules.pieces,
            "describe": rules.describe(),
            "board": board_view(rules),
            "opponent": self.opponent,
            "opponents": self.opponents(),
            "rule_sets": RULE_SET_NAMES,
            "default_pieces": {name: get_rules(name).pieces for name in RULE_SET_NAMES},
            "result": self.result(),
            "review": self.review_status(),
        }

    # --- internals ---------------------------------------------------------------------------------------------
    def _show(self, events: list[Event]) -> None:
        """Keep the session's new events as the page draws them.

        Each with the position after it and the tiles a move left and reached, and light's winning chance after it (with
        the table): kept as the game goes, not replayed from the record at every request.
        """
        for event in events:
            source = target = None
            moved = None
            if event.move is not None:
                source, target = _move_tiles(event.before, event.roll, event.move)
                moved = event.before.move_result(event.roll, event.move)
            self.events.append(
                {
                    "side": event.side,
                    "roll": event.roll,
                    "notation": event.notation,
                    "text": event.text + (FORCED_NOTE if event.forced else ""),
                    "from": source,
                    "to": target,
                    "forced": event.forced,
                    "capture": bool(moved and moved.captured),
                    "rosette": bool(moved and moved.landed_on_rosette),
                    "extra_roll": bool(moved and moved.extra_roll),
                    "after": position_data(event.after),
                }
            )
            if self.table is not None:
                self.chances.append(self.table.win_probability(event.after, "light"))

    def _offered(self) -> list[str]:
        first = _ladder_name(self._first.spec)
        return list(LADDER) + ([first] if first not in LADDER else []) + [FRIEND]

    @staticmethod
    def _unavailable(spec: str, rules: Rules, table: SolvedTable | None) -> str | None:
        """Why ``spec`` cannot play ``rules`` from the page, None when it can."""
        if spec in LEARNED_RULES and (rules.name, rules.pieces) != LEARNED_RULES[spec]:
            name, pieces = LEARNED_RULES[spec]
            return f"its model learned {name} with {pieces} pieces only"
        if spec.startswith("neural") and (rules.name, rules.pieces) not in shipped_models():
            learned = ", ".join(f"{name} with {pieces}" for name, pieces in shipped_models())
            return f"its networks learned {learned or 'no rules'} pieces only"
        if spec == "perfect" and table is None:
            return f"no solved table of these rules is cached (solve --rules {rules.name} --pieces {rules.pieces})"
        return None

    def _configure(self, opponent: str, name: Any, pieces: Any) -> None:
        """Check a new game's opponent, rule set and piece count together, then switch to them.

        Or raise and keep the current ones.
        """
        if name not in RULE_SET_NAMES:
            raise ValueError(f"unknown rule set {short_repr(name)}; the page offers {', '.join(RULE_SET_NAMES)}")
        if isinstance(pieces, bool) or not isinstance(pieces, int) or not 1 <= pieces <= 7:
            raise ValueError(f"pieces must be a whole number from 1 to 7, got {short_repr(pieces)}")
        if opponent not in self._offered():
            raise ValueError(f"unknown opponent {short_repr(opponent)}; the page offers {', '.join(self._offered())}")
        rules = get_rules(name, pieces)
        table = self.table if rules == self.rules else cached_table(rules)
        why = self._unavailable(opponent, rules, table)
        if why:
            raise ValueError(f"{opponent} cannot play {rules.describe()}: {why}")
        if opponent == FRIEND:
            agent = None  # two people on this screen
        elif opponent == _ladder_name(self._first.spec) and rules == self._first_rules:
            agent = self._first
        else:
            agent = make_agent(opponent, table=table) if opponent == "perfect" else make_agent(opponent)
        self.rules, self.table, self.agent, self.opponent = rules, table, agent, opponent


def howto_data(rules: Rules) -> dict[str, Any]:
    """What the "how to play" page draws: the rule set's sections in words, its board, paths and dice."""
    chances = [[roll, p] for roll, p in enumerate(rules.roll_probabilities) if p > 0]
    return {
        "rules": rules.name,
        "describe": rules.describe(),
        "sections": how_to_play(rules),
        "board": board_view(rules),
        "chances": chances,
    }


def board_view(rules: Rules) -> dict[str, Any]:
    """The board as the play pages draw it: tiles, both paths (for the arrows) and how many dice to draw."""
    return {
        **board_data(rules),
        "dice": dice_count(rules),
        "legend": dice_text(rules),
        "paths": {"light": rules.path, "dark": rules.dark_path},
    }


def _move_tiles(position: Position, roll: int, move: int) -> tuple[str, str]:
    """The tile a move leaves (``home`` when it enters a piece) and the tile it reaches (``off`` when it scores)."""
    path = position.rules.path if position.turn == "light" else position.rules.dark_path
    target = move + roll
    return ("home" if move == 0 else path[move - 1]), ("off" if target > len(path) else path[target - 1])


def _ladder_name(spec: str) -> str:
    """The ladder's short name of an agent's spec.

    ``expectimax:3`` for ``expectimax:depth=3``, ``neural:2`` for ``neural:depth=2``: the agents whose first parameter
    is the depth.
    """
    for name in ("expectimax", "neural"):
        if spec.startswith(f"{name}:depth="):
            return spec.replace(":depth=", ":")
    return spec


FORCED_NOTE = " (your only legal move, played for you)"
"""Added to the log line of a move the page played for the human."""

MAX_BODY = 16 * 1024
"""Largest request body the server reads (its requests are a few bytes: ``{"move": 3}``)."""


def create_app(game: WebGame, token: str, port_of: Any = None):
    """The Flask application of ``game``, guarded by ``token`` (see the module docstring).

    ``port_of`` returns the server's port (known once it listens), for the check of the ``Host`` header.
    """
    flask = require_extra("flask", "web", "ur-play --web")
    app = flask.Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY  # a larger body is answered 413 before it is read
    request, jsonify, Response = flask.request, flask.jsonify, flask.Response
    data = {"rules": game.rules.describe(), "pieces": game.rules.pieces, **board_data(game.rules)}

    @app.before_request
    def guard():
        if request.path == "/favicon.ico":  # browsers ask for it without the token; there is none to give
            return Response(status=204)
        given = request.args.get("token") or request.headers.get(TOKEN_HEADER) or ""
        if not hmac.compare_digest(given.encode(), token.encode()):
            return Response(
                "forbidden: this server answers only its own page (open the URL it printed, with its token)\n",
                status=403,
                mimetype="text/plain",
            )
        allowed = {"127.0.0.1", "localhost"}
        host = request.host.rsplit(":", 1)[0] if ":" in request.host else request.host
        if host not in allowed:
            return Response(f"forbidden: host {request.host!r}\n", status=403, mimetype="text/plain")
        return None

    @app.after_request
    def headers(response):
        response.headers["Cache-Control"] = "no-store"
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"  # the token never leaves in a Referer
        response.headers["Content-Security-Policy"] = (
            "default-src 'none'; script-src 'unsafe-inline'; style-src "
            "'unsafe-inline'; connect-src 'self'; img-src 'self' data:; "
            "frame-src 'self'; form-action 'none'; frame-ancestors 'self'"
        )
        return response

    @app.get("/")
    def page():
        with game.lock:  # a two-player game has no agent: the page is titled after its opponent as offered
            title = f"Ur: play {game.opponent} ({game.rules.name})"
        return Response(render_page("play", title, data), mimetype="text/html")

    @app.get("/api/state")
    def state():
        with game.lock:  # never half of one game and half of the next while /api/new switches them
            return jsonify(game.state())

    def body() -> dict[str, Any]:
        try:  # strict JSON, with its nesting bounded
            data = loads_json(request.get_data(cache=False), "the request body")
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise ValueError('the request body must be a JSON object, e.g. {"move": 0} or {"side": "dark"}')
        return data

    def change(action: Callable[[dict[str, Any]], None]) -> Any:
        """Apply ``action`` to the request's body under the game's lock: the new state, or the error (400)."""
        with game.lock:
            try:
                action(body())
            except ValueError as err:
                return jsonify({"error": str(err)}), 400
            return jsonify(game.state())

    @app.post("/api/new")
    def new():
        return change(
            lambda data: game.new(
                str(data.get("side", "light")),
                None,
                opponent=data.get("opponent"),
                rules=data.get("rules"),
                pieces=data.get("pieces"),
            )
        )

    @app.post("/api/move")
    def move():
        return change(lambda data: game.move(data.get("move")))

    @app.get("/api/hint")
    def hint():
        with game.lock:
            try:
                return jsonify(game.hint())
            except LookupError as err:
                return jsonify({"error": str(err.args[0])}), 404
            except ValueError as err:
                return jsonify({"error": str(err)}), 409

    @app.get("/api/opponents")
    def opponents():
        """The opponents, and the default piece count, of a new game on other rules (before it is started)."""
        name = request.args.get("rules", "")
        if name not in RULE_SET_NAMES:
            return jsonify({"error": f"unknown rule set {short_repr(name)}; known: {', '.join(RULE_SET_NAMES)}"}), 400
        pieces = request.args.get("pieces", "")
        if not (pieces.isascii() and pieces.isdigit()) or not 1 <= int(pieces) <= 7:  # "²" is a digit int() refuses
            return jsonify({"error": f"pieces must be a whole number from 1 to 7, got {short_repr(pieces)}"}), 400
        with game.lock:
            return jsonify({"opponents": game.opponents(get_rules(name, int(pieces)))})

    @app.get("/how-to-play")
    def rules_page():
        name = request.args.get("rules", game.rules.name)
        if name not in RULE_SET_NAMES:
            return Response(
                f"unknown rule set {short_repr(name)}; known: {', '.join(RULE_SET_NAMES)}\n",
                status=400,
                mimetype="text/plain",
            )
        with game.lock:
            rules = game.rules if name == game.rules.name else get_rules(name)
        return Response(render_page("howto", f"How to play Ur: {rules.name}", howto_data(rules)), mimetype="text/html")

    @app.get("/record.json")
    def record_json():
        with game.lock:
            record = game.record()
        text = json.dumps(record.to_dict(), indent=1)
        return _download(Response, text, "application/json", _file_name(record, "json"))

    @app.get("/record.rgn")
    def record_rgn():
        with game.lock:
            record = game.record()
        return _download(Response, record.to_rgn(), "text/plain", _file_name(record, "rgn"))

    @app.get("/review")
    def review():
        with game.lock:
            try:
                return Response(game.review_html(), mimetype="text/html")
            except LookupError as err:
                return Response(str(err.args[0]), status=404, mimetype="text/plain")

    return app


MAX_CONNECTIONS = 32
"""Connections the server serves at once; more are closed at once (a page needs a handful)."""
IDLE_SECONDS = 15.0
"""A connection that sends nothing for this long is closed (a browser's idle keep-alive reconnects)."""
REQUEST_SECONDS = 10.0
"""A request must arrive whole (its line, headers and body) within this long of its first byte being awaited, or its
connection is closed: a client that sends a header line now and then holds no slot for long."""


def game_server(
    app: Any,
    port: int = 0,
    connections: int = MAX_CONNECTIONS,
    idle: float = IDLE_SECONDS,
    request_seconds: float = REQUEST_SECONDS,
) -> Any:
    """The page's HTTP server on 127.0.0.1, with its connections bounded.

    One thread per connection, at most ``connections`` of them, each closed after ``idle`` seconds without a byte or
    when a request has not arrived whole within ``request_seconds``, so idle or slow clients cannot hold threads and
    memory without bound (every client is local: there is no address to tell one from another).
    """
    from werkzeug.serving import ThreadedWSGIServer, WSGIRequestHandler

    class Handler(WSGIRequestHandler):
        timeout = idle  # socketserver sets it on every connection: a read that waits longer ends it

        def handle_one_request(self) -> None:
            self.server.deadlines[self.connection] = time.monotonic() + request_seconds
            try:
                super().handle_one_request()
            finally:
                self.server.deadlines.pop(self.connection, None)

        def run_wsgi(self) -> None:
            # The body too is read within the deadline (it is at most MAX_BODY); then the app runs without one.
            length = self.headers.get("Content-Length", "")
            stream = self.rfile
            if length.isascii() and length.isdigit() and 0 < int(length) <= MAX_BODY:
                body = stream.read(int(length))
                if len(body) < int(length):
                    self.close_connection = True
                    return
                self.rfile = io.BytesIO(body)
            self.server.deadlines.pop(self.connection, None)
            try:
                super().run_wsgi()
            finally:
                self.rfile = stream

    class BoundedServer(ThreadedWSGIServer):
        daemon_threads = True

        def __init__(self) -> None:
            # Before the socket: a port in use makes werkzeug close the server from inside __init__.
            self.slots = threading.BoundedSemaphore(connections)
            self.deadlines: dict[Any, float] = {}  # connection -> when its request must have arrived whole
            self.closing = threading.Event()
            super().__init__("127.0.0.1", port, app, handler=Handler)
            threading.Thread(target=self._watch, daemon=True).start()

        def _watch(self) -> None:
            """One thread for every connection: end those whose request has not arrived in time."""
            while not self.closing.wait(min(0.25, request_seconds / 4)):
                now = time.monotonic()
                for connection, deadline in list(self.deadlines.items()):
                    if now > deadline:
                        self.deadlines.pop(connection, None)
                        with contextlib.suppress(OSError):
                            connection.shutdown(socket.SHUT_RDWR)  # its blocked read returns, its thread ends

        def server_close(self) -> None:
            self.closing.set()
            super().server_close()

        def process_request(self, request: Any, client_address: Any) -> None:
            if not self.slots.acquire(blocking=False):  # full: close this one rather than start a thread
                self.shutdown_request(request)
                return
            super().process_request(request, client_address)

        def process_request_thread(self, request: Any, client_address: Any) -> None:
            try:
                super().process_request_thread(request, client_address)
            finally:
                self.slots.release()

    _check_port(port)
    return BoundedServer()


def _check_port(port: int) -> None:
    """Refuse a port another program holds, in one line (werkzeug would print two and exit with status 1).

    Raises:
        ValueError: Naming the port and what to do.
    """
    if port == 0:
        return
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds it
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as err:
            why = err.strerror or err
            raise ValueError(f"port {port} cannot be served on 127.0.0.1 ({why}): give another --port") from None


def _file_name(record: GameRecord, suffix: str) -> str:
    """A download's name after the game: ``ur-finkel-vs-expectimax-5-2026-11-26.json`` (letters, digits, dashes)."""
    opponent = next((name for name in record.players.values() if name != "human"), "")
    words = re.sub(r"[^A-Za-z0-9]+", "-", f"{record.rules.name} vs {opponent}").strip("-")[:60]
    return f"ur-{words}-{datetime.date.today().isoformat()}.{suffix}"


def _download(Response, text: str, mimetype: str, name: str):
    return Response(text, mimetype=mimetype, headers={"Content-Disposition": f'attachment; filename="{name}"'})


def serve(
    rules: Rules,
    agent: str | Agent,
    table: SolvedTable | None,
    port: int = 0,
    open_browser: bool = True,
    write=print,
    side: str = "light",
    seed: int | None = None,
) -> None:
    """Serve the page on 127.0.0.1 (``port`` 0: a free one) until Ctrl-C; print its URL and open the browser.

    Ctrl-C stops the server (the normal way to end it: "Server stopped.", status 0).

    The first game has the human on ``side`` with the dice of ``seed``; the page starts the next ones.
    """
    require_extra("flask", "web", "ur-play --web")

    token = secrets.token_urlsafe(24)
    game = WebGame(rules, make_agent(agent), table, side, seed)
    server = game_server(create_app(game, token), port)
    url = f"http://127.0.0.1:{server.server_port}/?token={token}"
    write(
        f"Playing {game.agent.spec} on {rules.describe()} in the browser at\n  {url}\n"
        "(only this machine can connect, and only with the token; Ctrl-C stops the server)"
    )
    sys.stdout.flush()  # the URL is the one way in: shown now even when stdout is a file, a pipe or a service log
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    try:
        server.serve_forever()  # Werkzeug's server ends on Ctrl-C, the way to stop it
    finally:
        server.server_close()
    write("Server stopped.")
