import numpy as np
import pytest
from urgym.evaluation.scoring import _kernels as EK
from urgym.evaluation.scoring.stats import RegretSummary, WinRate, wilson_interval


@pytest.mark.parametrize(
    "wins, games, low, high",
    [
        (50, 100, 0.40383, 0.59617),  # textbook values of the Wilson score interval
        (0, 10, 0.0, 0.27753),
        (10, 10, 0.72247, 1.0),
    ],
)
def test_wilson_interval(wins, games, low, high):
    lo, hi = wilson_interval(wins, games)
    assert lo == pytest.approx(low, abs=1e-5)
    assert hi == pytest.approx(high, abs=1e-5)


def test_win_rate_text_and_dict():
    rate = WinRate(30, 40)
    assert rate.rate == 0.75
    assert str(rate).startswith("75.0% [")
    assert rate.to_dict()["low95"] == pytest.approx(wilson_interval(30, 40)[0])
    assert str(WinRate(0, 0)) == "-"


def test_regret_summary_from_accumulators():
    regrets = np.array([0.0, 0.0, 0.001, 0.002, 0.06, 0.0, 0.0, 0.0, 0.0, 0.01])
    acc = np.zeros((1, EK.ACC_SIZE))
    hist = np.zeros((1, EK.REGRET_BINS), dtype=np.int64)
    for r in regrets:
        EK.record_regret(acc, hist, 0, r)
    acc[0, EK.ACC_SECONDS] = 0.5
    summary = RegretSummary.from_accumulators(acc[0], hist[0])
    assert summary.decisions == 10
    assert summary.mean == pytest.approx(100 * regrets.mean())
    assert summary.median == 0.0
    assert summary.p95 == pytest.approx(6.0, abs=0.001)  # the 10th of 10 values, in win-% points
    assert summary.perfect_share == 0.6
    assert summary.blunders == 1
    assert summary.seconds_per_move == pytest.approx(0.05)


def test_regret_summary_gives_the_means_normal_interval():
    regrets = np.random.default_rng(3).exponential(0.01, 500) * (np.arange(500) % 4 == 0)
    acc = np.zeros((1, EK.ACC_SIZE))
    hist = np.zeros((1, EK.REGRET_BINS), dtype=np.int64)
    for r in regrets:
        EK.record_regret(acc, hist, 0, r)
    summary = RegretSummary.from_accumulators(acc[0], hist[0])
    half = 100 * 1.959964 * regrets.std(ddof=1) / 500**0.5
    assert summary.low95 == pytest.approx(100 * regrets.mean() - half)
    assert summary.high95 == pytest.approx(100 * regrets.mean() + half)
    single = np.zeros((1, EK.ACC_SIZE))
    EK.record_regret(single, hist, 0, 0.02)
    assert np.isnan(RegretSummary.from_accumulators(single[0], hist[0]).high95)  # one decision: no interval
