"""The solver's successor graph against one built position by position from ``Position``'s own moves.

The graph builder plays out one move list per run of positions that differ only in the opponent's private pieces
and derives the others' successors by stride; here every position is played out on its own.
"""

import numpy as np
import pytest
from urgym.solver._index import PositionIndex
from urgym.solver.graph import SweepGraph, pair_graph

from urgym import get_rules
from urgym.core import chance_outcomes


def reference_edges(index: PositionIndex, start: int, end: int) -> list[int]:
    rolls = chance_outcomes(index.rules)[0]
    edges = []
    for i in range(start, end):
        position = index.unrank(i)
        for roll in rolls:
            moves = position.legal_moves(int(roll)) if roll > 0 else ()
            for move in moves or (None,):
                after = position.play(int(roll), move)
                passes = after.turn != position.turn
                edges.append(index.rank(after) << 1 | passes)
    return edges


@pytest.mark.parametrize("name, pieces", [("finkel", 2), ("finkel", 3), ("masters", 2), ("aseb", 2), ("murray", 1)])
def test_every_edge_matches_the_position_by_position_graph(name, pieces):
    rules = get_rules(name, pieces)
    index = PositionIndex(rules)
    checked = 0
    for pair, (start, end) in zip(index.pairs, index.pair_ranges, strict=True):
        if pieces in pair or (pieces == 3 and end - start > 40_000):
            continue  # finished games have no graph; finkel 3's largest pairs take minutes in Python
        graph = pair_graph(index, start, end)
        assert graph.edges.tolist() == reference_edges(index, start, end), pair
        checked += end - start
    assert checked > 0


def test_runs_share_move_lists_in_the_dense_layout():
    """The runs are real: finkel 3's positions outnumber the move lists played out several times over."""
    index = PositionIndex(get_rules("finkel", 3))
    runs = sum(
        (end - start) // int(index.tables.choose_private[d]) for start, end, d in index.blocks[:, [0, 1, 7]].tolist()
    )
    assert index.size > 3 * runs


@pytest.mark.parametrize("name, pieces", [("finkel", 4), ("masters", 3), ("blitz", 3), ("aseb", 3), ("skiriuk", 2)])
def test_runs_build_the_same_graph_as_playing_out_every_position(name, pieces):

    index = PositionIndex(get_rules(name, pieces))
    for pair, (start, end) in zip(index.pairs, index.pair_ranges, strict=True):
        if pieces in pair:
            continue
        fast, slow = SweepGraph(index, start, end).graph, SweepGraph(index, start, end, form="played").graph
        assert np.array_equal(fast.edges, slow.edges), pair
        assert np.array_equal(fast.counts, slow.counts) and np.array_equal(fast.item_edge_end, slow.item_edge_end)


@pytest.mark.parametrize(
    "name, pieces", [("finkel", 3), ("finkel", 4), ("masters", 3), ("aseb", 3), ("murray", 2), ("skiriuk", 2)]
)
def test_the_solvers_run_graph_sweeps_to_the_same_values_to_the_last_bit(name, pieces):
    """One move list per run, each successor found by stride: the same sweep as over every position's edges."""
    import numba

    index = PositionIndex(get_rules(name, pieces))
    rng = np.random.default_rng(pieces)
    before = numba.get_num_threads()
    numba.set_num_threads(1)  # Gauss-Seidel on one thread: the order of every update is fixed
    try:
        for pair, (start, end) in zip(index.pairs, index.pair_ranges, strict=True):
            if pieces in pair:
                continue
            runs, positions = SweepGraph(index, start, end, form="runs"), SweepGraph(index, start, end)
            assert len(runs.graph.item_run_start) == len(positions.graph.item_run_start)  # one per work item, + 1
            assert runs.graph.item_run_start[-1] <= end - start == positions.graph.item_run_start[-1]
            assert len(positions.graph.strides) == 0  # runs of one position: no stride
            values = rng.random(index.size)
            a, b = values.copy(), values.copy()
            for _ in range(3):
                assert runs.sweep(a) == positions.sweep(b)  # the largest change and the ratio of changes
                assert np.array_equal(a, b) and np.array_equal(runs.change, positions.change)
            assert runs.residual(a) == positions.residual(b)
    finally:
        numba.set_num_threads(before)


def test_the_run_graph_takes_a_fraction_of_the_memory_on_the_dense_layout():

    index = PositionIndex(get_rules("finkel", 4))
    start, end = max(index.pair_ranges, key=lambda r: r[1] - r[0])
    runs, positions = SweepGraph(index, start, end, form="runs").graph, SweepGraph(index, start, end).graph
    size = lambda g: sum(a.nbytes for a in g if isinstance(a, np.ndarray))  # noqa: E731
    assert size(runs) < size(positions) / 3
    with pytest.raises(ValueError, match="unknown graph form 'dense'; one of runs, positions, played"):
        SweepGraph(index, start, end, form="dense")
