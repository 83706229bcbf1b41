"""Exact evaluation: each agent's exact win rate against perfect play and its exploitability, with the time taken.

Run: ``python -m benchmarks.bench_exact [--rules finkel] [--pieces 3] [--agents random,greedy,...]``

``--against-solve N`` instead times, interleaved N times, a solve of the rules (in memory) and each agent's two
policy evaluations, and prints the medians: whether an evaluation is slower than a solve of the same rule set.
``--one-sweep N`` times single sweeps of the largest layer pair instead (medians of N after a warm-up): the solver's,
and per agent one against perfect play, one of the best response choosing its moves and one holding them.

For each agent: the decisions asked and the rate they were answered at (``select_moves`` in batches of 65,536), the
seconds of the two policy evaluations (against perfect play and against the best response), and the figures. JIT
warm-up is run first on 2 pieces and left out. One run per agent: the figures are exact, and the times of the
slower agents are minutes. Policies are asked afresh (not read from the cache), so the asking rate is measured.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

import numpy as np
from urgym.agents import Agent, make_agent
from urgym.evaluation.scoring.exact import perfect_values
from urgym.evaluation.scoring.policies import agent_policy
from urgym.solver import PositionIndex, load_or_solve, solve
from urgym.solver import _kernels as SK
from urgym.solver import policy as P
from urgym.solver.graph import SweepGraph
from urgym.solver.policy import evaluate_policies

from benchmarks.common import machine
from urgym import get_rules

DEFAULT_AGENTS = (
    "random,first,last,greedy,heuristic,expectimax:1,expectimax:2,expectimax:3,expectimax:5,expectimax:7,perfect"
)


def measure(spec: str, rules, perfect) -> dict:
    """One agent's figures and times on ``rules`` (``perfect``: the perfect player's policy, asked once)."""
    began = time.perf_counter()
    asked_policy = agent_policy(spec, rules, progress=False, cache=False)
    asking = time.perf_counter() - began
    policy, asked = asked_policy.policy, asked_policy.asked
    versus = evaluate_policies(rules, policy, perfect, progress=False, initial=perfect_values(rules))
    best = evaluate_policies(rules, policy, None, progress=False, initial=versus)  # as evaluate --exact does
    light, dark = versus.start()
    best_light, best_dark = best.start()
    return {
        "agent": spec,
        "win_rate": 50 * (light + dark),
        "light": 100 * light,
        "dark": 100 * dark,
        "exploitability": 100 - 50 * (best_light + best_dark) - 50,
        "asked": asked,
        "asking_seconds": asking,
        "whole_policy": asked_policy.seconds > 0 and type(make_agent(spec)).policy_table is not Agent.policy_table,
        "evaluation_seconds": versus.seconds + best.seconds,
        "exact_policy": asked_policy.exact,
        "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
    }


def against_solve(rules, specs: list[str], perfect, repeats: int) -> None:
    """Medians of ``repeats`` interleaved runs: a solve of ``rules`` and each agent's two evaluations."""
    policies = {spec: agent_policy(spec, rules, progress=False).policy for spec in specs}
    times: dict[str, list[float]] = {"solve": []}
    sweeps: dict[str, int] = {}
    for _ in range(repeats):
        began = time.perf_counter()
        sweeps["solve"] = solve(rules, progress=False).header["sweeps"]
        times["solve"].append(time.perf_counter() - began)
        for spec, policy in policies.items():
            versus = evaluate_policies(rules, policy, perfect, progress=False, initial=perfect_values(rules))
            best = evaluate_policies(rules, policy, None, progress=False, initial=versus)
            times.setdefault(spec, []).append(versus.seconds)
            times.setdefault(spec + " best", []).append(best.seconds)
            sweeps[spec], sweeps[spec + " best"] = versus.sweeps, best.sweeps
    solve_s = statistics.median(times["solve"])
    print(f"solve: {solve_s:.2f} s, {sweeps['solve']} sweeps (median of {repeats} runs)")
    print("| agent | against perfect s (sweeps) | against its best response s (sweeps) | each against the solve |")
    print("|---|---|---|---|")
    for spec in specs:
        versus_s, best_s = statistics.median(times[spec]), statistics.median(times[spec + " best"])
        print(
            f"| {spec} | {versus_s:.2f} ({sweeps[spec]}) | {best_s:.2f} ({sweeps[spec + ' best']}) "
            f"| {versus_s / solve_s:.2f}x, {best_s / solve_s:.2f}x |"
        )


def one_sweep(rules, specs: list[str], perfect, repeats: int) -> None:
    """Median milliseconds of single sweeps of the largest layer pair: the solver's and each agent's kinds."""
    index = PositionIndex(rules)
    start, end = max(index.pair_ranges, key=lambda r: r[1] - r[0])
    pair = index.pairs[index.pair_ranges.index((start, end))]
    solver_graph = SweepGraph(index, start, end, form="runs")
    graph = solver_graph.graph
    values = np.array(load_or_solve(rules, progress=False).probabilities(), dtype=np.float64)
    solver_ms = _median_ms(repeats, solver_graph.sweep, values)
    print(f"largest pair {pair}: {end - start:,} positions; the solver's sweep {solver_ms:.0f} ms")
    print("| agent | against perfect ms | best response choosing ms | best response holding ms |")
    print("|---|---|---|---|")
    perfect = P.as_policy(perfect)
    for spec in specs:
        policy = P.as_policy(agent_policy(spec, rules, progress=False).policy)
        a, b = values.copy(), values.copy()
        chosen_a = P._checked_choices(graph, policy, "policy A", pair)
        chosen_b = P._checked_choices(graph, perfect, "policy B", pair)
        items = len(graph.work.items)
        buffers = SK.SweepBuffers(*(np.zeros(items) for _ in range(3)), np.zeros(2 * (end - start), np.float32))
        best_edges = np.empty((end - start) * graph.probabilities.shape[0], dtype=np.uint32)
        versus, alone = (P._graph_play(policy), P._graph_play(perfect)), (P._graph_play(policy), P._graph_play(None))
        times = (
            _median_ms(repeats, P._sweep, graph, a, b, versus, chosen_a, chosen_b, None, buffers),
            _median_ms(repeats, P._sweep, graph, a, b, alone, chosen_a, None, best_edges, buffers),
            _median_ms(repeats, P._sweep, graph, a, b, alone, chosen_a, best_edges, None, buffers),
        )
        print(f"| {spec} | " + " | ".join(f"{t:.0f}" for t in times) + " |", flush=True)


def _median_ms(repeats: int, sweep, *args) -> float:
    """The median milliseconds of ``sweep(*args)`` over ``repeats`` calls, after one to warm up."""
    sweep(*args)
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        sweep(*args)
        times.append(time.perf_counter() - began)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="finkel")
    parser.add_argument("--pieces", type=int, default=3)
    parser.add_argument("--agents", default=DEFAULT_AGENTS)
    parser.add_argument("--against-solve", type=int, default=0, metavar="N", help="time evaluations against a solve")
    parser.add_argument("--one-sweep", type=int, default=0, metavar="N", help="time single sweeps of the largest pair")
    args = parser.parse_args()
    rules = get_rules(args.rules, args.pieces)
    load_or_solve(rules, progress=False)
    warm = get_rules(args.rules, 2)
    load_or_solve(warm, progress=False)
    evaluate_policies(warm, agent_policy("greedy", warm, progress=False, cache=False).policy, None, progress=False)
    began = time.perf_counter()
    perfect = agent_policy("perfect", rules, progress=False, cache=False).policy
    print(f"perfect's policy asked in {time.perf_counter() - began:.1f} s")
    print(f"{rules.describe()}; {machine()}")
    if args.one_sweep:
        one_sweep(rules, args.agents.split(","), perfect, args.one_sweep)
        return
    if args.against_solve:
        against_solve(rules, args.agents.split(","), perfect, args.against_solve)
        return
    print(
        "| agent | exact win rate vs perfect | as light | as dark | exploitability (points) | decisions asked | "
        "asked in s | evaluation s (both) | peak memory so far |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for spec in args.agents.split(","):
        r = measure(spec, rules, perfect)
        print(
            f"| {r['agent']} | {r['win_rate']:.3f}% | {r['light']:.3f}% | {r['dark']:.3f}% | {r['exploitability']:.3f} "
            f"| {r['asked']:,} | {r['asking_seconds']:.1f}"
            + (" (whole)" if r["whole_policy"] else "")
            + f" | {r['evaluation_seconds']:.2f} "
            f"| {r['peak_gb']:.2f} GB |" + ("" if r["exact_policy"] else " (one draw)"),
            flush=True,
        )


if __name__ == "__main__":
    main()
