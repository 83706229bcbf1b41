"""Ship a trained value network: measure it, and write it and its card into the package's models.

Run: ``python -m tools.ship_model RUN/best_model.npz --name neural_finkel_7p [--note TEXT]``

Measures the network as its card reports it: the mean regret (win-% points per decision) with its 95% interval on
the test set that ``evaluate`` reports and on the held-out check (20,000 decisions nothing trains or selects on), at
depths 0, 1 and 2, and the decisions per second at each (4,000 decisions of
perfect play answered in one batch, every core, the median of 3 runs after a warm-up), then writes
``urgym/agents/models/NAME.npz`` (the network, its header holding the card's facts) and ``NAME.json`` (the card:
rules, method and command, parameters, training time, the figures above, the file's size) atomically.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from urgym.agents import NeuralAgent, ValueNetwork
from urgym.agents.models import model_card, write_model_card
from urgym.evaluation.scoring.positions import benchmark_positions, held_out_positions, score_positions
from urgym.evaluation.scoring.runner import RunOptions
from urgym.solver import table_for

from benchmarks.common import machine
from tools.td_recipe import recipe_facts
from urgym.batch import Decisions

MODELS = Path(__file__).resolve().parent.parent / "agents" / "models"


def measure(
    network: ValueNetwork, depths: tuple[int, ...] = (0, 1, 2), speed_depths: tuple[int, ...] = (0, 1, 2)
) -> dict[str, float]:
    """The card's figures: regret per set and depth, and decisions per second per depth.

    The regrets as ``test_regret_depth0`` with ``test_regret_depth0_low95`` and ``_high95`` beside it, and the
    same of ``held_out_regret_depth0`` and the other depths.
    """
    rules = network.rules
    table = table_for(rules, solve=False, progress=False)
    sets = {"test": benchmark_positions(table), "held_out": held_out_positions(table)}
    figures: dict[str, float] = {}
    for depth in depths:
        for name, positions in sets.items():
            agent = NeuralAgent(network, depth=depth)
            regret = score_positions(agent, table, positions, RunOptions(workers=1, progress=False)).regret
            key = f"{name}_regret_depth{depth}"
            figures.update({key: regret.mean, f"{key}_low95": regret.low95, f"{key}_high95": regret.high95})
    batch = Decisions.of_positions(benchmark_positions(table, 4000, seed=777))
    for depth in speed_depths:
        NeuralAgent(network, depth=depth).select_moves(rules, batch)  # compiles
        seconds = []
        for _ in range(3):
            agent = NeuralAgent(network, depth=depth)
            start = time.perf_counter()
            agent.select_moves(rules, batch)
            seconds.append(time.perf_counter() - start)
        figures[f"decisions_per_second_depth{depth}"] = round(len(batch) / statistics.median(seconds))
    return figures


def teacher_card(network: ValueNetwork) -> dict | None:
    """The card of the network a distilled one learned from (``train --algo distill --teacher``), if it has one.

    The student's card then tells the whole recipe: the teacher's command and time beside its own.
    """
    teacher = network.info.get("settings", {}).get("teacher")
    facts = model_card(teacher) if teacher else {}
    return {key: facts[key] for key in TEACHER_FACTS if key in facts} or None


TEACHER_FACTS = ("algo", "command", "timesteps", "train_seconds", "validation_regret", "games", "urgym", "parameters")
"""What a student's card repeats of its teacher's."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--name", required=True, help="file name in the package's models, without .npz")
    parser.add_argument("--note", default="", help="a sentence for the card (how the run went)")
    parser.add_argument(
        "--recipe", help="the folder of tools.td_recipe that made the network: its stages go on the card"
    )
    args = parser.parse_args()
    network = ValueNetwork.load(args.model)  # every network train writes, TD(lambda)'s older files too
    figures = measure(network)
    facts = {
        **network.info,
        **figures,
        "measured_on": machine(),
        "measured": time.strftime("%Y-%m-%d"),
        "parameters": network.parameters,
        "sizes": list(network.sizes),
        "features": network.features,
    }
    teacher = teacher_card(network)
    if teacher:
        facts["teacher"] = teacher
    if args.note:
        facts["note"] = args.note
    if args.recipe:
        facts["recipe"] = recipe_facts(Path(args.recipe))
    path = ValueNetwork(network.rules, network.features, network.layers, network.activation, facts).save(
        MODELS / f"{args.name}.npz"
    )
    facts["file_bytes"] = path.stat().st_size
    write_model_card(path, network.rules, **facts)
    print(json.dumps({k: v for k, v in facts.items() if k not in ("settings",)}, indent=1))


if __name__ == "__main__":
    main()
