"""Hand-built positions for every rule of the game (docs/rules.md), on each rule set."""

import pytest

from urgym import RULE_SET_NAMES, Position, get_rules

FOUR_DICE_SETS = ("finkel", "blitz", "aseb", "murray", "skiriuk")


def pos(name, light=(), dark=(), lh=None, dh=None, turn="light", pieces=3):
    return Position.from_pieces(get_rules(name, pieces), light, dark, lh, dh, turn)


@pytest.mark.parametrize("name", RULE_SET_NAMES)
def test_entering_puts_a_piece_at_the_roll(name):
    start = Position.start(get_rules(name, 3))
    for roll in [r for r in get_rules(name).rolls if r > 0]:
        assert start.legal_moves(roll) == (0,)
        after = start.play(roll, 0)
        assert after.pieces("light") == (roll,)
        assert after.home("light") == 2


@pytest.mark.parametrize("name", RULE_SET_NAMES)
def test_bear_off_needs_the_exact_roll(name):
    length = get_rules(name).length
    p = pos(name, light=[length - 1], lh=0, dh=2, pieces=2)  # one piece scored already
    assert p.legal_moves(2) == (length - 1,)
    after = p.play(2, length - 1)
    assert after.scored("light") == 2 and after.pieces("light") == () and after.winner == "light"
    assert p.legal_moves(3) == () and p.legal_moves(4) == ()  # overshooting is illegal


@pytest.mark.parametrize("name", RULE_SET_NAMES)
def test_bear_off_never_earns_an_extra_roll(name):
    length = get_rules(name).length
    p = pos(name, light=[length - 1], lh=1, dh=3)
    result = p.move_result(2, length - 1)
    assert result.scored and not result.extra_roll and result.position.turn == "dark"


@pytest.mark.parametrize("name", RULE_SET_NAMES)
def test_own_piece_blocks(name):
    p = pos(name, light=[1, 3], lh=1)
    assert 1 not in p.legal_moves(2)
    assert p.legal_moves(2) == (0, 3)  # entering to 2 and 3 -> 5 stay legal
    assert 0 not in pos(name, light=[2]).legal_moves(2)


@pytest.mark.parametrize("name", RULE_SET_NAMES)
def test_rosette_grants_extra_roll(name):
    after = Position.start(get_rules(name, 3)).move_result(4, 0)  # A1, position 4, is a rosette
    assert after.landed_on_rosette and after.extra_roll
    assert after.position.turn == "light"


@pytest.mark.parametrize("name", RULE_SET_NAMES)
def test_plain_move_passes_the_turn(name):
    after = Position.start(get_rules(name, 3)).move_result(1, 0)
    assert not after.extra_roll and after.position.turn == "dark"


@pytest.mark.parametrize("name", ["finkel", "blitz", "masters", "aseb"])
def test_capture_on_a_shared_tile_sends_the_piece_home(name):
    p = pos(name, light=[5], dark=[7], lh=2, dh=2)  # path position 7 is tile B3 for both sides
    result = p.move_result(2, 5)
    assert result.captured
    assert result.position.pieces("dark") == () and result.position.home("dark") == 3
    assert result.position.pieces("light") == (7,)
    # capture grants an extra roll only in blitz
    assert result.extra_roll == (name == "blitz")
    assert result.position.turn == ("light" if name == "blitz" else "dark")


@pytest.mark.parametrize("name, safe", [("finkel", True), ("aseb", True), ("masters", False), ("blitz", False)])
def test_rosette_in_the_war_zone(name, safe):
    p = pos(name, light=[6], dark=[8], lh=2, dh=2)  # position 8 is the central rosette B4
    if safe:
        assert 6 not in p.legal_moves(2)
    else:
        result = p.move_result(2, 6)
        assert result.captured and result.landed_on_rosette and result.extra_roll


def test_private_tiles_never_capture():
    p = pos("finkel", light=[1], dark=[3], lh=2, dh=2)  # A4->A2 for light, C2 holds dark's piece
    result = p.move_result(2, 1)
    assert not result.captured and result.position.pieces("dark") == (3,)


def test_masters_capture_on_the_far_side_of_the_board():
    # Light's path position 12 is C7; dark reaches C7 at its own position 16.
    p = pos("masters", light=[10], dark=[16], lh=2, dh=2)
    result = p.move_result(2, 10)
    assert result.captured and result.landed_on_rosette and result.extra_roll
    assert result.position.home("dark") == 3


@pytest.mark.parametrize("name", ["finkel", "blitz", "aseb", "murray", "skiriuk"])
def test_roll_zero_passes_the_turn(name):
    p = Position.start(get_rules(name, 2))
    assert p.legal_moves(0) == ()
    assert p.play(0, None).turn == "dark"
    assert p.play(0, None).home("light") == 2


def test_masters_never_rolls_zero():
    p = Position.start("masters")
    with pytest.raises(ValueError, match=r"roll 0 is impossible.*possible rolls: \[1, 2, 3, 4\]"):
        p.legal_moves(0)


def test_no_legal_move_passes_the_turn():
    p = pos("finkel", light=[14], lh=0, dh=3)
    assert p.legal_moves(3) == ()
    assert p.play(3, None).turn == "dark"


def test_skiriuk_blocks_by_tile_not_by_path_position():
    # Skiriuk's positions 17..23 run back along B7..B1: position 22 is B2, the tile of position 6.
    p = pos("skiriuk", light=[6, 20], lh=1)
    assert 20 not in p.legal_moves(2)
    p = pos("skiriuk", light=[4], dark=[22], lh=2, dh=2)
    result = p.move_result(2, 4)  # light moves onto B2, where dark stands at its position 22
    assert result.captured and result.position.home("dark") == 3


def test_murray_enters_the_opponents_home_row():
    # Murray's positions 24..27 are C1..C4, dark's first four tiles (dark's positions 4..1).
    safe = pos("murray", light=[23], dark=[4], lh=2, dh=2)
    assert safe.legal_moves(1) == (0,)  # C1 is a safe rosette, with dark on it
    capture = pos("murray", light=[23], dark=[3], lh=2, dh=2)
    result = capture.move_result(2, 23)
    assert result.captured and result.position.pieces("light") == (25,)


def test_tiles_visited_twice_cannot_hold_two_pieces():
    with pytest.raises(ValueError, match="two pieces on tile B2"):
        pos("skiriuk", light=[6, 22])
    with pytest.raises(ValueError, match="two pieces on tile C1"):
        pos("murray", light=[24], dark=[4])


def test_winning_move_ends_the_game():
    p = pos("finkel", light=[14], dark=[14], lh=0, dh=0, pieces=1)
    result = p.move_result(1, 14)
    assert result.won and result.position.winner == "light" and result.position.is_over
    assert result.position.legal_moves(1) == ()
    with pytest.raises(ValueError, match="the game is over: light has won"):
        result.position.play(1, 0)


def test_a_side_with_everything_scored_has_won():
    p = Position.from_pieces(get_rules("finkel", 2), light=[], dark=[3], light_home=0, dark_home=1)
    assert p.winner == "light" and p.scored("light") == 2


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(light=[5], dark=[5]), "two pieces on tile B1"),
        (dict(light=[0]), "path positions run from 1 to 14"),
        (dict(light=[15]), "path positions run from 1 to 14"),
        (dict(light=[2, 2]), "two pieces at the same path position"),
        (dict(light=[1, 2], light_home=2), "more than the 3 pieces"),
        (dict(light_home=-1), "light_home must be an integer of at least 0"),
        (dict(light_home=0, dark_home=0), "both sides have scored every piece"),
        (dict(turn="white"), "turn must be 'light' or 'dark'"),
    ],
)
def test_impossible_positions_say_why(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Position.from_pieces(get_rules("finkel", 3), **kwargs)


def test_illegal_moves_list_the_legal_ones():
    p = pos("finkel", light=[1, 3], lh=1)
    with pytest.raises(ValueError, match=r"illegal move 1 for roll 2 \(light to move\); legal moves: \[0, 3\]"):
        p.play(2, 1)
    with pytest.raises(ValueError, match="a player must move if they can"):
        p.play(2, None)
    with pytest.raises(ValueError, match="no move is legal: pass with move=None"):
        pos("finkel", light=[14], lh=0).play(3, 14)


def test_positions_are_values():
    a = pos("finkel", light=[1], dark=[2])
    b = pos("finkel", light=[1], dark=[2])
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != pos("finkel", light=[1], dark=[2], turn="dark")
    assert a != pos("blitz", light=[1], dark=[2])
    with pytest.raises(AttributeError):
        a.turn = "dark"


def test_from_code_round_trips_and_rejects_garbage():
    p = pos("masters", light=[3, 12], dark=[6], lh=1, dh=1, turn="dark")
    assert Position.from_code(p.rules, p.code) == p
    with pytest.raises(ValueError, match="beyond path position 16"):
        Position.from_code(p.rules, 1 << 20)
    with pytest.raises(ValueError, match="outside the packed format"):
        Position.from_code(p.rules, -5)
    with pytest.raises(ValueError, match="more than the 3 pieces"):
        Position.from_code(p.rules, 0b1111)


def test_side_accessors_follow_the_turn():
    p = pos("finkel", light=[1, 9], dark=[6], lh=1, dh=0, turn="dark")
    assert p.pieces("light") == (1, 9) and p.pieces("dark") == (6,)
    assert p.home("light") == 1 and p.home("dark") == 0
    assert p.scored("light") == 0 and p.scored("dark") == 2
    assert p.tiles("light") == ("A4", "B5") and p.tiles("dark") == ("B2",)
    with pytest.raises(ValueError, match="side must be 'light' or 'dark'"):
        p.home("white")


def test_board_text_shows_pieces_on_their_tiles():
    p = pos("finkel", light=[1], dark=[4, 9], lh=2, dh=1)
    lines = str(p).splitlines()
    assert lines[1] == "  A  [*][.][.][L]      [*][.]"
    assert lines[2] == "  B  [.][.][.][*][D][.][.][.]"
    assert lines[3] == "  C  {D}[.][.][.]      [*][.]"  # C1 is a rosette: the piece keeps its mark
    assert "home 2, scored 0" in lines[4] and "home 1, scored 0" in lines[5]
    aseb = str(Position.start("aseb")).splitlines()
    assert aseb[2].count("[") == 12 and aseb[1].count("[") == 4


@pytest.mark.parametrize("code", [-12345, -1, 2**63, 1 << 14, 15 << 54, 1.5, "3", None, True])
def test_a_code_that_is_no_position_is_refused_even_by_the_plain_constructor(code):
    rules = get_rules("finkel", 2)
    with pytest.raises(ValueError, match="position code"):
        Position(rules, code)


def test_the_plain_constructor_needs_rules():
    with pytest.raises(ValueError, match="rules must be a Rules"):
        Position("finkel", 0)


@pytest.mark.parametrize("name", ["finkel", "murray", "masters"])
def test_check_codes_agrees_with_from_code_on_every_code(name):
    """The vectorised screen accepts exactly the codes Position.from_code accepts."""
    import numpy as np

    from urgym import core
    from urgym.position import check_codes

    rules = get_rules(name, 3)
    rng = np.random.default_rng(4)

    def random_mask():
        return core.positions_mask(rng.choice(rules.length, int(rng.integers(5)), replace=False) + 1)

    near_valid = [
        core.pack(random_mask(), random_mask(), int(rng.integers(4)), int(rng.integers(4)), int(rng.integers(2)))
        for _ in range(3000)
    ]
    accepted = 0
    for code in near_valid:
        try:
            Position.from_code(rules, code)
            valid = True
        except ValueError:
            valid = False
        accepted += valid
        if valid:
            check_codes(rules, np.array([code]))
        else:
            with pytest.raises(ValueError):
                check_codes(rules, np.array([code]))
    assert 20 < accepted < 2980  # both kinds were tried
