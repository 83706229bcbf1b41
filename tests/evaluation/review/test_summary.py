"""``review`` of many games: one player's accuracy, rating, error and luck over them, from records or folders."""

from __future__ import annotations

import json

import pytest
from urgym.commands.review import main as review_main
from urgym.evaluation.review.grades import accuracy_of, rating_of, review_game
from urgym.evaluation.review.summary import summarise_player
from urgym.evaluation.scoring.match import play_match
from urgym.evaluation.scoring.runner import RunOptions

from urgym import GameRecord


@pytest.fixture(scope="module")
def games(finkel3_table, tmp_path_factory):
    folder = tmp_path_factory.mktemp("games")
    play_match(
        "heuristic",
        "greedy",
        finkel3_table.rules,
        games=6,
        seed=2,
        table=finkel3_table,
        run=RunOptions(workers=1, progress=False, save_games=folder),
    )
    return folder


def test_the_summary_pools_every_decision(games, finkel3_table):
    paths = sorted(games.glob("game-*.json"))
    reviews = [(p.name, review_game(GameRecord.load(p), finkel3_table)) for p in paths]
    summary = summarise_player(reviews, "heuristic")
    assert [g.name for g in summary.games] == [p.name for p in paths]
    assert [g.side for g in summary.games] == ["light", "dark"] * 3  # sides alternate
    regrets = [
        m.regret
        for _, r in reviews
        for p in r.players
        if p.player == "heuristic"
        for m in r.moves
        if m.side == p.side and len(m.values) > 1
    ]
    assert summary.choices == len(regrets)
    assert summary.mean_regret == pytest.approx(sum(regrets) / len(regrets))
    # per standard game: finkel 3's is 2 x 3 pieces x 15 tiles / a mean roll of 2 = 45 rolls
    errors = [
        p.error * 45 / sum(m.side == p.side for m in r.moves)
        for _, r in reviews
        for p in r.players
        if p.player == "heuristic"
    ]
    assert summary.mean_error == pytest.approx(sum(errors) / len(errors))
    assert summary.accuracy == pytest.approx(accuracy_of(summary.mean_error))
    assert summary.rating == rating_of(summary.mean_error)
    kinds = [
        m.reason or "other"
        for _, r in reviews
        for p in r.players
        if p.player == "heuristic"
        for m in r.moves
        if m.side == p.side and m.category in ("inaccuracy", "mistake", "blunder")
    ]
    assert summary.reasons == {k: kinds.count(k) for k in set(kinds)}
    assert list(summary.reasons.values()) == sorted(summary.reasons.values(), reverse=True)
    assert sum(summary.counts.values()) == len(regrets)
    won = [r.winner == g.side for (_, r), g in zip(reviews, summary.games, strict=True)]
    assert [g.won for g in summary.games] == won
    with pytest.raises(ValueError, match="'greedy' and 'heuristic' play in every game"):
        summarise_player(reviews)
    with pytest.raises(ValueError, match="'nobody' does not play in it"):
        summarise_player(reviews, "nobody")


def test_review_of_a_folder(games, tmp_path, capsys):
    assert (
        review_main(
            [
                str(games),
                "--player",
                "greedy",
                "--json",
                str(tmp_path / "s.json"),
                "--plot",
                str(tmp_path / "s.png"),
                "--no-progress",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert out.startswith("greedy: 6 games") and "overall: accuracy" in out
    data = json.loads((tmp_path / "s.json").read_text())
    assert data["player"] == "greedy" and data["games"] == 6 and len(data["per_game"]) == 6
    assert (tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"
    two = sorted(str(p) for p in games.glob("game-*.json"))[:2]
    assert review_main([*two, "--player", "heuristic", "--no-progress"]) == 0
    assert "heuristic: 2 games" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--csv", "x.csv"], "--csv writes one game's review"),
        ([], "give the player to summarise (--player NAME)"),
    ],
)
def test_bad_summaries_are_one_line(games, argv, message, capsys):
    with pytest.raises(SystemExit) as info:
        review_main([str(games), *argv, "--no-progress"])
    assert info.value.code == 2 and message in capsys.readouterr().err


def test_an_empty_folder_and_mixed_rules_are_refused(games, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit):
        review_main([str(tmp_path / "empty")])
    assert "holds no game records" in capsys.readouterr().err
    other = GameRecord.load(next(games.glob("game-*.json")))
    from urgym import Game, get_rules

    game = Game(get_rules("finkel", 2), seed=0)
    while not game.is_over:
        game.play(game.legal_moves[0])
    GameRecord.from_game(game, other.players).save(tmp_path / "two.json")
    with pytest.raises(SystemExit):
        review_main([str(next(games.glob("game-*.json"))), str(tmp_path / "two.json"), "--player", "greedy"])
    assert "the games are of different rules" in capsys.readouterr().err


def test_a_summary_holds_a_game_or_two_at_a_time(games, finkel3_table):
    """Given the player, reviews stream: each is reduced to the player's part and dropped before the next is read."""
    import gc
    import weakref

    alive: set[int] = set()
    most = 0

    def reviews():
        nonlocal most
        for path in sorted(games.glob("game-*.json")):
            record = GameRecord.load(path)
            review = review_game(record, finkel3_table)
            weakref.finalize(record, alive.discard, id(record))
            alive.add(id(record))
            gc.collect()
            most = max(most, len(alive))
            yield path.name, review
            del record, review

    summary = summarise_player(reviews(), "heuristic")
    assert len(summary.games) == 6 and most <= 2  # the one being read and the one just summarised: never all six


def test_review_of_a_folder_reads_each_record_twice_at_most_and_keeps_none(games, monkeypatch, capsys):
    """The command's two passes (check, then review) load each record once per pass, never all at once."""
    loads = []
    real = GameRecord.load

    def counted(path, rules=None):
        loads.append(str(path))
        return real(path, rules)

    monkeypatch.setattr(GameRecord, "load", staticmethod(counted))
    assert review_main([str(games), "--player", "heuristic", "--no-progress"]) == 0
    assert len(loads) == 12 and len(set(loads)) == 6
    assert "heuristic" in capsys.readouterr().out


def test_a_downloads_folder_is_read_for_its_records_and_the_rest_left_out(games, tmp_path, capsys):
    import shutil

    downloads = tmp_path / "Downloads"
    downloads.mkdir()
    records = sorted(games.glob("game-*.json"))[:2]
    shutil.copy(records[0], downloads / "ur-game.json")  # the page's download, and the browser's second name
    shutil.copy(records[1], downloads / "ur-game (1).json")
    (downloads / "settings.json").write_text('{"theme": "dark"}')  # JSON that is no game record
    (downloads / "broken.json").write_text("{")
    (downloads / "photo.png").write_bytes(b"\x89PNG")
    assert review_main([str(downloads), "--player", "heuristic", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "heuristic: 2 games" in captured.out and "ur-game (1).json" in captured.out
    assert "left out" in captured.err and "settings.json" in captured.err and "broken.json" in captured.err
    assert "photo.png" not in captured.err
