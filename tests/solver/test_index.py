import pytest
from urgym.solver import PositionIndex
from urgym.solver._index import KIND_TILES

from urgym import Position, get_rules

from .independent import all_positions

SOLVABLE = ("finkel", "blitz", "masters", "aseb")


def test_counts_match_the_published_solutions():
    assert PositionIndex(get_rules("finkel")).size == 137_913_936
    assert PositionIndex(get_rules("masters")).size == 501_032_952


@pytest.mark.parametrize("name", SOLVABLE)
@pytest.mark.parametrize("pieces", [1, 2])
def test_count_matches_brute_force(name, pieces):
    rules = get_rules(name, pieces)
    # brute force finds every valid position; the index also holds the one impossible "both finished" slot
    assert PositionIndex(rules).size == len(all_positions(rules)) + 1


@pytest.mark.parametrize("name", SOLVABLE)
def test_rank_and_unrank_are_inverse_on_every_position(name):
    rules = get_rules(name, 2)
    index = PositionIndex(rules)
    positions = all_positions(rules)
    ranks = {index.rank(p) for p in positions}
    assert len(ranks) == len(positions) and max(ranks) < index.size
    for p in positions:
        assert index.unrank(index.rank(p)) == p
        dark = index.unrank(index.rank(p), turn="dark")
        assert dark.turn == "dark" and index.rank(dark) == index.rank(p)


def test_layer_sizes_add_up():
    index = PositionIndex(get_rules("finkel", 3))
    assert sum(index.layer_sizes.values()) == index.size
    assert len(index.layer_sizes) == 16


@pytest.mark.parametrize("name", ["murray", "skiriuk", "finkel", "masters"])
@pytest.mark.parametrize("pieces", [1, 2])
def test_the_tile_layout_ranks_every_position_once(name, pieces):
    rules = get_rules(name, pieces)
    index = PositionIndex(rules, tiles=True)
    positions = all_positions(rules)
    assert index.size == len(positions) + 1  # and the impossible "both finished" slot, as in the dense layout
    ranks = [index.rank(p) for p in positions]
    assert len(set(ranks)) == len(positions) and min(ranks) >= 0 and max(ranks) < index.size
    for p, r in zip(positions, ranks, strict=True):
        assert index.unrank(r) == p


@pytest.mark.parametrize("name", ["finkel", "blitz"])
def test_the_tile_layout_lays_out_the_dense_layouts_pairs_and_layers(name):
    rules = get_rules(name, 3)
    dense, tiles = PositionIndex(rules), PositionIndex(rules, tiles=True)
    assert tiles.size == dense.size and tiles.pairs == dense.pairs
    assert tiles.pair_ranges == dense.pair_ranges and tiles.layer_sizes == dense.layer_sizes


def test_murray_and_skiriuk_take_the_tile_layout_and_their_pass_is_kept():
    rules = get_rules("murray", 1)
    index = PositionIndex(rules)
    assert index.kind == KIND_TILES and index.size == 800
    tile = rules.path[5]  # B2, walked on the way down and again on the way back
    first, second = rules.path.index(tile) + 1, len(rules.path) - rules.path[::-1].index(tile)
    assert first != second
    on_first = Position.from_pieces(rules, light=[first], dark=[])
    on_second = Position.from_pieces(rules, light=[second], dark=[])
    assert index.rank(on_first) != index.rank(on_second)
    assert index.unrank(index.rank(on_second)) == on_second


def test_out_of_range_index():
    index = PositionIndex(get_rules("finkel", 1))
    with pytest.raises(ValueError, match=r"index 248 out of range 0\.\.247"):
        index.unrank(248)
