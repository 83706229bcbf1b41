"""The heuristic gain against the paper's worked example (Raposo & Lamont 2023, Figure 8, Tables 3, 5, 6)."""

import pytest
from urgym.agents import GainAgent, gain_table

from tests.agents.positions import decision_positions
from urgym import Position

P0, P1, P2, P3, P4 = 1 / 16, 4 / 16, 6 / 16, 4 / 16, 1 / 16


def figure_8() -> Position:
    """Black (here light) to move: piece A at home, piece B on tile 2; grey on shared tile 6 and its own tile 3.

    The other pieces are scored, so that A and B are the only pieces black can move and grey has none at home.
    """
    return Position.from_pieces("finkel", light=[2], dark=[6, 3], light_home=1, dark_home=0)


# Table 3 of the paper: W, A, C, G of each sequence.
TABLE_3 = {
    "AA": (1.35, 0.14, -5.13, -3.64),
    "AB": (1.24, 0.02, -4.25, -2.99),
    "BA": (2.61, 0.38, -4.25, -1.27),
    "BB": (2.61, 0.84, -9.38, -5.92),
}


def test_pieces_are_lettered_from_the_least_advanced():
    table = gain_table(figure_8(), threats="paper")
    assert table.pieces == (0, 2)
    assert sorted(s.name for s in table.sequences) == ["AA", "AB", "BA", "BB"]
    assert table["BA"].sources == (2, 0)


@pytest.mark.parametrize("name", ["AA", "AB", "BA", "BB"])
def test_walking_and_capture_reproduce_table_3(name):
    row = gain_table(figure_8(), threats="paper")[name]
    walking, _, capture, _ = TABLE_3[name]
    assert row.walking == pytest.approx(walking, abs=0.01)
    assert row.capture == pytest.approx(capture, abs=0.01)


@pytest.mark.parametrize("name", ["AA", "AB", "BA"])
def test_attack_and_gain_reproduce_table_3(name):
    row = gain_table(figure_8(), threats="paper")[name]
    _, attack, _, total = TABLE_3[name]
    assert row.attack == pytest.approx(attack, abs=0.01)
    assert row.total == pytest.approx(total, abs=0.01)


def test_bb_attack_is_the_sum_of_table_6_terms():
    # Table 6 lists two ways for B to capture on tile 6 in BB: roll 4, and 2 then 2 through the rosette.
    # Table 3 prints only the second (0.84); the sum of Eq. 11 over both is 6/16 + 0.84 = 1.22.
    row = gain_table(figure_8(), threats="paper")["BB"]
    assert row.attack == pytest.approx(6 * P4 + 6 * P2 * P2, abs=1e-12)
    assert row.total == pytest.approx(TABLE_3["BB"][0] + row.attack + TABLE_3["BB"][2], abs=0.01)


def test_walking_terms_of_table_5_exactly():
    table = gain_table(figure_8(), threats="paper")
    assert table["AA"].walking == pytest.approx(2 - 2 * P2 + 2 * P4 - (4 + 4) * P4 * P4, abs=1e-12)
    assert table["AB"].walking == pytest.approx(2 - 2 * P2 + 2 * P4 - (4 + 2) * P4 * P2, abs=1e-12)
    assert table["BA"].walking == pytest.approx(2 + 2 * P2 - (2 + 4) * P2 * P4, abs=1e-12)


def test_capture_terms_of_table_6_exactly():
    tile5 = 5 * (P2 + P1 * P1)  # grey from its tile 3: roll 2, or 1 to its rosette then 1
    tile6 = 6 * (P3 + P1 * P2)
    tile7 = 7 * (P4 + P1 * P3)
    table = gain_table(figure_8(), threats="paper")
    assert table["AA"].capture == pytest.approx(-(tile5 + tile6 + tile7), abs=1e-12)
    assert table["BB"].capture == pytest.approx(-(2 * tile5 + 2 * tile6 + tile7), abs=1e-12)


def test_all_threats_adds_the_pieces_the_paper_leaves_out():
    # In AA black may end on tile 7, just ahead of grey's piece on 6 (a roll of 1), and on tile 6 after
    # capturing that piece, which may come back: from home, 4 to grey's rosette then 2.
    paper = gain_table(figure_8(), threats="paper")["AA"].capture
    full = gain_table(figure_8(), threats="all")["AA"].capture
    assert full == pytest.approx(paper - 7 * P1 - 6 * P4 * P2, abs=1e-12)


@pytest.mark.parametrize("threats", ["paper", "all"])
def test_picks_ba(threats):
    assert gain_table(figure_8(), threats=threats).best().name == "BA"


def test_a_known_roll_fixes_the_first_move():
    table = gain_table(figure_8(), roll=4, threats="paper")
    # With a 4, A enters onto the rosette and moves again; B captures on 6. Both first moves are legal.
    assert {s.name[0] for s in table.sequences} == {"A", "B"}
    ba = table["BA"]
    assert ba.walking == pytest.approx(4.0)
    assert ba.attack == pytest.approx(6.0)
    # Roll 2: A cannot enter onto B's tile, so every sequence starts with B.
    assert {s.name[0] for s in gain_table(figure_8(), roll=2).sequences} == {"B"}


def test_agent_plays_legal_moves_in_every_rule_set():
    agent = GainAgent()
    for name in ("finkel", "masters", "blitz", "aseb", "murray"):
        for position, roll in decision_positions(name, 10, seed=3):
            assert agent.select_move(position, roll) in position.legal_moves(roll)


def test_agent_follows_the_best_sequence():
    agent = GainAgent()
    for position, roll in decision_positions("finkel", 15, seed=4):
        best = gain_table(position, roll).best()
        assert agent.select_move(position, roll) == best.sources[0]


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown threats"):
        gain_table(figure_8(), threats="some")
    with pytest.raises(ValueError, match="roll 7 is impossible"):
        gain_table(figure_8(), roll=7)
    with pytest.raises(ValueError, match="max_moves"):
        GainAgent(max_moves=0)
    with pytest.raises(KeyError, match="no sequence 'CC'"):
        gain_table(figure_8())["CC"]


@pytest.mark.parametrize("rules_name", ["finkel", "blitz", "masters", "aseb"])
@pytest.mark.parametrize(("max_moves", "threats"), [(2, "all"), (2, "paper"), (1, "all"), (3, "all")])
def test_the_gain_equals_the_plain_reference_term_for_term_and_move_for_move(rules_name, max_moves, threats):
    """One gain in the package (numba); the tests' plain walk of the paper's equations gives the same floats."""
    from tests.agents.reference_gain import reference_gain_table
    from urgym.batch import Decisions

    agent = GainAgent(max_moves=max_moves, threats=threats)
    found = decision_positions(rules_name, 300, seed=max_moves)
    for position, roll in found[:40]:
        for given in (roll, None):
            ours, plain = (
                gain_table(position, given, max_moves, threats),
                reference_gain_table(position, given, max_moves, threats),
            )
            assert ours == plain, (position, given)
    rules = found[0][0].rules
    batched = agent.select_moves(rules, Decisions.of_positions(found))
    best = [reference_gain_table(p, r, max_moves, threats).best().sources[0] for p, r in found]
    assert batched.tolist() == best
