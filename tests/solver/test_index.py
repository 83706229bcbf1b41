import pytest
from urgym.solver import PositionIndex

from urgym import get_rules

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


@pytest.mark.parametrize("name", ["murray", "skiriuk"])
def test_paths_visiting_tiles_twice_are_refused_clearly(name):
    with pytest.raises(ValueError, match=r"visits some tiles twice.*finkel, blitz, masters, aseb"):
        PositionIndex(get_rules(name, 2))


def test_out_of_range_index():
    index = PositionIndex(get_rules("finkel", 1))
    with pytest.raises(ValueError, match=r"index 248 out of range 0\.\.247"):
        index.unrank(248)
