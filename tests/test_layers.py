"""The layers, read from the source.

The core imports nothing above it, no layer imports a higher one, no two modules import each other (not even inside a
function), command code lives in :mod:`urgym.commands` alone, and what one package uses of another is public (no leading
underscore).

The repository's folders install as one import name (pyproject.toml's package-dir): ``agents/`` is
``urgym.agents``, and so on. import-linter checks the same contract on the built wheel (``.ci/lint-layers``).
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("urgym", "urgym.solver", "urgym.agents", "urgym.evaluation", "urgym.commands")
"""Lowest first; ``urgym`` is the core (the rules, the game flow and the environments)."""
FOLDERS = {
    "urgym": "urgym",
    "solver": "urgym.solver",
    "agents": "urgym.agents",
    "evaluation": "urgym.evaluation",
    "commands": "urgym.commands",
}


def _modules():
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            yield ".".join([package, *parts]), path


MODULES = dict(_modules())


def _imports(name: str, path: Path) -> set[str]:
    """Every project module ``name`` imports, at the top or inside a function (TYPE_CHECKING blocks left out)."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):  # drop `if TYPE_CHECKING:` bodies: they import nothing at run time
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            node.body = []
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t in MODULES and t != name)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(name: str) -> int:
    """The index in LAYERS of the deepest layer that holds ``name``."""
    return max(i for i, layer in enumerate(LAYERS) if name == layer or name.startswith(layer + "."))


def _is_package_init(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def test_every_folder_installs_under_urgym():
    assert "urgym.agents.registry" in MODULES and "urgym.commands.evaluate" in MODULES
    assert all(name == "urgym" or name.startswith("urgym.") for name in MODULES)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_imports_a_higher_layer(name):
    higher = sorted(t for t in GRAPH[name] if _layer(t) > _layer(name))
    assert higher == [], f"{name} (layer {LAYERS[_layer(name)]}) imports {higher}"


def test_no_two_modules_import_each_other():
    pairs = sorted(
        {
            tuple(sorted((a, b)))
            for a, targets in GRAPH.items()
            for b in targets
            if a in GRAPH.get(b, ()) and not _is_package_init(a) and not _is_package_init(b)
        }
    )
    assert pairs == []


@pytest.mark.parametrize("name", [m for m in MODULES if _layer(m) != LAYERS.index("urgym.commands")])
def test_command_code_lives_in_the_commands_layer(name):
    source = MODULES[name].read_text()
    assert "argparse" not in source and "@command(" not in source, f"{name} holds command code"


def test_packages_use_each_others_public_modules_only():
    private = sorted(
        (a, b)
        for a, targets in GRAPH.items()
        for b in targets
        if _layer(a) != _layer(b) and any(part.startswith("_") for part in b.split(".")[1:])
    )
    assert private == []


def test_nothing_imports_the_old_top_level_names():
    """``agents``, ``solver``, ``evaluation`` and ``commands`` exist only as ``urgym.*``.

    An import of the bare name works inside the checkout but fails beside a user's own folder of that name.
    """
    bare = ("agents", "solver", "evaluation", "commands", "examples")
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if any(part.startswith(".") for part in path.relative_to(ROOT).parts):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            found += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] in bare]
    assert found == []
