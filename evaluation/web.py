"""``ur-play --web``: play an agent in the browser, served from this machine only (the ``web`` extra, Flask).

The server listens on 127.0.0.1 and answers only requests that carry its token (a random string in the URL it
prints, as Jupyter does: ``?token=`` for pages and downloads, the ``X-Urgym-Token`` header for the page's calls)
and name the server itself as their host (so a web page elsewhere cannot reach it by DNS rebinding). The page
(``pages/play.html``) is self-contained: nothing is fetched from the network.

One game at a time, held by :class:`WebGame`: the human plays one side, the agent the other; every request that
changes the game answers with the whole state (:meth:`WebGame.state`), which the page draws. The dice are game 0
of the game's seed, as in the terminal's ``play``.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from typing import Any

import numpy as np
from urgym.agents import Agent, make_agent
from urgym.agents.play import describe_move
from urgym.evaluation.review import board_data, position_data, render_page, review_game
from urgym.solver import SolvedTable

from urgym import SIDES, Game, GameRecord, Position, Rules
from urgym.files import loads_json, require_extra
from urgym.notation import move_text

__all__ = ["FORCED_NOTE", "MAX_BODY", "TOKEN_HEADER", "WebGame", "create_app", "serve"]

TOKEN_HEADER = "X-Urgym-Token"


class WebGame:
    """The game the page shows: a :class:`urgym.Game`, the human's side, the agent, and what was said."""

    def __init__(self, rules: Rules, agent: Agent, table: SolvedTable | None, side: str = "light",
                 seed: int | None = None) -> None:
        self.rules, self.agent, self.table = rules, agent, table
        self.lock = threading.Lock()  # one request changes the game at a time
        self.new(side, seed)

    def new(self, side: str, seed: int | None) -> None:
        """Start a new game with the human on ``side`` (``light``, ``dark`` or ``random``)."""
        if side not in (*SIDES, "random"):
            raise ValueError(f"side must be light, dark or random, got {side!r}")
        if seed is None:
            seed = int(np.random.default_rng().integers(2**63))
        if side == "random":
            side = SIDES[int(np.random.default_rng(seed).integers(2))]
        self.game, self.human, self.seed = Game(self.rules, seed), side, seed
        if hasattr(self.agent, "reseed"):
            self.agent.reseed(seed)
        self.events: list[dict[str, Any]] = []
        self._after = self.game.position  # the position after the last event
        self.chances = [] if self.table is None else [self.table.win_probability(self._after, "light")]
        self._agent_moves()

    def move(self, move: Any) -> None:
        """Play the human's ``move`` (a source path position), then the agent's moves up to the human's next turn.

        Raises:
            ValueError: When it is not the human's turn, or ``move`` is not one of the legal moves.
        """
        game = self.game
        if game.is_over or game.turn != self.human:
            raise ValueError("it is not your turn")
        if isinstance(move, bool) or not isinstance(move, int) or move not in game.legal_moves:
            raise ValueError(f"{move!r} is not a legal move; the legal moves are {list(game.legal_moves)}")
        self._play(move)
        self._agent_moves()

    def hint(self) -> dict[str, Any]:
        """Every legal move's winning chance for the human and the best move.

        Raises:
            LookupError: When no solved table of the rules is cached.
            ValueError: When the game is over or it is not the human's turn.
        """
        if self.table is None:
            raise LookupError(f"no solved table of {self.rules.describe()} is cached: hints need one "
                              f"(solve --rules {self.rules.name} --pieces {self.rules.pieces})")
        if self.game.is_over:
            raise ValueError("the game is over: no move to hint at")
        if self.game.turn != self.human:
            raise ValueError("it is not your turn")
        position, roll = self.game.position, self.game.roll
        values = self.table.move_values(position, roll)
        best = self.table.best_move(position, roll)
        return {"values": {move_text(position, roll, m): v for m, v in values.items()},
                "best": move_text(position, roll, best), "before": self.table.win_probability(position)}

    def record(self) -> GameRecord:
        players = {self.human: "human", _other(self.human): self.agent.spec}
        return GameRecord.from_game(self.game, players)

    def review_html(self) -> str:
        """The review page of the game so far (needs the solved table)."""
        if self.table is None:
            raise LookupError("the review needs the solved table of the rules")
        return review_game(self.record(), self.table).to_html()

    def state(self) -> dict[str, Any]:
        """Everything the page draws: the position, the roll and its legal moves (when the human is to move), what
        happened since the last move, light's winning chance after each move (with the table), and the end."""
        game, position = self.game, self.game.position
        deciding = not game.is_over and game.turn == self.human
        moves = []
        if deciding:
            for m in game.legal_moves:
                text = move_text(position, game.roll, m)
                moves.append({"move": m, "notation": text, "text": describe_move(position, game.roll, m)})
        return {"position": position_data(position), "human": self.human, "agent": self.agent.spec,
                "roll": game.roll if deciding else None, "moves": moves, "events": self.events,
                "chances": self.chances, "over": game.is_over, "winner": game.winner, "seed": self.seed,
                "hints": self.table is not None}

    # --- internals ---------------------------------------------------------------------------------------------
    def _play(self, move: int, note: str = "") -> None:
        game = self.game
        position, roll = game.position, game.roll
        self._tell(game.turn, roll, move_text(position, roll, move), describe_move(position, roll, move) + note,
                   position.play(roll, move))
        game.play(move)
        self._tell_passes()

    def _agent_moves(self) -> None:
        """Play the agent's moves, and the human's only legal moves (as the terminal game does), until the human
        has a choice to make or the game ends."""
        game = self.game
        self._tell_passes()  # before the first decision
        while not game.is_over:
            if game.turn != self.human:
                self._play(self.agent.select_move(game.position, game.roll))
            elif len(game.legal_moves) == 1:
                self._play(game.legal_moves[0], FORCED_NOTE)
            else:
                break

    def _tell_passes(self) -> None:
        """Add the rolls that passed since the last event (every step of the game's history is one event)."""
        for step in self.game.history[len(self.events):]:
            self._tell(step.side, step.roll, f"{step.roll}-", "no legal move: the turn passes",
                       self._after.play(step.roll, None))

    def _tell(self, side: str, roll: int, notation: str, text: str, after: Position) -> None:
        """Add one event, and light's winning chance after it (with the table): kept as the game goes, not
        replayed from the record at every request."""
        self.events.append({"side": side, "roll": roll, "notation": notation, "text": text})
        self._after = after
        if self.table is not None:
            self.chances.append(self.table.win_probability(after, "light"))

def _other(side: str) -> str:
    return "dark" if side == "light" else "light"


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
            return Response("forbidden: this server answers only its own page (open the URL it printed, with its "
                            "token)\n", status=403, mimetype="text/plain")
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
        response.headers["Content-Security-Policy"] = ("default-src 'none'; script-src 'unsafe-inline'; style-src "
                                                       "'unsafe-inline'; connect-src 'self'; img-src 'self' data:; "
                                                       "frame-src 'self'; form-action 'none'; frame-ancestors 'self'")
        return response

    @app.get("/")
    def page():
        return Response(render_page("play", f"Ur: play {game.agent.spec} ({game.rules.name})", data),
                        mimetype="text/html")

    @app.get("/api/state")
    def state():
        return jsonify(game.state())

    def body() -> dict[str, Any]:
        try:  # strict JSON, with its nesting bounded
            data = loads_json(request.get_data(cache=False), "the request body")
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise ValueError('the request body must be a JSON object, e.g. {"move": 0} or {"side": "dark"}')
        return data

    @app.post("/api/new")
    def new():
        with game.lock:
            try:
                game.new(str(body().get("side", "light")), None)
            except ValueError as err:
                return jsonify({"error": str(err)}), 400
            return jsonify(game.state())

    @app.post("/api/move")
    def move():
        with game.lock:
            try:
                game.move(body().get("move"))
            except ValueError as err:
                return jsonify({"error": str(err)}), 400
            return jsonify(game.state())

    @app.get("/api/hint")
    def hint():
        with game.lock:
            try:
                return jsonify(game.hint())
            except LookupError as err:
                return jsonify({"error": str(err.args[0])}), 404
            except ValueError as err:
                return jsonify({"error": str(err)}), 409

    @app.get("/record.json")
    def record_json():
        with game.lock:
            text = json.dumps(game.record().to_dict(), indent=1)
        return _download(Response, text, "application/json", "ur-game.json")

    @app.get("/record.rgn")
    def record_rgn():
        with game.lock:
            text = game.record().to_rgn()
        return _download(Response, text, "text/plain", "ur-game.rgn")

    @app.get("/review")
    def review():
        with game.lock:
            try:
                return Response(game.review_html(), mimetype="text/html")
            except LookupError as err:
                return Response(str(err.args[0]), status=404, mimetype="text/plain")

    return app


def _download(Response, text: str, mimetype: str, name: str):
    return Response(text, mimetype=mimetype, headers={"Content-Disposition": f'attachment; filename="{name}"'})


def serve(rules: Rules, agent: str | Agent, table: SolvedTable | None, port: int = 0, open_browser: bool = True,
          write=print, side: str = "light", seed: int | None = None) -> None:
    """Serve the page on 127.0.0.1 (``port`` 0: a free one) until Ctrl-C; print its URL and open the browser.

    Ctrl-C stops the server (the normal way to end it: "Server stopped.", status 0).

    The first game has the human on ``side`` with the dice of ``seed``; the page starts the next ones.
    """
    require_extra("flask", "web", "ur-play --web")
    from werkzeug.serving import make_server

    token = secrets.token_urlsafe(24)
    game = WebGame(rules, make_agent(agent), table, side, seed)
    server = make_server("127.0.0.1", port, create_app(game, token), threaded=True)
    url = f"http://127.0.0.1:{server.server_port}/?token={token}"
    write(f"Playing {game.agent.spec} on {rules.describe()} in the browser at\n  {url}\n"
          "(only this machine can connect, and only with the token; Ctrl-C stops the server)")
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    try:
        server.serve_forever()  # Werkzeug's server ends on Ctrl-C, the way to stop it
    finally:
        server.server_close()
    write("Server stopped.")
