"""The layers, read from the source: no module imports one that imports it back (not even inside a function),
command code lives in ``cli`` modules that nothing below the commands imports, and what one package uses of
another is public (no leading underscore)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("urgym", "solver", "agents", "evaluation")


def _modules():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


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
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base
                                                                                                   else []))
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t in MODULES and t != name)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _is_package_init(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def test_no_two_modules_import_each_other():
    pairs = sorted({tuple(sorted((a, b))) for a, targets in GRAPH.items() for b in targets
                    if a in GRAPH.get(b, ()) and not _is_package_init(a) and not _is_package_init(b)})
    assert pairs == []


@pytest.mark.parametrize("name", [m for m in MODULES if m.rpartition(".")[2] != "cli"])
def test_command_code_lives_in_cli_modules(name):
    source = MODULES[name].read_text()
    assert "argparse" not in source and "@command(" not in source, f"{name} holds command code"
    assert not [t for t in GRAPH[name] if t.rpartition(".")[2] == "cli"], f"{name} imports a cli module"


def test_packages_use_each_others_public_modules_only():
    private = sorted((a, b) for a, targets in GRAPH.items() for b in targets
                     if a.split(".")[0] != b.split(".")[0] and any(part.startswith("_") for part in b.split(".")[1:])
                     and not b.endswith("._startup"))
    assert private == []
