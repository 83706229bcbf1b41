"""Value networks: one file format and one forward pass for every network urgym trains or ships.

A network maps the features of a position (:mod:`urgym.features`, from the side to move) through hidden layers
(ReLU, or sigmoid for TD(lambda)'s networks) to a sigmoid output V(s): the chance that the side to move in s wins,
the quantity a solved table holds. Whichever algorithm trained it (distillation, expected TD, TD(lambda)), a
network is a :class:`ValueNetwork`, evaluated by one numba kernel (:func:`evaluate`) and stored as one ``.npz``
format (``allow_pickle=False``: the layers and a JSON header). :meth:`ValueNetwork.load` also reads the files of
urgym 0.4 and 0.5's TD(lambda) (format ``urgym-td``: one sigmoid hidden layer), so every network ``train`` has
ever written plays as one. Loading checks a file as data from a stranger: size before inflating, shapes that
chain, finite weights, the feature set and the rules it learned.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from urgym import Position, Rules, core
from urgym.core import geometry
from urgym.features import FEATURE_SETS, feature_set_id, feature_size, write_value_features
from urgym.files import existing_file, loads_json, read_npz, write_atomic

__all__ = [
    "ACTIVATIONS",
    "MAX_NETWORK_BYTES",
    "NetArrays",
    "Scratch",
    "ValueNetwork",
    "evaluate",
    "layers_of",
    "net_arrays",
    "network_values",
    "scratch",
]

ACTIVATIONS = ("relu", "sigmoid")
"""Hidden-layer activations a network may use (its output is always a sigmoid)."""
MAX_NETWORK_BYTES = 64 << 20
"""Most bytes a network file's arrays may inflate to (the shipped ones: under 1 MB)."""
MAX_LAYERS = 8
FORMAT = "urgym-value-network"
FORMAT_VERSION = 1
TD_FORMAT = "urgym-td"
"""The format of urgym 0.4 and 0.5's TD(lambda) files (w1, b1, w2, b2: one sigmoid hidden layer), read as a
:class:`ValueNetwork`."""
TD_FEATURES_VERSION = 1


@dataclass
class ValueNetwork:
    """A fully connected network V(s) from the features of s to the winning chance of its side to move.

    ``layers[k]`` is ``(W, b)`` with ``W`` of shape (inputs, outputs), float32; the last layer has one output.

    Args:
        rules: The rule set the network learned.
        features: Its feature set, a name of :data:`urgym.features.FEATURE_SETS`.
        layers: The weights and biases, input layer first.
        activation: The hidden layers' activation, ``relu`` or ``sigmoid``.
        info: Facts about its training (method, time, measured regret...), kept in the file.
    """

    rules: Rules
    features: str
    layers: list[tuple[np.ndarray, np.ndarray]]
    activation: str = "relu"
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        with np.errstate(over="ignore", invalid="ignore"):  # a weight beyond float32 is named by _check_layers
            self.layers = [
                (np.ascontiguousarray(w, dtype=np.float32), np.ascontiguousarray(b, dtype=np.float32))
                for w, b in self.layers
            ]
        _check_layers(self.rules, self.features, self.layers, self.activation)

    @property
    def parameters(self) -> int:
        """How many weights and biases the network has."""
        return sum(w.size + b.size for w, b in self.layers)

    @property
    def sizes(self) -> tuple[int, ...]:
        """Units per layer, inputs first: (features, hidden ..., 1)."""
        return (self.layers[0][0].shape[0], *(w.shape[1] for w, _ in self.layers))

    def arrays(self, dtype: type = np.float32) -> NetArrays:
        """The network as the kernels take it (flat weights, offsets, sizes); float64 for training in place."""
        return net_arrays(self.layers, self.activation, self.features, dtype)

    def value(self, position: Position) -> float:
        """The network's winning chance for the side to move in ``position``."""
        return float(network_values(self, np.array([position.code], dtype=np.int64))[0])

    def save(self, path: str | os.PathLike) -> Path:
        """Write the network atomically (``.npz``: the layers and a JSON header)."""
        meta = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "rules": self.rules.to_dict(),
            "features": self.features,
            "activation": self.activation,
            "layers": len(self.layers),
            **self.info,
        }
        arrays = {f"w{k}": w for k, (w, _) in enumerate(self.layers)}
        arrays.update({f"b{k}": b for k, (_, b) in enumerate(self.layers)})

        def write(tmp: Path) -> None:
            with open(tmp, "wb") as f:
                np.savez_compressed(f, meta=np.array(json.dumps(meta)), **arrays)

        return write_atomic(path, write)

    @classmethod
    def load(cls, path: str | os.PathLike) -> ValueNetwork:
        """Read a network written by :meth:`save`.

        Raises:
            FileNotFoundError: If there is no file at ``path``.
            ValueError: If the file is not such a network, names unknown rules or features, inflates past
                :data:`MAX_NETWORK_BYTES`, or holds layers that do not chain or weights that are not finite.
        """
        path = existing_file(path, "value network")
        try:
            data = read_npz(path, MAX_NETWORK_BYTES, "a network")
            meta = loads_json(str(data["meta"]), f"{path}'s header")
            if isinstance(meta, dict) and meta.get("format") == TD_FORMAT:
                return cls._from_td_file(data, meta)
            if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                raise ValueError(f"its header does not name the format {FORMAT} (or {TD_FORMAT}, of TD(lambda))")
            version = meta.get("version")
            if isinstance(version, bool) or version != FORMAT_VERSION:
                raise ValueError(f"format version {version!r}, not {FORMAT_VERSION}")
            count = meta.get("layers")
            if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_LAYERS:
                raise ValueError(f"it must have 1 to {MAX_LAYERS} layers, got {count!r}")
            layers = [(data[f"w{k}"], data[f"b{k}"]) for k in range(count)]
            rules = Rules.from_dict(meta["rules"])
            for w, b in layers:
                if w.dtype.kind != "f" or b.dtype.kind != "f":
                    raise ValueError("its weights are not floating-point numbers")
            info = {
                k: v
                for k, v in meta.items()
                if k not in ("format", "version", "rules", "features", "activation", "layers")
            }
            return cls(rules, str(meta.get("features")), layers, str(meta.get("activation")), info)
        except KeyError as err:
            raise ValueError(f"{path} is not a urgym value network: it has no {err}") from None
        except (TypeError, ValueError, OSError) as err:
            raise ValueError(f"{path} is not a urgym value network: {err}") from None

    @classmethod
    def _from_td_file(cls, data: dict[str, np.ndarray], meta: dict[str, Any]) -> ValueNetwork:
        """The network of a TD(lambda) file (format ``urgym-td``: w1 of shape (hidden, features), b1, w2, b2)."""
        version = meta.get("features_version")
        if isinstance(version, bool) or version != TD_FEATURES_VERSION:
            raise ValueError(f"features version {version!r}, not {TD_FEATURES_VERSION}")
        features = meta.get("features", "td-v1")  # urgym 0.4's models name none: they read td-v1
        if features not in FEATURE_SETS:
            raise ValueError(f"it names an unknown feature set {str(features)[:40]!r}")
        w1, b1, w2, b2 = (data[k] for k in ("w1", "b1", "w2", "b2"))
        for a in (w1, b1, w2, b2):
            if a.dtype.kind != "f":
                raise ValueError("its weights are not floating-point numbers")
        if w1.ndim != 2 or w2.shape != b1.shape or b2.shape != (1,) or w1.shape[0] != b1.shape[0]:
            raise ValueError("its weights have inconsistent shapes")
        rules = Rules.from_dict(meta["rules"])
        info = {k: v for k, v in meta.items() if k not in ("format", "features_version", "rules", "features")}
        return cls(rules, features, [(w1.T, b1), (w2.reshape(-1, 1), b2)], "sigmoid", info)


def net_arrays(
    layers: list[tuple[np.ndarray, np.ndarray]], activation: str, features: str, dtype: type = np.float32
) -> NetArrays:
    """Layers ``(W, b)`` (W of shape (inputs, outputs)) as the kernels take them: one flat array of ``dtype``."""
    sizes = np.array([layers[0][0].shape[0], *(w.shape[1] for w, _ in layers)], dtype=np.int64)
    flat = np.concatenate([np.concatenate([w.ravel(), b]) for w, b in layers]).astype(dtype)
    offsets = np.zeros(len(layers), dtype=np.int64)
    at = 0
    for k, (w, b) in enumerate(layers):
        offsets[k] = at
        at += w.size + b.size
    return NetArrays(flat, offsets, sizes, ACTIVATIONS.index(activation), feature_set_id(features))


def layers_of(net: NetArrays) -> list[tuple[np.ndarray, np.ndarray]]:
    """The layers ``(W, b)`` of a network's flat arrays (copies)."""
    layers = []
    for k in range(len(net.offsets)):
        n_in, n_out, at = int(net.sizes[k]), int(net.sizes[k + 1]), int(net.offsets[k])
        layers.append(
            (
                net.flat[at : at + n_in * n_out].reshape(n_in, n_out).copy(),
                net.flat[at + n_in * n_out : at + n_in * n_out + n_out].copy(),
            )
        )
    return layers


def _check_layers(rules: Rules, features: str, layers: list, activation: str) -> None:
    if activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {activation!r}; known: {', '.join(ACTIVATIONS)}")
    if not 1 <= len(layers) <= MAX_LAYERS:
        raise ValueError(f"a network has 1 to {MAX_LAYERS} layers, got {len(layers)}")
    inputs = feature_size(rules, features)
    for k, (w, b) in enumerate(layers):
        if w.ndim != 2 or b.ndim != 1 or w.shape[0] != inputs or b.shape[0] != w.shape[1] or w.shape[1] < 1:
            raise ValueError(
                f"layer {k} has weights {w.shape} and biases {b.shape}; it must take {inputs} inputs "
                "(the previous layer's outputs, or the features of the rules) and have one bias per "
                "output"
            )
        if not (np.isfinite(w).all() and np.isfinite(b).all()):
            raise ValueError(
                f"layer {k} holds weights that are not finite float32 numbers (at most {np.finfo(np.float32).max:.3g} "
                "in magnitude)"
            )
        inputs = w.shape[1]
    _check_no_overflow(layers, activation)
    if inputs != 1:
        raise ValueError(f"the last layer must have one output (the winning chance), has {inputs}")


def _check_no_overflow(layers: list, activation: str) -> None:
    """Refuse weights whose activations could overflow float32 while playing.

    Features are 0 or 1, so a unit's sum is at most the sum of its weights' magnitudes times the largest input, plus
    its bias: a bound that, below float32's largest number, guarantees that no inf (and no inf - inf) ever arises.
    """
    largest = 1.0
    limit = float(np.finfo(np.float32).max)
    for k, (w, b) in enumerate(layers):
        bound = float((np.abs(w.astype(np.float64)).sum(axis=0) * largest + np.abs(b.astype(np.float64))).max())
        if not bound < limit:
            raise ValueError(
                f"layer {k}'s activations can reach {bound:.3g}, beyond float32's {limit:.3g}: weights this large "
                "overflow while playing"
            )
        last = k == len(layers) - 1
        largest = bound if last or activation == "relu" else 1.0  # a sigmoid unit's output is at most 1


class NetArrays(NamedTuple):
    """A network as kernels read it: every layer's W (inputs x outputs, row-major) then b, in one flat array."""

    flat: np.ndarray  # float32[parameters]
    offsets: np.ndarray  # int64[layers]: where layer k's W starts in flat (its b follows W)
    sizes: np.ndarray  # int64[layers + 1]: units per layer, inputs first
    activation: int  # index in ACTIVATIONS
    features: int  # feature set id (urgym.features)


class Scratch(NamedTuple):
    """Buffers one evaluation fills.

    The features, two layers of activations, and the indices of a layer's non-zero inputs.
    """

    x: np.ndarray  # float32[features]
    a: np.ndarray  # float32[widest layer]
    b: np.ndarray  # float32[widest layer]
    active: np.ndarray  # int64[widest layer]


@njit(cache=True)
def scratch(net: NetArrays) -> Scratch:
    """Fresh buffers for evaluating ``net`` (callable from numba and from Python)."""
    width = net.sizes.max()
    dtype = net.flat.dtype  # float32 to play; float64 while TD(lambda) trains in place
    return Scratch(
        np.zeros(net.sizes[0], dtype), np.zeros(width, dtype), np.zeros(width, dtype), np.zeros(width, np.int64)
    )


@njit(cache=True, fastmath=True)
def evaluate(state, geom, net, s):
    """V(state): the network's winning chance for the side to move (a finished game: 0, the mover has lost)."""
    if core.is_over(state):
        return 0.0
    write_value_features(state, geom, net.features, s.x)
    layers = net.offsets.shape[0]
    for k in range(layers):
        source = s.x if k == 0 else (s.a if k % 2 == 1 else s.b)
        n_in = net.sizes[k]
        n_out = net.sizes[k + 1]
        w0 = net.offsets[k]
        b0 = w0 + n_in * n_out
        target = (s.a if k % 2 == 0 else s.b)[:n_out]
        target[:] = net.flat[b0 : b0 + n_out]
        # Features are mostly 0 and ReLU leaves many units at 0: gather the others' indices first, without a
        # branch (a branch per input is mispredicted about half the time), then add only their rows.
        active = s.active
        count = 0
        for i in range(n_in):
            active[count] = i
            count += source[i] != 0.0
        for c in range(count):
            i = active[c]
            v = source[i]
            row = net.flat[w0 + i * n_out : w0 + (i + 1) * n_out]  # a slice: the loop below vectorizes
            for j in range(n_out):
                target[j] += v * row[j]
        if k < layers - 1:
            if net.activation == 0:
                for j in range(n_out):
                    target[j] = max(target[j], 0.0)
            else:
                for j in range(n_out):
                    target[j] = 1.0 / (1.0 + np.exp(-target[j]))
    last = s.a if (layers - 1) % 2 == 0 else s.b
    return 1.0 / (1.0 + np.exp(-np.float64(last[0])))


@njit(cache=True)
def _values(states, geom, net, out):
    s = scratch(net)
    for i in range(states.shape[0]):
        out[i] = evaluate(states[i], geom, net, s)


def network_values(network: ValueNetwork, states: np.ndarray) -> np.ndarray:
    """V of each packed state (from its side to move), float64."""
    out = np.zeros(len(states), dtype=np.float64)
    _values(np.ascontiguousarray(states, dtype=np.int64), geometry(network.rules), network.arrays(), out)
    return out
