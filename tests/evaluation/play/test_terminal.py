import re

import pytest
from urgym.commands import play as play_cli
from urgym.evaluation.play import terminal as play


def run(argv, answers):
    out: list[str] = []
    replies = iter(answers)
    play_cli.main(argv, read=lambda prompt: next(replies), write=out.append)
    return "\n".join(out)


def test_a_whole_game_against_an_agent():
    text = run(["--rules", "finkel", "--pieces", "2", "--agent", "first", "--seed", "1"], ["1"] * 500)
    assert "You rolled" in text
    assert "first (dark) rolled" in text
    end = text.rstrip().splitlines()[-2:]
    assert re.fullmatch(r"(You won!|first won\.) Pieces borne off: 2 to [01]\.", end[0]), end
    assert end[1].startswith("To review a game move by move") and "review game.json" in end[1]


def test_bad_input_is_explained_and_quit_stops():
    text = run(["--pieces", "2", "--agent", "random", "--seed", "2"], ["9", "move", "q"])
    assert "'9' is not a move" in text
    assert "'move' is not a move" in text
    assert "You quit the game." in text


def test_hint_without_a_table_says_how_to_get_one(tmp_path, monkeypatch):
    monkeypatch.setenv("URGYM_CACHE", str(tmp_path))  # its own cache: another test may have solved blitz-2 before
    text = run(["--rules", "blitz", "--pieces", "2", "--agent", "random", "--seed", "3"], ["h", "q"])
    assert "solve --rules blitz --pieces 2" in text


def test_hint_gives_the_perfect_move_and_every_chance(finkel3_table):
    text = run(["--pieces", "3", "--agent", "greedy", "--seed", "4"], ["h", "q"])
    assert "Your winning chance before this roll:" in text
    assert "<- perfect move" in text
    # the other moves' cost in win-% points, as the page and the review say it (not "(-1.7%)")
    assert re.search(r"\(\d+\.\d points less\)", text) and not re.search(r"\(-\d+\.\d%\)", text)


def test_describes_moves():
    from urgym import Position

    position = Position.from_pieces("finkel", light=[1, 3], dark=[6], light_home=5, dark_home=6)
    assert play.describe_move(position, 3, 3) == "a2b2x: A2 to B2 [captures]"
    assert play.describe_move(position, 3, 1) == "a4a1+: A4 to A1 [rosette, rolls again]"
    assert play.describe_move(position, 2, 0) == "a5a3: enter a piece onto A3"


def test_dark_moves_are_named_with_dark_tiles_as_review_and_rgn_name_them():
    """`play --side dark` used to name dark's moves with light's tiles ("A1" for a piece landing on C1)."""
    from urgym import Position
    from urgym.notation import move_text

    position = Position.from_pieces("finkel", light=[], dark=[2, 13], light_home=7, dark_home=5, turn="dark")
    assert play.describe_move(position, 4, 0) == "c5c1+: enter a piece onto C1 [rosette, rolls again]"
    assert play.describe_move(position, 2, 13) == "c8c6: bear off from C8"
    for roll, source in ((4, 0), (2, 13), (2, 2)):
        assert play.describe_move(position, roll, source).split(":")[0] == move_text(position, roll, source)


def test_a_move_can_be_typed_as_its_notation_and_a_single_legal_move_plays_itself(tmp_path):
    from urgym import GameRecord

    out: list[str] = []
    typed: list[str] = []

    def read(prompt):
        listed = [line for line in out if line.startswith("  2) ")]
        if listed and not typed:  # the first choice of two or more moves: type the second one's notation
            typed.append(listed[-1][5:].split(":")[0])
            return typed[-1]
        return "1"

    path = tmp_path / "game.json"
    play_cli.main(
        ["--pieces", "2", "--agent", "first", "--seed", "5", "--side", "dark", "--save", str(path)],
        read=read,
        write=out.append,
    )
    text = "\n".join(out)
    assert typed and "is not a move" not in text
    record = GameRecord.load(path)
    played = [step for step in record.steps if step.side == "dark" and step.move is not None]
    assert record.replay().is_over and "your only move, played" in text
    notations = [line for line in out if line.startswith("You rolled") and "only move" in line]
    assert all(":" in line for line in notations) and len(played) > 0


def test_play_saves_a_record_that_replays(tmp_path):
    from urgym.commands.play import main

    from urgym import GameRecord

    lines: list[str] = []
    path = tmp_path / "games" / "mine.json"
    assert (
        main(
            ["--agent", "first", "--pieces", "2", "--seed", "4", "--save", str(path)],
            read=lambda prompt: "1",
            write=lines.append,
        )
        == 0
    )
    record = GameRecord.load(path)
    assert record.players == {"light": "human", "dark": "first"} and record.seed == 4
    assert record.replay().is_over and f"Game record written to {path}" in lines[-1]
    quit_path = tmp_path / "quit.json"
    answers = iter(["1", "q"])
    main(
        ["--agent", "first", "--pieces", "2", "--seed", "4", "--save", str(quit_path)],
        read=lambda prompt: next(answers),
        write=lines.append,
    )
    unfinished = GameRecord.load(quit_path)
    assert unfinished.winner is None and 0 < len(unfinished.steps) < len(record.steps)
    with pytest.raises(SystemExit):
        main(["--save", str(tmp_path)], read=lambda prompt: "q", write=lines.append)


def test_without_a_table_the_hint_is_the_shipped_networks_estimate_and_says_so(private_cache):
    from urgym.agents.models import shipped_models

    if ("blitz", 5) not in shipped_models():
        pytest.fail("the shipped blitz network is missing from urgym/agents/models")
    text = run(["--rules", "blitz", "--agent", "random", "--seed", "3"], ["h", "q"])
    assert "No solved table of blitz" in text and "hints are the neural network's estimate" in text
    assert "(The neural network's estimate" in text and "not exact" in text
    assert "<- the network's best" in text and "<- perfect move" not in text


def test_a_network_estimate_answers_as_its_agent_plays(finkel3_table):
    from urgym.agents.networks.neural import NetworkEstimate, NeuralAgent, shipped_estimate
    from urgym.evaluation.scoring.positions import benchmark_positions

    from tests.agents.networks.test_value_networks import random_network
    from urgym import get_rules

    network = random_network(finkel3_table.rules, seed=5)
    assert shipped_estimate(get_rules("finkel", 3)) is None  # no network learned 3 pieces
    for depth in (0, 2):
        estimate, agent = NetworkEstimate(network, depth), NeuralAgent(network, depth=depth)
        for position, roll in benchmark_positions(finkel3_table, 40):
            values = estimate.move_values(position, roll)
            assert set(values) == set(position.legal_moves(roll)) and all(0 <= v <= 1 for v in values.values())
            assert estimate.best_move(position, roll) == agent.select_move(position, roll)
            mover = estimate.win_probability(position)
            assert estimate.win_probability(position, "dark" if position.turn == "light" else "light") == 1 - mover


def test_a_digit_that_is_not_a_number_asks_again():
    """Issue 38: "²" passes str.isdigit() and int() refuses it; it ended the game with a traceback."""
    text = run(["--pieces", "2", "--agent", "random", "--seed", "2"], ["²", "q"])
    assert "'²' is not a move" in text and "You quit the game." in text


def test_a_perfect_opponent_never_solves_silently(tmp_path, monkeypatch):
    monkeypatch.setenv("URGYM_CACHE", str(tmp_path))  # no table cached: the game solves one first
    text = run(["--rules", "skiriuk", "--pieces", "2", "--agent", "perfect", "--seed", "1"], ["q"])
    first = text.splitlines()[0]
    assert first.startswith("No solved table of skiriuk") and "69,819 positions, about" in first and "memory" in first
    again = run(["--rules", "skiriuk", "--pieces", "2", "--agent", "perfect", "--seed", "1"], ["q"])
    assert again.splitlines()[0].startswith("Loading the solved table of skiriuk")  # cached now: no estimate
    with pytest.raises(SystemExit):
        run(["--rules", "murray", "--pieces", "5", "--agent", "perfect"], ["q"])  # refused, with its needs


def test_two_people_take_turns_at_the_keyboard_without_hints_unless_asked(tmp_path, capsys):
    from urgym import GameRecord

    prompts: list[str] = []
    out: list[str] = []
    answers = iter(["h"] + ["1"] * 500)

    def read(prompt):
        prompts.append(prompt)
        return next(answers)

    path = tmp_path / "two.json"
    argv = ["--two-players", "--pieces", "2", "--seed", "3", "--save", str(path)]
    play_cli.main(argv, read=read, write=out.append)
    text = "\n".join(out)
    assert "Hints are off in this game" in text
    assert {"light's move> ", "dark's move> "} == set(prompts)  # each side asked in turn
    assert "Light's path: in -> A4 to A1" in text and "Dark's path: in -> C4 to C1" in text
    record = GameRecord.load(path)
    assert record.players == {"light": "human (light)", "dark": "human (dark)"} and record.replay().is_over
    assert re.search(rf"{record.winner.capitalize()} won! Pieces borne off: 2 to [01]\.", text)
    hinted = iter(["h"] + ["1"] * 500)
    text = run(["--two-players", "--hints", "--pieces", "2", "--seed", "3"], hinted)
    assert "Hints are off" not in text and "winning chance" in text
    for bad, message in [(["--hints"], "--hints goes with --two-players"), (["--two-players", "--web"], "terminal's")]:
        with pytest.raises(SystemExit):
            run(bad, ["q"])
        assert message in capsys.readouterr().err


def test_a_piece_on_a_rosette_keeps_the_rosettes_mark_on_the_board():
    from urgym import Position, get_rules
    from urgym.render import board_text

    position = Position.from_pieces(get_rules("finkel", 2), light=[4], dark=[8], light_home=1, dark_home=1)
    lines = board_text(position).splitlines()
    assert lines[1].startswith("  A  {L}[.][.][.]") and "{D}" in lines[2] and "[*]" in lines[3]
