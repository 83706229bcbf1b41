"""Int8 inference for a value network: what it does to the regret, and whether it is faster on this processor.

Run: ``python -m benchmarks.bench_int8 [--model PATH] [--held-out 20000] [--evaluations 200000] [--repeats 5]``

The network (default: the shipped finkel ``neural``) is quantized as integer inference would run it. Each hidden
layer's weights get one scale per output unit (symmetric, the column's largest magnitude at the top level:
``--weights 32767,127`` puts the first layer in int16 and the second in int8); the first layer's inputs are the 0/1
features, so it sums integer rows into int32; the second layer's inputs (ReLU outputs) are quantized on one scale
per layer to ``--levels`` (255: uint8), the largest activation over the validation positions' after-states (never
the held-out ones; ``--clip`` a lower percentile) at the top, and multiplied with the int8 weights into int32; the
output unit stays in float32. Printed:

- **Regret**: each held-out decision's move by the float32 network and by the quantized one (depth 0), their mean
  regrets with 95% intervals and the paired difference's interval (the same decisions for both).
- **Speed**: after-state evaluations a second on one thread, float32 (the kernel agents play with,
  :func:`urgym.agents.networks.value.evaluate`) against the quantized kernel below, over the held-out decisions'
  after-states, the median of ``--repeats`` runs after a warm-up; and the features alone and with the first layer,
  so the share of an evaluation each part is (int8 can only speed up the layers' multiplications).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np
from numba import njit
from urgym.agents.models import shipped_model
from urgym.agents.networks.value import ValueNetwork, network_values, scratch
from urgym.agents.networks.value import evaluate as evaluate_float
from urgym.evaluation.scoring.positions import held_out_positions, validation_positions
from urgym.solver import table_for

from benchmarks.common import machine
from urgym import core, get_rules
from urgym.core import geometry
from urgym.features import FEATURE_SETS, write_value_features

Z95 = 1.959964


def after_states(positions: list) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, list[int]]]]:
    """Every legal move's after-state of each decision, its outcome flags, and per decision (start, count, moves)."""
    states, flags, spans = [], [], []
    for position, roll in positions:
        moves = list(position.legal_moves(roll))
        spans.append((len(states), len(moves), moves))
        for move in moves:
            code, flag = core.apply_move(position.code, roll, move, geometry(position.rules))
            states.append(code)
            flags.append(flag)
    return np.array(states, dtype=np.int64), np.array(flags, dtype=np.int64), spans


def move_values(values: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """The mover's winning chance of each move from the after-states' values (the side to move there)."""
    won = (flags & core.WIN) != 0
    keeps = (flags & core.EXTRA_ROLL) != 0
    return np.where(won, 1.0, np.where(keeps, values, 1.0 - values))


def regrets(positions: list, spans: list, chances: np.ndarray, table) -> np.ndarray:
    """Win-% points lost by the move with the best chance (the lowest source on ties), per decision."""
    out = np.empty(len(positions))
    for i, ((position, roll), (start, count, moves)) in enumerate(zip(positions, spans, strict=True)):
        exact = table.move_values(position, roll)
        pick = max(range(count), key=lambda k: (chances[start + k], -moves[k]))
        out[i] = 100.0 * (max(exact.values()) - exact[moves[pick]])
    return out


def interval(sample: np.ndarray) -> str:
    half = Z95 * sample.std(ddof=1) / math.sqrt(len(sample))
    return f"{sample.mean():.5f} [{sample.mean() - half:.5f}, {sample.mean() + half:.5f}]"


class Quantized:
    """A two-hidden-layer ReLU network in integers (see the module docstring)."""

    def __init__(
        self, network: ValueNetwork, calibration: np.ndarray, levels: int = 255, clip: float = 100.0, weights=(127, 127)
    ) -> None:
        if len(network.layers) != 3 or network.activation != "relu":
            raise ValueError("the study quantizes networks of two ReLU hidden layers (as distillation trains)")
        (w1, b1), (w2, b2), (w3, b3) = network.layers
        self.q1, self.s1 = _quantize_columns(w1, weights[0])
        self.q2, self.s2 = _quantize_columns(w2, weights[1])
        self.b1, self.b2, self.w3, self.b3 = b1, b2, w3[:, 0].copy(), float(b3[0])
        self.features = FEATURE_SETS[network.features]
        self.geom = geometry(network.rules)
        hidden = _first_layer(calibration, self.geom, self.features, self.q1, self.s1, self.b1)
        self.levels = levels
        self.a_scale = np.float32(max(float(np.percentile(hidden[hidden > 0], clip)), 1e-6) / levels)

    def values(self, states: np.ndarray) -> np.ndarray:
        out = np.empty(len(states))
        _int8_values(
            states, self.geom, self.features, self.q1, self.s1, self.b1, self.a_scale, self.levels,
            self.q2, self.s2, self.b2, self.w3, self.b3, out,
        )  # fmt: skip
        return out


def _quantize_columns(w: np.ndarray, top: int = 127) -> tuple[np.ndarray, np.ndarray]:
    scale = np.maximum(np.abs(w).max(axis=0), 1e-12) / top
    dtype = np.int8 if top <= 127 else np.int16
    return np.clip(np.rint(w / scale), -top, top).astype(dtype), scale.astype(np.float32)


@njit(cache=True)
def _first_layer(states, geom, features, q1, s1, b1):
    """The first hidden layer's ReLU outputs of each state (for the activation scale)."""
    x = np.zeros(q1.shape[0], np.float32)
    out = np.zeros((states.shape[0], q1.shape[1]), np.float32)
    acc = np.zeros(q1.shape[1], np.int32)
    for s in range(states.shape[0]):
        write_value_features(states[s], geom, features, x)
        acc[:] = 0
        for i in range(q1.shape[0]):
            if x[i] != 0.0:
                acc += q1[i].astype(np.int32)
        for j in range(q1.shape[1]):
            out[s, j] = max(acc[j] * s1[j] + b1[j], 0.0)
    return out


@njit(cache=True, fastmath=True)
def _int8_values(states, geom, features, q1, s1, b1, a_scale, levels, q2, s2, b2, w3, b3, out):
    n_in, n_mid, n_top = q1.shape[0], q1.shape[1], q2.shape[1]
    x = np.zeros(n_in, np.float32)
    acc1 = np.zeros(n_mid, np.int32)
    a = np.zeros(n_mid, np.int32)
    active = np.zeros(n_mid, np.int64)
    acc2 = np.zeros(n_top, np.int32)
    inv = np.float32(1.0) / a_scale
    for s in range(states.shape[0]):
        if core.is_over(states[s]):
            out[s] = 0.0
            continue
        write_value_features(states[s], geom, features, x)
        acc1[:] = 0
        for i in range(n_in):  # the features are 0 or 1: add the rows of those that are 1
            if x[i] != 0.0:
                row = q1[i]
                for j in range(n_mid):
                    acc1[j] += np.int32(row[j])
        count = 0
        for j in range(n_mid):
            h = acc1[j] * s1[j] + b1[j]
            q = min(max(np.int32(h * inv + np.float32(0.5)), 0), levels)
            a[j] = q
            active[count] = j
            count += q != 0
        acc2[:] = 0
        for c in range(count):  # ReLU's zeros add nothing
            i = active[c]
            v = a[i]
            row = q2[i]
            for j in range(n_top):
                acc2[j] += v * np.int32(row[j])
        total = b3
        for j in range(n_top):
            total += max(acc2[j] * (a_scale * s2[j]) + b2[j], np.float32(0.0)) * w3[j]
        out[s] = 1.0 / (1.0 + np.exp(-total))


@njit(cache=True)
def _float_values(states, geom, net, out):
    s = scratch(net)
    for i in range(states.shape[0]):
        out[i] = evaluate_float(states[i], geom, net, s)


@njit(cache=True, fastmath=True)
def _first_layer_only(states, geom, features, w1, b1, out):
    """The features and the first hidden layer in float32, as the agents' kernel computes them."""
    x = np.zeros(w1.shape[0], np.float32)
    h = np.zeros(w1.shape[1], np.float32)
    for s in range(states.shape[0]):
        write_value_features(states[s], geom, features, x)
        h[:] = b1
        for i in range(w1.shape[0]):
            if x[i] != 0.0:
                row = w1[i]
                for j in range(w1.shape[1]):
                    h[j] += row[j]
        out[s] = max(h[0], 0.0)


@njit(cache=True)
def _features_only(states, geom, features, width, out):
    x = np.zeros(width, np.float32)
    for i in range(states.shape[0]):
        write_value_features(states[i], geom, features, x)
        out[i] = x[0]


def rate(work, count: int, repeats: int) -> float:
    work()  # compiles
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        seconds.append(time.perf_counter() - start)
    return count / statistics.median(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="a value network file (default: the shipped finkel one)")
    parser.add_argument("--held-out", type=int, default=20_000)
    parser.add_argument("--evaluations", type=int, default=200_000, help="after-states timed per run")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--weights", default="32767,127", help="the two hidden layers' top weight levels")
    parser.add_argument("--levels", type=int, default=255, help="the hidden activations' top level (255: uint8)")
    parser.add_argument("--clip", type=float, default=100.0, help="percentile of the activations set to the top level")
    args = parser.parse_args()
    network = ValueNetwork.load(args.model or shipped_model(get_rules("finkel")))
    table = table_for(network.rules, solve=False, progress=False)
    calibration, _, _ = after_states(validation_positions(table))
    quantized = Quantized(network, calibration, args.levels, args.clip, tuple(int(t) for t in args.weights.split(",")))
    positions = held_out_positions(table, args.held_out)
    states, flags, spans = after_states(positions)
    sizes = f"{network.parameters:,} parameters, {len(positions):,} held-out decisions, {len(states):,} after-states"
    print(f"{machine()}; {sizes}")

    float_regret = regrets(positions, spans, move_values(network_values(network, states), flags), table)
    int8_regret = regrets(positions, spans, move_values(quantized.values(states), flags), table)
    print(f"regret, depth 0: float32 {interval(float_regret)}, int8 {interval(int8_regret)}")
    print(f"int8 less float32, paired: {interval(int8_regret - float_regret)}; decisions whose move differs: "
          f"{int((int8_regret != float_regret).sum()):,}")  # fmt: skip

    timed = np.resize(states, args.evaluations)
    out = np.empty(len(timed))
    arrays, geom = network.arrays(), geometry(network.rules)
    speeds = {
        "float32": rate(lambda: _float_values(timed, geom, arrays, out), len(timed), args.repeats),
        "int8": rate(lambda: quantized.values(timed), len(timed), args.repeats),
        "features and the first layer": rate(
            lambda: _first_layer_only(timed, geom, quantized.features, *network.layers[0], out),
            len(timed),
            args.repeats,
        ),
        "features alone": rate(
            lambda: _features_only(timed, geom, quantized.features, network.sizes[0], out), len(timed), args.repeats
        ),
    }
    for name, speed in speeds.items():
        print(f"{name}: {speed:,.0f} after-states a second (one thread, median of {args.repeats})")
    whole, first, features = (
        1 / speeds[name] for name in ("float32", "features and the first layer", "features alone")
    )
    print(f"shares of a float32 evaluation: the features {features / whole:.0%}, the first layer "
          f"{(first - features) / whole:.0%}, the layers after it {(whole - first) / whole:.0%}")  # fmt: skip


if __name__ == "__main__":
    main()
