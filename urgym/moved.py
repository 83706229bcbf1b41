"""Old import paths of modules that moved, kept for one release: importing one warns and gives the new module.

A package lists its moved modules with :func:`alias_moved_modules` (old name -> new name, both absolute); the
finder answers only those names, so nothing else is touched. What an old path gives is a stand-in that reads every
attribute from the new module (the new module keeps its own name, so pickles and tracebacks name it).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from typing import Any

__all__ = ["alias_moved_modules"]

REMOVED_IN = "0.7"


class _Alias(types.ModuleType):
    """A stand-in for a moved module: every attribute is read from the module it moved to."""

    def __init__(self, name: str, target: str) -> None:
        super().__init__(name, f"moved to {target}")
        self.__dict__["_target"] = target

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self.__dict__["_target"]), attribute)

    def __dir__(self) -> list[str]:
        return dir(importlib.import_module(self.__dict__["_target"]))


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self) -> None:
        self.moved: dict[str, str] = {}

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.moved:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        target = self.moved[spec.name]
        warnings.warn(
            f"{spec.name} moved to {target}; import it from there (the old path goes in urgym {REMOVED_IN})",
            DeprecationWarning,
            stacklevel=2,
        )
        return _Alias(spec.name, target)

    def exec_module(self, module: types.ModuleType) -> None:
        importlib.import_module(module.__dict__["_target"])  # fail here, at the import, if the target is broken


_FINDER = _MovedModules()


def alias_moved_modules(moved: dict[str, str]) -> None:
    """Make each old module name of ``moved`` import (with a DeprecationWarning) as its new module."""
    _FINDER.moved.update(moved)
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)
