"""The one human-against-agent session under the terminal and web shells."""

import itertools

import pytest
from urgym.agents import make_agent
from urgym.evaluation.play.session import GameSession, other_side

from urgym import Game, get_rules

RULES = get_rules("finkel", 2)


def play_out(session, choose=lambda moves: moves[-1]):
    """Play the session to its end, the person choosing with ``choose``; return every event."""
    session.advance()
    while session.awaiting:
        session.play(choose(session.game.legal_moves))
    return session.events


@pytest.mark.parametrize("side", ["light", "dark"])
def test_events_are_the_games_history_step_for_step(side):
    session = GameSession(RULES, make_agent("greedy"), side, seed=5)
    events = play_out(session)
    history = session.game.history
    assert session.game.is_over and len(events) == len(history)
    for event, step in zip(events, history, strict=True):
        assert (event.side, event.roll, event.move) == (step.side, step.roll, step.move)
    for before, after in itertools.pairwise(events):
        assert before.after == after.before  # each event starts where the last one ended
    assert any(e.move is None for e in events) and all(
        e.text == "no legal move: the turn passes" for e in events if e.move is None
    )


def test_forced_moves_are_played_for_the_person_and_only_theirs():
    session = GameSession(RULES, make_agent("random", seed=1), "light", seed=9)
    events = play_out(session, choose=lambda moves: moves[0])
    forced = [e for e in events if e.forced]
    assert forced and all(e.side == "light" and len(e.before.legal_moves(e.roll)) == 1 for e in forced)
    assert all(not e.forced for e in events if e.side == "dark")


def test_the_session_plays_the_game_its_seed_deals():
    """The same dice as every other loop of the package: a Game of the seed replays the session's moves."""
    session = GameSession(RULES, make_agent("first"), "dark", seed=3)
    events = play_out(session)
    game = Game(RULES, 3)
    for event in events:
        assert game.roll == event.roll
        game.play(event.move)
    assert game.is_over and game.winner == session.game.winner


def test_moves_out_of_turn_or_illegal_are_refused_and_the_record_names_both_players():
    session = GameSession(RULES, make_agent("greedy"), "light", seed=1)
    session.advance()
    legal = session.game.legal_moves
    with pytest.raises(ValueError, match="is not a legal move"):
        session.play(max(legal) + 1 if max(legal) + 1 <= RULES.length else -1)
    with pytest.raises(ValueError, match="is not a legal move"):
        session.play(True)
    play_out(session)
    with pytest.raises(ValueError, match="not your turn"):
        session.play(0)
    record = session.record()
    assert record.players == {"light": "human", other_side("light"): "greedy"}


def test_hints_from_a_given_table_are_exact_and_refused_out_of_turn(finkel3_table):
    session = GameSession(finkel3_table.rules, make_agent("greedy"), "light", seed=2, hints=finkel3_table)
    session.advance()
    while not session.awaiting:  # a game with a choice for the person
        session = GameSession(
            finkel3_table.rules, make_agent("greedy"), "light", seed=session.seed + 1, hints=finkel3_table
        )
        session.advance()
    hint = session.hint()
    position, roll = session.game.position, session.game.roll
    assert hint.exact and hint.values == finkel3_table.move_values(position, roll)
    assert hint.best == finkel3_table.best_move(position, roll)
    play_out(session)
    with pytest.raises(ValueError, match="game is over"):
        session.hint()


def test_without_a_table_or_a_network_hints_say_how_to_get_one(tmp_path, monkeypatch):
    monkeypatch.setenv("URGYM_CACHE", str(tmp_path))  # an empty cache
    session = GameSession(get_rules("blitz", 2), make_agent("random"), "light", seed=4)
    assert session.hint_source() is None
    with pytest.raises(LookupError, match="solve --rules blitz --pieces 2"):
        session.hint()


def test_a_game_that_opens_with_passes_tells_them_from_the_start():
    """Each pass starts where the game stood: the first from the start position, light to roll."""
    from urgym import Position

    for seed in range(200):
        session = GameSession(RULES, make_agent("first"), "dark", seed=seed)
        session.advance()
        if session.events and session.events[0].move is None:
            break
    else:
        pytest.fail("no seed of 200 opens with a pass")
    first = session.events[0]
    assert first.before == Position.start(RULES) and first.before.turn == first.side == "light"
    assert first.after.turn == "dark"


def test_a_damaged_cached_table_is_never_solved_again_by_the_game(private_cache):
    """The browser and terminal games read tables, never solve them, a damaged one included (it is moved aside)."""
    from urgym.evaluation.play.session import cached_table
    from urgym.solver.cache import cache_slots

    from urgym import get_rules

    rules = get_rules("aseb", 1)
    path, _ = cache_slots(rules)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"URGYMTBL" + b"\0" * 64)
    assert cached_table(rules) is None
    assert not path.exists() and path.with_name(path.name + ".corrupt").exists()  # moved aside, nothing solved
    path.with_name(path.name + ".corrupt").unlink()
