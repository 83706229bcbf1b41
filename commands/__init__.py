"""urgym's commands: one thin module per command (argument parsing, messages and exit codes), above every other layer.

Nothing below imports them.

Each command runs under its own name (``evaluate``, ``solve``, ...) and under the umbrella command ``urgym``
(``urgym evaluate ...``, see :mod:`urgym.commands.main`). Every module has a ``main(argv=None) -> int``.
"""

COMMANDS = {
    "evaluate": ("evaluate", "benchmark an agent against perfect play (or any other agent)"),
    "play": ("play", "play against an agent in the terminal, or in the browser with --web"),
    "review": ("review", "review a recorded game against perfect play"),
    "solve": ("solve", "solve a rule set exactly and cache its table; count positions; RoyalUr tables"),
    "train": ("train", "learn an agent (MaskablePPO, TD(lambda)) and pick its best model"),
    "bench": ("bench", "the RL benchmark: tasks, training under the protocol, results, the leaderboard"),
    "stats": ("stats", "game-tree statistics from self-play or saved records"),
    "simulate": ("simulate", "games between the core's built-in policies, and the simulator's speed"),
    "engine-check": ("engine_check", "check that an engine program speaks UEI 1"),
}
"""The umbrella's subcommands: name -> (module in this package, one-line summary)."""

__all__ = ["COMMANDS"]
