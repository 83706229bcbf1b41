import pytest

from agents import cli as play_cli
from agents import play


def run(argv, answers):
    out: list[str] = []
    replies = iter(answers)
    play_cli.main(argv, read=lambda prompt: next(replies), write=out.append)
    return "\n".join(out)


def test_a_whole_game_against_an_agent():
    text = run(["--rules", "finkel", "--pieces", "2", "--agent", "first", "--seed", "1"], ["1"] * 500)
    assert "You rolled" in text
    assert "first (dark) rolled" in text
    assert text.rstrip().endswith(("You won!", "first won."))


def test_bad_input_is_explained_and_quit_stops():
    text = run(["--pieces", "2", "--agent", "random", "--seed", "2"], ["9", "move", "q"])
    assert "'9' is not a move" in text
    assert "'move' is not a move" in text
    assert "You quit the game." in text


def test_hint_without_a_table_says_how_to_get_one(private_cache):
    text = run(["--rules", "blitz", "--pieces", "2", "--agent", "random", "--seed", "3"], ["h", "q"])
    assert "solve --rules blitz --pieces 2" in text


def test_hint_gives_the_perfect_move_and_every_chance(finkel3_table):
    text = run(["--pieces", "3", "--agent", "greedy", "--seed", "4"], ["h", "q"])
    assert "Your winning chance before this roll:" in text
    assert "<- perfect move" in text


def test_describes_moves():
    from urgym import Position

    position = Position.from_pieces("finkel", light=[1, 3], dark=[6], light_home=5, dark_home=6)
    assert play.describe_move(position, 3, 3) == "piece on A2 (3) -> B2 (6)  [captures]"
    assert "rosette, rolls again" in play.describe_move(position, 3, 1)


def test_play_saves_a_record_that_replays(tmp_path):
    from agents.cli import main
    from urgym import GameRecord

    lines: list[str] = []
    path = tmp_path / "games" / "mine.json"
    assert main(["--agent", "first", "--pieces", "2", "--seed", "4", "--save", str(path)],
                read=lambda prompt: "1", write=lines.append) == 0
    record = GameRecord.load(path)
    assert record.players == {"light": "human", "dark": "first"} and record.seed == 4
    assert record.replay().is_over and f"Game record written to {path}" in lines[-1]
    quit_path = tmp_path / "quit.json"
    answers = iter(["1", "q"])
    main(["--agent", "first", "--pieces", "2", "--seed", "4", "--save", str(quit_path)],
         read=lambda prompt: next(answers), write=lines.append)
    unfinished = GameRecord.load(quit_path)
    assert unfinished.winner is None and 0 < len(unfinished.steps) < len(record.steps)
    with pytest.raises(SystemExit):
        main(["--save", str(tmp_path)], read=lambda prompt: "q", write=lines.append)
