"""urgym: the Royal Game of Ur, with an exact rules engine and a Gymnasium environment.

Importing the package registers the environment ``urgym/Ur-v2``. The rules and the game flow live in
:mod:`urgym.core`; :class:`Position` and :class:`Game` are their Python faces.
"""

from urgym import startup  # noqa: F401 (first: Ctrl-C while a command starts ends with one line)
from urgym.files import MissingExtraError
from urgym.game import Game, GameStep
from urgym.position import SIDES, Decision, MoveResult, Position
from urgym.records import GameRecord
from urgym.rules import DICE, MAX_PATH_LENGTH, MAX_PIECES, RULE_SET_NAMES, Rules, get_rules
from urgym.simulate import POLICY_NAMES, SimulationResult, simulate
from urgym.threads import start_numba_threads

__all__ = [
    "DICE",
    "MAX_PATH_LENGTH",
    "MAX_PIECES",
    "POLICY_NAMES",
    "RULE_SET_NAMES",
    "SIDES",
    "Decision",
    "Game",
    "GameRecord",
    "GameStep",
    "MissingExtraError",
    "MoveResult",
    "Position",
    "Rules",
    "SimulationResult",
    "get_rules",
    "simulate",
]

__version__ = "0.7.0"


def _register_envs() -> None:
    from gymnasium.envs.registration import register, registry

    if "urgym/Ur-v2" not in registry:  # v0 and v1 are not registered: gymnasium.make names v2 for them
        register(id="urgym/Ur-v2", entry_point="urgym.env:UrEnv", vector_entry_point="urgym.vector:UrVectorEnv")


_register_envs()

start_numba_threads()  # now, with torch's thread count kept: numba starting later would move it (urgym.threads)
