"""Luck and skill from the solved table: the identity holds on every game, and perfect play has no error."""

import numpy as np
import pytest
from urgym.agents import make_agent
from urgym.evaluation.review.luck import analyse_game
from urgym.evaluation.scoring.runner import RunOptions

from urgym import Game
from urgym.records import GameRecord


def play(table, light, dark, seed, game_index):
    agents = {"light": make_agent(light, seed=seed), "dark": make_agent(dark, seed=seed + 1)}
    game = Game(table.rules, seed, game_index)
    while not game.is_over:
        game.play(agents[game.turn].select_move(game.position, game.roll))
    return GameRecord.from_game(game, {"light": light, "dark": dark})


@pytest.mark.parametrize(
    ("light", "dark"), [("random", "perfect"), ("expectimax:1", "greedy"), ("perfect", "heuristic")]
)
def test_identity_on_every_game(finkel3_table, light, dark):
    for g in range(15):
        analysis = analyse_game(play(finkel3_table, light, dark, 3, g), finkel3_table)
        assert abs(analysis.identity_gap()) < 1e-9
        assert all(r.error >= -1e-12 for r in analysis.rolls)
        assert analysis.luck_adjusted("light") + analysis.luck_adjusted("dark") == pytest.approx(1.0, abs=1e-12)
        result = {"light": analysis.result, "dark": 1 - analysis.result}
        for side in ("light", "dark"):
            other = "dark" if side == "light" else "light"
            assert analysis.luck_adjusted(side) == pytest.approx(
                result[side] - (analysis.luck(side) - analysis.luck(other)), abs=1e-9
            )


def test_perfect_play_has_no_error_and_the_start_value_as_adjusted_result(finkel3_table):
    analysis = analyse_game(play(finkel3_table, "perfect", "perfect", 1, 0), finkel3_table)
    assert analysis.error("light") == pytest.approx(0, abs=1e-12)
    assert analysis.error("dark") == pytest.approx(0, abs=1e-12)
    assert analysis.luck_adjusted("light") == pytest.approx(analysis.start_value, abs=1e-12)


def test_luck_is_unbiased_and_less_noisy_than_results(finkel3_table):
    """Over many games, the luck-adjusted result's mean agrees with the raw result's, with less spread."""
    raw, adjusted, luck = [], [], []
    for g in range(150):
        analysis = analyse_game(play(finkel3_table, "greedy", "perfect", 11, g), finkel3_table)
        raw.append(analysis.result)
        adjusted.append(analysis.luck_adjusted("light"))
        luck.append(analysis.luck("light") - analysis.luck("dark"))
    raw, adjusted, luck = map(np.asarray, (raw, adjusted, luck))
    assert abs(luck.mean()) < 3 * luck.std() / np.sqrt(len(luck))  # expectation zero
    assert adjusted.std() < 0.5 * raw.std()
    assert abs(raw.mean() - adjusted.mean()) < 3 * raw.std() / np.sqrt(len(raw))


def test_wrong_table_or_unfinished_game_is_refused(finkel3_table):
    game = Game(finkel3_table.rules, 0)
    game.play(game.legal_moves[0])
    analysis = analyse_game(GameRecord.from_game(game), finkel3_table)
    assert analysis.result is None and len(analysis.rolls) == len(game.history)
    with pytest.raises(ValueError, match="not finished"):
        analysis.identity_gap()
    with pytest.raises(ValueError, match="the record is of"):
        analyse_game(GameRecord.from_game(Game("finkel", 0, pieces=2)), finkel3_table)


def test_match_reports_an_unbiased_luck_adjusted_win_rate(finkel3_table):
    """In match play the luck-adjusted win rate comes from each game's errors; both loops agree."""
    from urgym.evaluation.scoring.match import play_match

    start = finkel3_table.win_probability(__import__("urgym").Position.start(finkel3_table.rules), "light")
    perfect = play_match(
        "perfect",
        "perfect",
        finkel3_table.rules,
        games=200,
        seed=2,
        table=finkel3_table,
        run=RunOptions(workers=1, progress=False),
    )
    adjusted = perfect.agents[0].luck_adjusted
    assert adjusted.mean == pytest.approx((start + (1 - start)) / 2, abs=1e-12)  # sides alternate
    assert adjusted.high - adjusted.low == pytest.approx(
        2 * 1.959964 * (start - 0.5) * (200 / 199) ** 0.5 / 200**0.5, rel=1e-3
    )
    for pair in (("greedy", "perfect"), ("random", "greedy")):
        match = play_match(
            *pair,
            finkel3_table.rules,
            games=2000,
            seed=4,
            table=finkel3_table,
            run=RunOptions(workers=1, progress=False),
        )
        raw, adj = match.agents[0].wins, match.agents[0].luck_adjusted
        low, high = raw.interval
        assert adj.high - adj.low < 0.6 * (high - low)  # far more precise
        assert low <= adj.mean <= high  # they estimate the same win rate (the raw one with its own noise)
    python_loop = play_match(
        "greedy",
        "perfect",
        finkel3_table.rules,
        games=40,
        seed=4,
        table=finkel3_table,
        use_numba=False,
        run=RunOptions(workers=1, progress=False),
    )
    numba_loop = play_match(
        "greedy",
        "perfect",
        finkel3_table.rules,
        games=40,
        seed=4,
        table=finkel3_table,
        run=RunOptions(workers=1, progress=False),
    )
    assert python_loop.agents[0].luck_adjusted.mean == pytest.approx(numba_loop.agents[0].luck_adjusted.mean, abs=1e-12)


@pytest.mark.parametrize(
    ("pair", "use_numba"),
    [(("greedy", "perfect"), True), (("greedy", "perfect"), False), (("expectimax:1", "random"), False)],
)
def test_saved_games_of_a_match_replay_to_its_figures(finkel3_table, tmp_path, pair, use_numba):
    """Evaluate --save-games.

    Every game's record replays to the match's winner, the identity holds on each to 1e-9, and their luck-adjusted
    results average to the match's figure (per side too).
    """
    from urgym.evaluation.scoring.match import play_match

    games = 24
    match = play_match(
        *pair,
        finkel3_table.rules,
        games=games,
        seed=8,
        table=finkel3_table,
        use_numba=use_numba,
        run=RunOptions(workers=2, progress=False, save_games=tmp_path / "games"),
    )
    files = sorted((tmp_path / "games").glob("game-*.json"))
    assert [f.name for f in files] == [f"game-{g:06d}.json" for g in range(games)]
    adjusted = {"light": [], "dark": []}
    for g, path in enumerate(files):
        record = GameRecord.load(path)
        agent0_side = "light" if g % 2 == 0 else "dark"
        assert record.players[agent0_side] == match.agents[0].spec
        assert (record.winner == agent0_side) == (match.winners[g] == 0)
        assert record.seed == 8 and record.game == g
        analysis = analyse_game(record, finkel3_table)
        assert abs(analysis.identity_gap()) < 1e-9
        adjusted[agent0_side].append(analysis.luck_adjusted(agent0_side))
    stats = match.agents[0]
    assert np.mean(adjusted["light"] + adjusted["dark"]) == pytest.approx(stats.luck_adjusted.mean, abs=1e-9)
    assert np.mean(adjusted["light"]) == pytest.approx(stats.luck_adjusted_as_light.mean, abs=1e-9)
    assert np.mean(adjusted["dark"]) == pytest.approx(stats.luck_adjusted_as_dark.mean, abs=1e-9)


def test_save_games_refuses_a_file_before_playing(finkel3_table, tmp_path):
    from urgym.evaluation.scoring.match import play_match

    (tmp_path / "taken").write_text("")
    with pytest.raises(ValueError, match="it is a file"):
        play_match(
            "random",
            "greedy",
            finkel3_table.rules,
            games=2,
            table=finkel3_table,
            run=RunOptions(workers=1, progress=False, save_games=tmp_path / "taken"),
        )


def test_a_move_log_too_short_plays_again_without_counting_twice(finkel3_table, tmp_path, monkeypatch):
    import urgym.evaluation.scoring.match as match_module

    def run(folder):
        return match_module.play_match(
            "greedy",
            "perfect",
            finkel3_table.rules,
            games=6,
            seed=3,
            table=finkel3_table,
            run=RunOptions(workers=1, progress=False, save_games=tmp_path / folder),
        )

    roomy = run("roomy")
    monkeypatch.setattr(match_module, "LOG_PER_GAME", 1)
    cramped = run("cramped")
    assert cramped.agents[0].regret.decisions == roomy.agents[0].regret.decisions
    assert cramped.agents[0].luck_adjusted == roomy.agents[0].luck_adjusted
    for g in range(6):
        name = f"game-{g:06d}.json"
        assert (tmp_path / "cramped" / name).read_text() == (tmp_path / "roomy" / name).read_text()
