"""``urgym COMMAND ...``.

Every command under one name (``urgym evaluate --agent expectimax --depth 7``), beside the short names (``evaluate``,
``ur-play``, ...); ``ur-play`` is prefixed because SoX already installs a ``play``.
"""

from __future__ import annotations

import importlib
import sys

from urgym.commands import COMMANDS

from urgym import __version__

__all__ = ["main"]


def usage() -> str:
    """The umbrella's help: its commands, one line each."""
    width = max(map(len, COMMANDS))
    rows = "\n".join(f"  {name:<{width}}  {summary}" for name, (_, summary) in COMMANDS.items())
    return (
        f"usage: urgym COMMAND [OPTIONS ...]\n\nThe Royal Game of Ur: rules, solver, agents and evaluation "
        f"(urgym {__version__}).\n\ncommands:\n{rows}\n\n`urgym COMMAND --help` describes a command."
    )


def main(argv: list[str] | None = None) -> int:
    """Run ``urgym COMMAND ...``: the command's own ``main`` with the rest of the arguments."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    if args[0] == "--version":
        print(f"urgym {__version__}")
        return 0
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(
            f"urgym: error: unknown command {name!r}; commands: {', '.join(COMMANDS)} (see urgym --help)",
            file=sys.stderr,
        )
        return 2
    module = importlib.import_module(f"urgym.commands.{COMMANDS[name][0]}")
    if argv is None:  # run as a program: the command runs as one too (Ctrl-C stops it at once)
        sys.argv = [f"{sys.argv[0]} {name}", *rest]
        return module.main() or 0
    return module.main(rest) or 0


if __name__ == "__main__":
    sys.exit(main())
