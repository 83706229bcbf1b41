"""Exact position counts from the tiles, against the index and brute force."""

import pytest
from urgym.solver import PositionIndex
from urgym.solver.tiles import TileLayout, count_positions

from urgym import get_rules

from .independent import all_positions


@pytest.mark.parametrize("name", ["finkel", "blitz", "masters", "aseb", "murray", "skiriuk"])
@pytest.mark.parametrize("pieces", [1, 2, 3])
def test_counts_match_the_index_layer_by_layer(name, pieces):
    rules = get_rules(name, pieces)
    count, index = count_positions(rules), PositionIndex(rules)
    assert count.positions == index.size and count.layers == index.layer_sizes
    assert count.largest_pair == max(end - start for start, end in index.pair_ranges)


@pytest.mark.parametrize("name", ["murray", "skiriuk", "finkel"])
def test_counts_match_brute_force(name):
    rules = get_rules(name, 2)
    assert count_positions(rules).positions == len(all_positions(rules)) + 1  # and the "both finished" slot


def test_murray_walks_the_middle_row_twice_and_has_no_private_tile():
    layout = TileLayout.of(get_rules("murray"))
    twice = [t.name for t in layout.tiles if len(t.own) == 2]
    assert sorted(twice) == [f"B{i}" for i in range(1, 8)]
    assert all(t.states == 5 for t in layout.tiles if t.name in twice)
    assert all(t.own and t.opp for t in layout.tiles)  # every tile is on both paths


def test_full_counts_need_no_enumeration():
    assert count_positions(get_rules("finkel")).positions == 137_913_936  # the published count
    murray = count_positions(get_rules("murray"))
    assert murray.positions > 2**36 and murray.largest_pair < murray.positions
    with pytest.raises(ValueError, match="scored counts"):
        TileLayout.of(get_rules("finkel", 2)).layer_size(3, 0)


def test_tiles_are_ordered_by_the_movers_furthest_position_on_them():
    """The order the tile layout ranks them in (fewer sweeps than board order); tiles off the mover's path first."""
    for name in ("murray", "skiriuk", "finkel"):
        layout = TileLayout.of(get_rules(name))
        furthest = [max(t.own, default=0) for t in layout.tiles]
        assert furthest == sorted(furthest), name
    finkel = TileLayout.of(get_rules("finkel"))
    assert [t.name for t in finkel.tiles[:6]] == ["C1", "C2", "C3", "C4", "C7", "C8"]  # the opponent's private tiles
