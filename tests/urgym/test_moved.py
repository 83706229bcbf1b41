"""urgym 0.5's module paths still import (issue 37's layout), with a DeprecationWarning naming the new path."""

import importlib
import subprocess
import sys

import pytest

MOVED = {
    "urgym.agents.valuenet": ("urgym.agents.networks.neural", "NeuralAgent"),
    "urgym.agents.td": ("urgym.agents.networks.td", "TDAgent"),
    "urgym.agents.neural": ("urgym.agents.outside.policies", "SB3Agent"),
    "urgym.agents.weights": ("urgym.agents.outside.weights", "read_state_dict"),
    "urgym.agents.plugins": ("urgym.agents.outside.plugins", "build_plugin"),
    "urgym.agents.engine": ("urgym.agents.outside.engine", "EngineAgent"),
    "urgym.agents.learned": ("urgym.agents.models", "write_model_card"),
    "urgym.agents.play": ("urgym.evaluation.play.terminal", "play_game"),
    "urgym.evaluation.match": ("urgym.evaluation.scoring.match", "play_match"),
    "urgym.evaluation.runner": ("urgym.evaluation.scoring.runner", "RunOptions"),
    "urgym.evaluation.positions": ("urgym.evaluation.scoring.positions", "benchmark_positions"),
    "urgym.evaluation.luck": ("urgym.evaluation.review.luck", "analyse_game"),
    "urgym.evaluation.summary": ("urgym.evaluation.review.summary", "summarise_player"),
    "urgym.evaluation.web": ("urgym.evaluation.play.web", "WebGame"),
    "urgym.evaluation.distill": ("urgym.evaluation.training.distill", "train_distill"),
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_warns_and_gives_the_new_modules_objects(old):
    new, name = MOVED[old]
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
        module = importlib.import_module(old)
    assert getattr(module, name) is getattr(importlib.import_module(new), name)
    assert getattr(importlib.import_module(new), name).__module__ == new  # the new module keeps its own name


def test_old_paths_that_are_packages_now_keep_their_names_without_a_warning():
    """urgym.evaluation.review and .training were modules; as packages they export what those modules did."""
    code = (
        "import warnings; warnings.simplefilter('error')\n"
        "from urgym.evaluation.review import review_game, board_data, render_page, RATINGS\n"
        "from urgym.evaluation.training import regret_callback, plot_curves, LearnerOpponent\n"
        "from urgym.agents.networks import ValueNetwork\n"
        "print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr[-1500:]


def test_a_name_that_never_was_is_still_an_import_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("urgym.evaluation.no_such_module")
