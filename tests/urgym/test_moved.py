"""urgym 0.5's module paths, aliased through 0.6, are gone in 0.7: importing one fails as any missing module does."""

import importlib

import pytest

OLD_PATHS = ["urgym.agents.td", "urgym.evaluation.match", "urgym.evaluation.web", "urgym.moved"]


@pytest.mark.parametrize("old", OLD_PATHS)
def test_an_old_path_no_longer_imports(old):
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)
