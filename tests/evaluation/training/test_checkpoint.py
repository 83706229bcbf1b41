"""A training run's checkpoint: resumed, a run ends exactly as an uninterrupted one; a foreign file is never read."""

import csv
import os
import pickle

import pytest
import torch
from stable_baselines3.common.save_util import load_from_zip_file
from urgym.agents.networks.value import ValueNetwork
from urgym.commands.train import main as train_main
from urgym.evaluation.training import checkpoint as checkpoints
from urgym.evaluation.training import ppo
from urgym.evaluation.training.algorithms import get_algorithm
from urgym.evaluation.training.alphazero import AlphaZeroSettings
from urgym.evaluation.training.checkpoint import CHECKPOINT, read_checkpoint, write_checkpoint
from urgym.evaluation.training.dqn import DQNSettings
from urgym.evaluation.training.expected_td import ExpectedTDSettings
from urgym.evaluation.training.ppo import PPOSettings
from urgym.evaluation.training.run import RunPlan, train

from urgym import get_rules

RULES = get_rules("finkel", 3)
BUDGET = 1_024


class RunCutError(Exception):
    """Stands for Ctrl-C or a machine going away in the middle of a run."""


def _metrics(interrupt_at: int | None):
    """The run's extra figures; with ``interrupt_at``, the run dies at that evaluation (after earlier checkpoints)."""
    calls = []

    def measure(agent, final):
        calls.append(final)
        if len(calls) == interrupt_at:
            raise RunCutError
        return {"evaluation": len(calls)}

    return measure


RUNS = {  # (settings, budget, decisions between points): four points or so, in seconds
    "maskable-ppo": (PPOSettings(envs=4), BUDGET, 256),
    "alphazero": (AlphaZeroSettings(games=16, steps=8, simulations=4), BUDGET, 256),  # rounds of 128 moves
    "dqn": (DQNSettings(envs=4, buffer=2_000, learning_starts=200, target_update=100), BUDGET, 256),
    "td-lambda": (None, 120_000, 30_000),  # chunks of 500 games: about 25,000 moves
    "expected-td": (ExpectedTDSettings(hidden=(16,), generate=1_000, buffer=4_000, batch=64), 8_000, 2_000),
}


def _train(algo, table, folder, interrupt_at=None, resume=False):
    settings, budget, every = RUNS[algo]
    plan = RunPlan(folder, budget, seed=3, progress=False, resume=resume, eval_every=every, validation=40)
    return train(get_algorithm(algo), RULES, plan, settings, table, metrics=_metrics(interrupt_at))


def _curve(folder):
    """The curve's rows without its timings."""
    with open(folder / "curve.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return [{key: value for key, value in row.items() if key not in ("seconds", "eval_seconds")} for row in rows]


def _parameters(path):
    if path.suffix == ".pt":
        return torch.jit.load(str(path)).state_dict()
    if path.suffix == ".npz":
        layers = ValueNetwork.load(path).layers
        return {
            f"{k}{i}": torch.from_numpy(a) for i, layer in enumerate(layers) for k, a in zip("wb", layer, strict=True)
        }
    _, params, _ = load_from_zip_file(path)
    return params["policy"]


@pytest.mark.parametrize("algo", ["maskable-ppo", "dqn", "alphazero", "td-lambda", "expected-td"])
def test_a_run_resumed_from_its_checkpoint_ends_exactly_as_an_uninterrupted_one(
    algo, finkel3_table, tmp_path, monkeypatch
):
    monkeypatch.setattr(ppo, "ROLLOUT_STEPS", 256)  # several rollouts, so several evaluations, in a short run
    whole = _train(algo, finkel3_table, tmp_path / "whole")
    assert not (tmp_path / "whole" / CHECKPOINT).exists()  # a finished run keeps no checkpoint
    assert whole["resumed_at"] == []

    with pytest.raises(RunCutError):
        _train(algo, finkel3_table, tmp_path / "cut", interrupt_at=3)
    assert (tmp_path / "cut" / CHECKPOINT).exists()
    if algo == "dqn":  # a run started afresh in the folder drops the checkpoint of the run it replaces
        stale = tmp_path / "stale"
        stale.mkdir()
        (stale / CHECKPOINT).write_bytes((tmp_path / "cut" / CHECKPOINT).read_bytes())
        with pytest.raises(RunCutError):
            _train(algo, finkel3_table, stale, interrupt_at=1)
        assert not (stale / CHECKPOINT).exists()
    resumed = _train(algo, finkel3_table, tmp_path / "cut", resume=True)

    points = [row["timesteps"] for row in whole["curve"]]
    assert len(points) >= 4, points
    assert resumed["resumed_at"] == [points[1]] and resumed["earlier_seconds"] > 0
    assert resumed["timesteps"] == whole["timesteps"] and resumed["best_regret"] == whole["best_regret"]
    suffix = get_algorithm(algo).model_suffix
    for name in (f"model{suffix}", f"best_model{suffix}"):
        mine, theirs = _parameters(tmp_path / "cut" / name), _parameters(tmp_path / "whole" / name)
        assert mine.keys() == theirs.keys()
        assert all(torch.equal(mine[key], theirs[key]) for key in mine), name
    whole_rows, cut_rows = _curve(tmp_path / "whole"), _curve(tmp_path / "cut")
    # the evaluations' count differs (the resumed run's count starts again), the rest is the same to the digit
    count = len(points)
    assert [row.pop("evaluation") for row in whole_rows] == [str(k) for k in range(1, count + 1)]
    assert [row.pop("evaluation") for row in cut_rows] == ["1", "2", *(str(k) for k in range(1, count - 1))]
    assert cut_rows == whole_rows and [int(row["timesteps"]) for row in cut_rows] == points
    if get_algorithm(algo).learner.writes_logs:  # stable-baselines3 starts its log afresh: the interrupted stretch's
        assert (tmp_path / "cut" / "logs" / f"progress-before-{points[1]}.csv").is_file()  # is kept beside it
    else:  # the run's own log, taken up from the checkpoint: one file, every point once
        log = (tmp_path / "cut" / "logs" / "progress.csv").read_text().splitlines()
        assert [int(row.split(",")[0]) for row in log[1:]] == points


def test_a_run_resumed_twice_from_one_checkpoint_keeps_both_interrupted_logs(tmp_path):
    from urgym.evaluation.training.ppo import _set_aside_log

    logs = tmp_path / "logs"
    logs.mkdir()
    assert _set_aside_log(logs, 512) is None  # nothing logged yet: nothing to keep
    for stretch in ("first", "second", "third"):
        (logs / "progress.csv").write_text(stretch)
        _set_aside_log(logs, 512)
    kept = {path.name: path.read_text() for path in logs.iterdir()}
    assert kept == {
        "progress-before-512.csv": "first",
        "progress-before-512-2.csv": "second",
        "progress-before-512-3.csv": "third",
    }


def _plant(folder, payload: bytes, signature: bytes) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / CHECKPOINT).write_bytes(checkpoints._MAGIC + signature + b"\n" + payload)


class _Bomb:
    """Unpickled, it leaves a file behind: the proof that a checkpoint was read."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), "w"))


def test_a_checkpoint_not_signed_with_the_users_key_is_never_unpickled(tmp_path, private_cache):
    proof = tmp_path / "unpickled"
    payload = pickle.dumps({"identity": {}, "bomb": _Bomb(proof)})
    forged = b"0" * 64
    _plant(tmp_path / "run", payload, forged)
    with pytest.raises(ValueError, match=r"not written by urgym under this user.*remove it to train"):
        read_checkpoint(tmp_path / "run", {})
    assert not proof.exists()

    # signed with another key: the same
    other = checkpoints.hmac.new(os.urandom(32), payload, checkpoints.hashlib.sha256).hexdigest().encode()
    _plant(tmp_path / "run", payload, other)
    with pytest.raises(ValueError, match="its signature does not match"):
        read_checkpoint(tmp_path / "run", {})
    # a file that is no checkpoint at all
    (tmp_path / "run" / CHECKPOINT).write_bytes(b"\x80\x04hello")
    with pytest.raises(ValueError, match="is not a urgym training checkpoint"):
        read_checkpoint(tmp_path / "run", {})
    assert not proof.exists()
    assert (private_cache / ".checkpoint.key").stat().st_mode & 0o777 == 0o600


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX's")
def test_a_checkpoint_that_is_no_regular_file_is_refused_at_once(tmp_path, private_cache):
    os.mkfifo(tmp_path / CHECKPOINT)  # no writer: reading it would wait for ever
    with pytest.raises(ValueError, match=r"is a FIFO.*not a regular file"):
        read_checkpoint(tmp_path, {})
    (tmp_path / "folder" / CHECKPOINT).mkdir(parents=True)
    with pytest.raises(ValueError, match="not a regular file"):
        read_checkpoint(tmp_path / "folder", {})


def test_a_large_planted_checkpoint_is_refused_without_being_held_in_memory(tmp_path, private_cache):
    import tracemalloc

    size = 64 << 20
    _plant(tmp_path / "run", b"\0" * size, b"0" * 64)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="its signature does not match"):
            read_checkpoint(tmp_path / "run", {})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < size / 16, f"{peak:,} bytes held to refuse a {size:,}-byte file"
    # a signed one of the same run still reads (the payload read once, after its signature matched)
    write_checkpoint(tmp_path / "ok", {"identity": {"seed": 3}, "big": b"\1" * size})
    assert read_checkpoint(tmp_path / "ok", {"seed": 3})["big"] == b"\1" * size


def test_a_key_others_can_read_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("URGYM_CACHE", str(tmp_path / "cache"))
    write_checkpoint(tmp_path, {"identity": {"seed": 1}})
    key = tmp_path / "cache" / ".checkpoint.key"
    key.chmod(0o644)
    with pytest.raises(ValueError, match=r"is not a private key of this user.*remove it"):
        read_checkpoint(tmp_path, {"seed": 1})


def test_a_checkpoint_of_another_run_is_refused_naming_what_differs(tmp_path):
    identity = {"algo": "dqn", "seed": 1, "timesteps": 100, "settings": {"envs": 4}}
    write_checkpoint(tmp_path, {"identity": identity, "timesteps": 10})
    assert read_checkpoint(tmp_path, identity)["timesteps"] == 10
    with pytest.raises(ValueError, match="checkpoint of another run \\(its seed, settings differ\\)"):
        read_checkpoint(tmp_path, {**identity, "seed": 2, "settings": {"envs": 8}})
    assert read_checkpoint(tmp_path / "elsewhere", identity) is None


def test_train_resume_says_what_it_needs(tmp_path, capsys):
    for argv, message in (
        (["--algo", "dqn", "--resume"], f"holds no checkpoint ({CHECKPOINT}) to resume; run without --resume"),
        (["--algo", "td-lambda", "--resume"], f"holds no checkpoint ({CHECKPOINT}) to resume; run without --resume"),
    ):
        with pytest.raises(SystemExit) as stop:
            train_main([*argv, "--pieces", "2", "--out", str(tmp_path / "run"), "--no-progress"])
        assert stop.value.code == 2
        assert message in capsys.readouterr().err


def test_the_train_command_gives_alphazero_its_settings_and_no_opponent(tmp_path, capsys):
    from urgym.commands import train

    parser = train._parser()
    args = parser.parse_args(["--algo", "alphazero", "--envs", "64", "--hidden", "32", "--lr", "0.01", "--out", "x"])
    settings = train._settings(parser, args, get_algorithm("alphazero"))
    assert (settings.games, settings.hidden, settings.learning_rate) == (64, 32, 0.01)
    assert settings.simulations == AlphaZeroSettings().simulations
    with pytest.raises(SystemExit):
        train_main(["--algo", "alphazero", "--opponent", "greedy", "--pieces", "2", "--out", str(tmp_path / "r")])
    assert "alphazero needs no opponent; --opponent is for maskable-ppo and dqn" in capsys.readouterr().err
