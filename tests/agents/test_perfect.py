import pytest
from urgym.agents import PerfectAgent, make_agent
from urgym.solver import TableMissingError, table_for

from tests.agents.positions import decision_positions
from urgym import get_rules


def test_plays_the_tables_best_move(finkel3_table):
    agent = make_agent("perfect")
    for position, roll in decision_positions("finkel", 60, seed=1, pieces=3):
        assert agent.select_move(position, roll) == finkel3_table.best_move(position, roll)


def test_table_move_values_are_the_successor_values(finkel3_table):
    # The numba lookup against the definition: the mover's chance after each move from the table itself.
    for position, roll in decision_positions("finkel", 30, seed=2, pieces=3):
        values = finkel3_table.move_values(position, roll)
        for move, value in values.items():
            after = position.play(roll, move)
            assert value == pytest.approx(finkel3_table.win_probability(after, side=position.turn), abs=1e-15)


def test_epsilon_one_always_slips_and_epsilon_slips_at_its_rate(finkel3_table):
    positions = decision_positions("finkel", 400, seed=3, pieces=3)
    always = PerfectAgent(table=finkel3_table, epsilon=1.0, seed=1)
    for position, roll in positions[:50]:
        assert always.select_move(position, roll) != finkel3_table.best_move(position, roll)
    sometimes = PerfectAgent(table=finkel3_table, epsilon=0.2, seed=2)
    slips = sum(sometimes.select_move(p, r) != finkel3_table.best_move(p, r) for p, r in positions)
    assert 40 <= slips <= 120  # 80 expected; a binomial(400, 0.2) lies here with overwhelming probability


def test_slips_are_seeded(finkel3_table):
    positions = decision_positions("finkel", 60, seed=4, pieces=3)
    a = [PerfectAgent(table=finkel3_table, epsilon=0.5, seed=7).select_move(p, r) for p, r in positions]
    b = [PerfectAgent(table=finkel3_table, epsilon=0.5, seed=7).select_move(p, r) for p, r in positions]
    assert a == b


def test_missing_table_without_solving_names_the_command(tmp_path, monkeypatch):
    monkeypatch.setenv("URGYM_CACHE", str(tmp_path))  # its own cache: another test may have solved blitz-2
    rules = get_rules("blitz", 2)
    with pytest.raises(TableMissingError, match="solve --rules blitz --pieces 2"):
        table_for(rules, solve=False)
    position, roll = decision_positions("blitz", 1, seed=1, pieces=2)[0]
    with pytest.raises(TableMissingError):
        make_agent("perfect:solve=false").select_move(position, roll)


def test_solves_and_caches_a_missing_table(private_cache):
    rules = get_rules("aseb", 2)
    position, roll = decision_positions("aseb", 1, seed=1, pieces=2)[0]
    agent = make_agent("perfect")
    assert agent.select_move(position, roll) in position.legal_moves(roll)
    assert table_for(rules, solve=False).rules == rules


def test_rejects_a_bad_epsilon():
    with pytest.raises(ValueError, match="epsilon must be a probability"):
        PerfectAgent(epsilon=-0.1)


@pytest.mark.parametrize("name", ["murray", "skiriuk"])
def test_plays_murray_and_skiriuk_from_their_tables_in_every_layer(private_cache, name):
    import gymnasium as gym

    table = table_for(get_rules(name, 2), solve=True, progress=False)
    agent = make_agent("perfect")
    for position, roll in decision_positions(name, 80, seed=5, pieces=2):
        assert agent.select_move(position, roll) == table.best_move(position, roll)
    env = gym.make("urgym/Ur-v2", rules=name, pieces=2, opponent="perfect")  # the environment's opponent too
    _, info = env.reset(seed=0)
    done = False
    while not done:
        action = int(info["action_mask"].nonzero()[0][0])
        _, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    assert terminated
