"""The Royal Game of Ur as an OpenSpiel game with explicit chance nodes (needs the ``openspiel`` extra).

Importing this module registers the Python game ``urgym`` with OpenSpiel::

    import pyspiel
    import urgym.openspiel  # registers "urgym"

    game = pyspiel.load_game("urgym", {"rules": "blitz", "pieces": 3})

Parameters: ``rules`` (a rule-set name, default ``"finkel"``) and ``pieces`` (1 to 15; -1, the default, keeps the
rule set's own count).

Chance nodes
    Every turn starts at a chance node (``current_player() == pyspiel.PlayerId.CHANCE``) whose outcomes are
    the rolls, action id = the roll, from :func:`urgym.core.chance_outcomes`.

Actions
    At a decision, action ``p`` (0..L) moves the piece at path position p (0 enters a piece). A roll with no
    legal move leads to a decision with one legal action, :data:`PASS` (= L + 1), as in OpenSpiel's
    backgammon, so every roll is followed by one decision and depth-limited search always makes progress.
    A rosette (or a capture, where the rules grant it) gives the same player the next chance node.

Observation
    ``observation_tensor(player)`` is :func:`urgym.core.write_observation` from that player's side with the
    current roll one-hot (all zero at chance nodes): the environment's observation. The game has perfect
    information, and the roll is public.

Rewards
    +1 for the winner and -1 for the loser at the end, 0 before (zero-sum, terminal rewards). Ur has no
    finite bound on its length (captures send pieces home); ``max_game_length`` is a generous practical
    bound that random play never comes near, not a truncation.

Serialization
    ``state.serialize()`` is the action history (``"2,0,3,5"``) and ``game.deserialize_state(text)`` replays it,
    checking every action, so a string that is not a history of this game is a ``ValueError`` and nothing in it
    is ever unpickled or evaluated: use these two for strings from elsewhere.

    Warning: OpenSpiel's own C++ functions ``pyspiel.serialize_game_and_state`` and
    ``pyspiel.deserialize_game_and_state`` (and ``pickle`` of a state) go through OpenSpiel's framework for Python
    games, which stores the state's Python attributes as a pickle and unpickles them when reading. urgym cannot
    change that code path. Like ``pickle``, they are not secure against erroneous or maliciously constructed data:
    never pass them a string you did not write yourself.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from urgym import core
from urgym.checks import is_integer
from urgym.files import require_extra
from urgym.position import SIDES, Position
from urgym.render import board_text
from urgym.rules import Rules, get_rules

pyspiel = require_extra("pyspiel", "openspiel", "the OpenSpiel game")

__all__ = ["GAME_NAME", "MAX_GAME_LENGTH", "UrGame", "UrState", "pass_action"]

GAME_NAME = "urgym"
MAX_GAME_LENGTH = 100_000
"""Actions (rolls and moves) OpenSpiel is told a game can last; a practical bound, never enforced."""

_DEFAULT_PARAMS = {"rules": "finkel", "pieces": -1}
_RULES_PIECES = -1
"""The ``pieces`` parameter's default: the rule set's own count."""
MAX_HISTORY_TEXT = 10_000_000
"""Longest string :meth:`UrGame.deserialize_state` reads (far above any real game's history)."""

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Royal Game of Ur (urgym)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=False,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_DEFAULT_PARAMS,
)


def pass_action(rules: Rules) -> int:
    """The action id of passing a roll that has no legal move: L + 1."""
    return rules.length + 1


def _rules_from_params(params: dict) -> Rules:
    pieces = params.get("pieces", _RULES_PIECES)
    if not is_integer(pieces) or not (pieces == _RULES_PIECES or pieces >= 1):
        raise ValueError(
            f"the urgym game's parameter pieces must be from 1 to 15 (or {_RULES_PIECES}, the rule "
            f"set's own count), got {pieces!r}"
        )
    rules = params.get("rules", "finkel")
    if not isinstance(rules, str):
        raise ValueError(f"the urgym game's parameter rules must be a rule-set name, got {rules!r}")
    return get_rules(rules, None if pieces == _RULES_PIECES else pieces)


class UrGame(pyspiel.Game):
    """The OpenSpiel game of a rule set (see the module docstring)."""

    def __init__(self, params: dict | None = None) -> None:
        params = {**_DEFAULT_PARAMS, **(params or {})}
        self.rules = _rules_from_params(params)
        info = pyspiel.GameInfo(
            num_distinct_actions=pass_action(self.rules) + 1,
            max_chance_outcomes=self.rules.max_roll + 1,
            num_players=2,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=MAX_GAME_LENGTH,
        )
        super().__init__(_GAME_TYPE, info, params)

    def new_initial_state(self) -> UrState:
        """A new game, at its first chance node."""
        return UrState(self, self.rules)

    def deserialize_state(self, text: str) -> UrState:
        """The state :meth:`UrState.serialize` wrote: the action history, replayed and checked action by action.

        Raises:
            ValueError: If ``text`` is not a comma-separated history of legal actions of this game.
        """
        if not isinstance(text, str) or len(text) > MAX_HISTORY_TEXT:
            raise ValueError("a urgym state string is a comma-separated action history (UrState.serialize)")
        state = self.new_initial_state()
        body = text.strip()
        for i, token in enumerate(body.split(",") if body else ()):
            if not (token.isascii() and token.isdigit()):
                raise ValueError(
                    f"state string: action {i} ({token[:20]!r}) is not a number; a urgym state string "
                    "is a comma-separated action history (UrState.serialize)"
                )
            if len(token) > 6:
                raise ValueError(f"state string: action {i} ({token[:20]}) is no action or chance outcome of this game")
            try:
                state.apply_action(int(token))
            except ValueError as err:  # pyspiel reports Python errors from apply_action as ValueError
                raise ValueError(f"state string: action {i} ({token}) is not legal there: {err}") from None
        return state

    def make_py_observer(self, iig_obs_type=None, params=None) -> UrObserver:
        """An observer of the tensor the environments observe."""
        if params:
            raise ValueError(f"the urgym game's observer takes no parameters, got {params}")
        return UrObserver(self.rules)


class _GameData(NamedTuple):
    """What every state of a game reads: the geometry, the chance outcomes, a buffer for legal moves."""

    geom: np.ndarray
    outcomes: list[tuple[int, float]]
    moves: np.ndarray

    def __deepcopy__(self, memo: dict) -> _GameData:
        return self  # shared by every state of the rules: clones (OpenSpiel deep-copies states) share it too


@functools.cache
def _game_data(rules: Rules) -> _GameData:
    rolls, probabilities = core.chance_outcomes(rules)
    return _GameData(
        core.geometry(rules),
        list(zip(rolls.tolist(), probabilities.tolist(), strict=True)),
        np.zeros(core.MAX_MOVES, dtype=np.int64),
    )


class UrState(pyspiel.State):
    """A state: the packed position, and the roll once the chance node has been resolved (else None)."""

    def __init__(self, game: UrGame, rules: Rules) -> None:
        super().__init__(game)
        self.rules = rules
        self.game_data = _game_data(rules)
        self.code = int(core.start_state(rules.pieces))
        self.roll: int | None = None
        self._legal: list[int] = []

    # --- OpenSpiel API ----------------------------------------------------------------------------
    def current_player(self) -> int:
        """The player to act, or chance, or terminal."""
        if core.is_over(self.code):
            return pyspiel.PlayerId.TERMINAL
        if self.roll is None:
            return pyspiel.PlayerId.CHANCE
        return int(core.turn_of(self.code))

    def _legal_actions(self, player: int) -> list[int]:
        return list(self._legal)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The rolls and their probabilities at a chance node."""
        if core.is_over(self.code):
            raise ValueError("the game is over: there is no roll to make")
        return self.game_data.outcomes

    def _apply_action(self, action: int) -> None:
        if core.is_over(self.code):
            raise ValueError(f"the game is over ({self.position.winner} won): no action applies")
        if self.roll is None:
            if action not in self.rules.rolls:  # refused before anything changes
                raise ValueError(f"illegal chance outcome {action}; the rolls are {list(self.rules.rolls)}")
            self.roll = int(action)
            data = self.game_data
            n = core.legal_moves(self.code, self.roll, data.geom, data.moves)
            self._legal = data.moves[:n].tolist() or [pass_action(self.rules)]
            return
        if action not in self._legal:
            raise ValueError(f"illegal action {action} for roll {self.roll}; legal actions: {self._legal}")
        if action == pass_action(self.rules):
            self.code = int(core.swap_sides(self.code))
        else:  # legal, so the core applies it without checking again
            self.code = int(core.apply_move(self.code, self.roll, int(action), self.game_data.geom)[0])
        self.roll = None
        self._legal = []

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"roll {action}"
        if action == pass_action(self.rules):
            return "pass"
        return "enter" if action == 0 else f"move {action}"

    def serialize(self) -> str:
        """The action history, comma-separated: what :meth:`UrGame.deserialize_state` reads back."""
        return ",".join(str(a) for a in self.history())

    def is_terminal(self) -> bool:
        """Whether the game has ended."""
        return bool(core.is_over(self.code))

    def returns(self) -> list[float]:
        """Each player's return: 1 for the winner, -1 for the loser, 0 while the game goes on."""
        winner = core.winner_of(self.code)
        if winner < 0:
            return [0.0, 0.0]
        return [1.0, -1.0] if winner == 0 else [-1.0, 1.0]

    def __str__(self) -> str:
        roll = "" if self.roll is None else f"\nroll {self.roll}"
        return board_text(self.position) + roll

    # --- urgym ------------------------------------------------------------------------------------
    @property
    def position(self) -> Position:
        """The current position as a :class:`urgym.Position`."""
        return Position(self.rules, self.code)


class UrObserver:
    """OpenSpiel's observer: the environment's observation from a player's side, roll included."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.tensor = np.zeros(core.observation_size(rules), np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: UrState, player: int) -> None:
        core.write_observation(state.code, player, state.roll or 0, core.geometry(self.rules), self.tensor)

    def string_from(self, state: UrState, player: int) -> str:
        return f"{SIDES[player]} observes:\n{state}"


pyspiel.register_game(_GAME_TYPE, UrGame)
