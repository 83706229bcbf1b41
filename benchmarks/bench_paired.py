"""Value networks compared on the same held-out decisions: each one's regret, and each less the first, paired.

``python -m benchmarks.bench_paired --models A.npz,B.npz,...`` (``--held-out N``, default 20,000: the held-out check of
``evaluate --position-set held-out``). Every network plays depth 0 on the same decisions, so the paired difference's
interval is far narrower than the gap between two separate intervals: what a study of training changes needs.
Networks of one rule set; the first is the reference. Prints each network's parameters, its regret (win-% points a
decision, with its 95% interval) and its difference from the first with the paired interval and the number of
decisions where their moves differ.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from urgym.agents.networks.value import ValueNetwork, network_values
from urgym.evaluation.scoring.positions import held_out_positions
from urgym.solver import table_for

from benchmarks.bench_int8 import after_states, interval, move_values, regrets
from benchmarks.common import machine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", required=True, help="value network files, comma-separated (the first: reference)")
    parser.add_argument("--held-out", type=int, default=20_000)
    args = parser.parse_args()
    paths = [Path(p) for p in args.models.split(",") if p]
    networks = [ValueNetwork.load(path) for path in paths]
    rules = networks[0].rules
    if any(network.rules != rules for network in networks):
        parser.error("the networks play different rule sets; compare networks of one")
    table = table_for(rules, solve=False, progress=False)
    positions = held_out_positions(table, args.held_out)
    states, flags, spans = after_states(positions)
    print(f"{machine()}; {len(positions):,} held-out decisions, {len(states):,} after-states")
    reference = None
    for path, network in zip(paths, networks, strict=True):
        regret = regrets(positions, spans, move_values(network_values(network, states), flags), table)
        line = f"{path}: {network.parameters:,} parameters, regret {interval(regret)}"
        if reference is None:
            reference = regret
        else:
            differ = int((regret != reference).sum())
            line += f", less the first {interval(regret - reference)} ({differ:,} decisions differ)"
        print(line, flush=True)


if __name__ == "__main__":
    main()
