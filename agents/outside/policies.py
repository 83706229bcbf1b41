"""Agents from outside the package that score moves with a network.

Stable-baselines3 models, ONNX and TorchScript networks, and plain Python policies.

Every one of them answers a whole batch of decisions at once: the observations of the batch (the environments'
observation, from the mover's side, :func:`urgym.core.write_observations`) go through the network in one call, the
scores of illegal actions are masked, and the best legal action is played (the lowest source on ties). They run
in the main process by default (``in_process``), where a batch of a thousand games is one forward pass.

Loading is safe for files from strangers where the format allows it: ``sb3:`` reads the model's zip without
unpickling anything (the JSON of its settings, and the weights with
:func:`urgym.agents.outside.weights.read_state_dict`, which needs no torch) and rebuilds the network from the
weights' names and shapes, so a saved model plays with numpy alone; ``onnx:`` hands a protobuf to onnxruntime. A
TorchScript file is a program, so ``torchscript:`` runs only files you trust, like a plug-in ``.py`` file.
"""

from __future__ import annotations

import os
import re
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit
from urgym.agents.base import Agent, one_hot_choices
from urgym.agents.models import card_path, model_card
from urgym.agents.outside.weights import MAX_WEIGHTS_BYTES, read_state_dict

from urgym import Position, Rules, core
from urgym.batch import Decisions, check_choices
from urgym.core import geometry, observation_size
from urgym.files import existing_file, loads_json, open_regular, require_extra

__all__ = [
    "OnnxAgent",
    "PPOAgent",
    "PolicyAgent",
    "SB3Agent",
    "ScoringAgent",
    "TorchScriptAgent",
    "load_sb3_network",
    "observations",
    "played_as_saved",
    "sample_legal",
]

MAX_SB3_DATA = 16 << 20
"""Largest ``data`` member (the model's settings as JSON) of a stable-baselines3 zip urgym inflates; real ones hold
kilobytes. Its weights are bounded by :data:`urgym.agents.outside.weights.MAX_WEIGHTS_BYTES`."""


_WARNED_CARDLESS: set[Path] = set()
"""Model files without a card that a warning named already: one warning per model and process, however often it is
built."""


def observations(rules: Rules, decisions: Decisions) -> np.ndarray:
    """The observation of each decision, from its mover's side, with the roll: ``float32[k, obs]``."""
    out = np.zeros((len(decisions), observation_size(rules)), dtype=np.float32)
    core.write_observations(decisions, geometry(rules), out)
    return out


@njit(cache=True)
def sample_legal(scores, masks, rngs, out):
    """For each row, a legal action drawn from the softmax of its scores over the legal actions.

    The chance of an action is proportional to ``exp(scores)`` (a policy's logits), drawn from the row's own stream
    ``rngs[i]``.
    """
    for i in range(scores.shape[0]):
        top = -np.inf
        for a in range(scores.shape[1]):
            if masks[i, a] and scores[i, a] > top:
                top = scores[i, a]
        total = 0.0
        for a in range(scores.shape[1]):
            if masks[i, a]:
                total += np.exp(scores[i, a] - top)
        u = core.next_uniform(rngs[i]) * total
        chosen = -1
        for a in range(scores.shape[1]):
            if masks[i, a]:
                chosen = a
                u -= np.exp(scores[i, a] - top)
                if u < 0.0:
                    break
        out[i] = chosen


class ScoringAgent(Agent):
    """An agent that scores every action of a batch of observations and plays the best legal one.

    The scores are :meth:`scores` (``[k, L + 1]``); with ``sample`` it plays a legal action drawn from their softmax
    instead (a policy's logits: how it acts while it trains, e.g. as its own opponent). Subclasses give the scores; the
    observations and masks are those of the Gymnasium environment.

    Args:
        rules: The rules the network was trained on, when known (checked before any game).
        actions: The network's number of actions; observation size: the length of its input.
        sample: Draw from the softmax of the legal actions' scores (from each game's own stream) instead of
            playing the best.
    """

    in_process = True
    """Run in the main process: one batched forward pass beats workers that each import the framework."""

    def __init__(
        self,
        spec: str,
        rules: Rules | None,
        actions: int | None,
        observation: int | None,
        seed: int | None = None,
        sample: bool = False,
    ) -> None:
        if not isinstance(sample, bool):
            raise ValueError(f"{spec}: sample must be true or false, got {sample!r}")
        self.spec = spec + (":sample=true" if sample else "")
        self.rules = rules
        self.sample = sample
        self.randomizes = sample
        self.cardless: Path | None = None
        """A model file with no card beside it (set by the loaders): the rules it learned are unknown."""
        self._actions, self._observation = actions, observation
        super().__init__(seed)

    def scores(self, observations: np.ndarray) -> np.ndarray:
        """Scores ``float[k, L + 1]`` of every action for ``observations`` ``float32[k, obs]`` (higher is better)."""
        raise NotImplementedError

    def check_rules(self, rules: Rules) -> None:
        """Raise ``ValueError`` if the model was trained on other rules or another observation size.

        A model without a card is played on any rules its observation size fits, with a warning that says so.
        """
        if self.rules is not None and rules != self.rules:
            raise ValueError(
                f"{self.spec}: this model was trained on {self.rules.describe()!r}, not on {rules.describe()!r}"
            )
        if self._observation is not None and self._observation != observation_size(rules):
            raise ValueError(
                f"{self.spec}: the network takes observations of {self._observation} numbers, but "
                f"{rules.name} with {rules.pieces} pieces has {observation_size(rules)}"
            )
        if self._actions is not None and self._actions != rules.length + 1:
            raise ValueError(
                f"{self.spec}: the network has {self._actions} actions, but {rules.name} has "
                f"{rules.length + 1} (path positions 0..{rules.length})"
            )
        if self.rules is None and self.cardless is not None and self.cardless.resolve() not in _WARNED_CARDLESS:
            _WARNED_CARDLESS.add(self.cardless.resolve())
            warnings.warn(
                f"{self.spec}: no model card ({card_path(self.cardless).name}) beside it, so the rules it learned are "
                f"unknown; it plays {rules.describe()!r} because its observation size fits; add its card with "
                f'python -c "from urgym import get_rules; from urgym.agents.models import write_model_card; '
                f"write_model_card('{self.cardless}', get_rules('{rules.name}', {rules.pieces}))\"",
                UserWarning,
                stacklevel=2,
            )
            self.cardless = None

    def select_moves(self, rules: Rules, decisions: Decisions) -> np.ndarray:
        """The best legal action of each decision by :meth:`scores` (or one drawn from their softmax)."""
        self.check_rules(rules)
        if len(decisions) == 0:
            return np.zeros(0, dtype=np.int64)
        scores, masks = self._legal_scores(rules, decisions)
        if self.sample:
            chosen = np.empty(len(decisions), dtype=np.int64)
            sample_legal(scores, masks, decisions.rngs, chosen)
            return chosen
        return np.where(masks, scores, -np.inf).argmax(axis=1).astype(np.int64)

    def move_probabilities(self, rules: Rules, decisions: Decisions) -> np.ndarray:
        """Every legal move's chance: the softmax of the scores over the legal moves (``sample=true``), else one-hot."""
        if not self.sample:
            return one_hot_choices(decisions, self.select_moves(rules, decisions))
        scores = self._legal_scores(rules, decisions)[0]
        legal = np.arange(decisions.moves.shape[1])[None, :] < decisions.counts[:, None]
        logits = np.where(legal, np.take_along_axis(scores, np.where(legal, decisions.moves, 0), axis=1), -np.inf)
        weights = np.exp(logits - logits.max(axis=1, keepdims=True))
        return weights / weights.sum(axis=1, keepdims=True)

    def _legal_scores(self, rules: Rules, decisions: Decisions) -> tuple[np.ndarray, np.ndarray]:
        """The network's scores of a batch (float64[k, actions]) and the legal actions' masks, both checked."""
        self.check_rules(rules)
        expected = (len(decisions), rules.length + 1)
        inputs = observations(rules, decisions)
        try:
            scores = np.asarray(self.scores(inputs), dtype=np.float64)
        except Exception as err:  # the framework's own error types (onnxruntime, torch) for a network that does not fit
            raise ValueError(
                f"{self.spec}: the network fails on observations float32{list(inputs.shape)} (it must "
                f"map float32[batch, {inputs.shape[1]}] to scores [batch, {expected[1]}]): "
                f"{_first_line(err)}"
            ) from None
        if scores.shape != expected:
            raise ValueError(f"{self.spec}: the network gave scores of shape {scores.shape}, expected {expected}")
        masks = decisions.masks(rules.length + 1)
        bad = (masks & ~np.isfinite(scores)).any(axis=1)
        if bad.any():  # never guess: a NaN or infinite score has no order among the legal moves
            first = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{self.spec}: the network's scores are not finite for {int(bad.sum())} of "
                f"{len(decisions)} decisions, e.g. {scores[first].tolist()} for roll "
                f"{int(decisions.rolls[first])} in {decisions.position(rules, first)!r}; a network must "
                "give finite scores to the legal moves"
            )
        return scores, masks

    def select_move(self, position: Position, roll: int) -> int:
        """The model's move (see :meth:`select_moves`)."""
        return self.select_one(position, roll)


def _first_line(err: BaseException) -> str:
    """An exception's message, first line only and at most 300 characters (frameworks write pages)."""
    text = str(err).strip().splitlines()
    return (text[0] if text else type(err).__name__)[:300]


class PolicyAgent(Agent):
    """A plain Python batch policy as an agent: ``policy(observations, masks) -> actions``.

    ``observations`` is ``float32[k, obs]`` (the environment's observation, from the mover's side), ``masks``
    ``bool[k, L + 1]`` marks the legal actions, and the policy returns ``k`` integer actions.
    """

    in_process = True

    def __init__(
        self, policy: Callable[[np.ndarray, np.ndarray], Any], spec: str | None = None, seed: int | None = None
    ) -> None:
        if not callable(policy):
            raise ValueError(f"a policy must be callable as policy(observations, masks) -> actions, got {policy!r}")
        self.policy = policy
        self.spec = spec or f"policy:{getattr(policy, '__name__', type(policy).__name__)}"
        super().__init__(seed)

    def select_moves(self, rules: Rules, decisions: Decisions) -> np.ndarray:
        """The policy's actions for a batch of decisions, checked to be legal."""
        if len(decisions) == 0:
            return np.zeros(0, dtype=np.int64)
        actions = self.policy(observations(rules, decisions), decisions.masks(rules.length + 1))
        return check_choices(decisions, actions, self.spec, rules)

    def select_move(self, position: Position, roll: int) -> int:
        """The policy's move (see :meth:`select_moves`)."""
        return self.select_one(position, roll)


# --- stable-baselines3 ---------------------------------------------------------------------------------------
ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "Tanh": np.tanh,
    "ReLU": lambda x: np.maximum(x, 0.0),
    "ELU": lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0.0))),
    "LeakyReLU": lambda x: np.where(x > 0, x, 0.01 * x),
    "Sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "SiLU": lambda x: x / (1.0 + np.exp(-x)),
    "Identity": lambda x: x,
}
"""The activation functions a stable-baselines3 network may use (torch.nn names)."""

# Policy classes urgym rebuilds, by name: (where the hidden layers are, where the output is, default activation).
_SB3_POLICIES = {
    "ActorCriticPolicy": ("mlp_extractor.policy_net", "action_net", "Tanh"),
    "MaskableActorCriticPolicy": ("mlp_extractor.policy_net", "action_net", "Tanh"),
    "DQNPolicy": ("q_net.q_net", None, "ReLU"),
    "QRDQNPolicy": ("quantile_net.quantile_net", None, "ReLU"),
}
_IGNORED_PREFIXES = (
    "mlp_extractor.value_net",
    "value_net",
    "q_net_target",
    "quantile_net_target",
    "log_std",
    "features_extractor",
    "pi_features_extractor",
    "vf_features_extractor",
)


class MLP:
    """Dense layers in numpy: ``activation(x @ W.T + b)`` per hidden layer, then the output layer."""

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], activation: str, hidden_last: bool) -> None:
        self.layers = layers
        self.activation = ACTIVATIONS[activation]
        self.hidden_last = hidden_last  # an activation after the last layer too (an actor's latent, before action_net)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        for k, (weight, bias) in enumerate(self.layers):
            x = x @ weight.T + bias
            if k < len(self.layers) - 1 or self.hidden_last:
                x = self.activation(x)
        return x


def load_sb3_network(path: str | os.PathLike) -> tuple[Callable[[np.ndarray], np.ndarray], dict[str, Any]]:
    """Read a stable-baselines3 (or sb3-contrib) model's zip without unpickling anything.

    Returns the network (observations -> action scores: logits, Q-values or mean quantiles) and what the zip says of
    it: ``policy`` (the policy class), ``observation`` (its length), ``actions``, ``activation``.

    Raises:
        ValueError: For a file that is not such a zip, a policy urgym cannot rebuild (a custom feature extractor,
            recurrent or continuous policies), or an activation outside :data:`ACTIVATIONS`, naming the file.
    """
    path = Path(path)
    try:
        with open_regular(path, "a stable-baselines3 model") as f, zipfile.ZipFile(f) as archive:
            data = loads_json(_member(archive, "data", MAX_SB3_DATA), "its data")
            weights = _member(archive, "policy.pth", MAX_WEIGHTS_BYTES + (1 << 20))
    except (zipfile.BadZipFile, KeyError) as err:
        raise ValueError(
            f"{path} is not a stable-baselines3 model (a zip with 'data' and 'policy.pth'): {err}"
        ) from None
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    try:
        state = read_state_dict(weights)
    except ValueError as err:  # any failure to read weights from a stranger's file is that file's fault
        raise ValueError(f"{path}: its weights (policy.pth) cannot be read safely: {err}") from None
    try:
        return _rebuild(data, {k: v.astype(np.float32) for k, v in state.items()})
    except (KeyError, TypeError, AttributeError) as err:
        raise ValueError(f"{path}: not a model urgym can rebuild ({type(err).__name__}: {err})") from None
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None


def _member(archive: zipfile.ZipFile, name: str, limit: int) -> bytes:
    """A member's bytes, refused if it inflates to more than ``limit``.

    zipfile stops at the size the directory declares, so the check bounds what is inflated.
    """
    if archive.getinfo(name).file_size > limit:
        raise ValueError(
            f"its member {name!r} inflates to {archive.getinfo(name).file_size:,} bytes, more than a model's {limit:,}"
        )
    return archive.read(name)


def _rebuild(data: dict, state: dict[str, np.ndarray]) -> tuple[Callable[[np.ndarray], np.ndarray], dict[str, Any]]:
    policy = _policy_name(data.get("policy_class"))
    if policy not in _SB3_POLICIES:
        raise ValueError(
            f"its policy class is {policy!r}; urgym rebuilds {', '.join(_SB3_POLICIES)} (an MLP on "
            "the environment's flat observation)"
        )
    hidden, output, activation = _SB3_POLICIES[policy]
    activation = _activation(data.get("policy_kwargs") or {}, activation)
    observation = _space_size(data.get("observation_space"), "Box", "_shape")
    actions = _space_size(data.get("action_space"), "Discrete", "n")
    known = (hidden,) + ((output,) if output else ()) + _IGNORED_PREFIXES
    unknown = sorted({k.rsplit(".", 2)[0] for k in state if not k.startswith(known)})
    if unknown:
        raise ValueError(f"it has layers urgym does not rebuild: {unknown} (a custom feature extractor or network)")
    if any(k.startswith("features_extractor.") for k in state):
        raise ValueError("it has a feature extractor with weights; urgym rebuilds flat-observation MLPs only")
    layers = _linear_layers(state, hidden)
    head = (state[f"{output}.weight"], state[f"{output}.bias"]) if output else None
    _check_shapes([*layers, head] if head else layers, observation)
    if output:  # an actor-critic: hidden layers (each activated), then the action head
        body = MLP(layers, activation, hidden_last=True)

        def network(x: np.ndarray) -> np.ndarray:
            return (body(x) if layers else x) @ head[0].T + head[1]
    else:
        net = MLP(layers, activation, hidden_last=False)
        if policy == "QRDQNPolicy":
            quantiles = layers[-1][0].shape[0] // actions

            def network(x: np.ndarray) -> np.ndarray:
                return net(x).reshape(-1, quantiles, actions).mean(axis=1)
        else:
            network = net
    return network, {"policy": policy, "observation": observation, "actions": actions, "activation": activation}


def _check_shapes(layers: list[tuple[np.ndarray, np.ndarray]], observation: int) -> None:
    """Refuse layers that do not chain.

    Each weight ``[out, in]`` with ``in`` the previous ``out`` (the first the observation's length), and its bias
    ``[out]`` (numpy would broadcast a wrong one silently).
    """
    if not layers:
        raise ValueError("it has no layers")
    inputs = observation
    for k, (weight, bias) in enumerate(layers):
        if weight.ndim != 2 or weight.shape[1] != inputs:
            raise ValueError(
                f"its layer {k} has weights of shape {list(weight.shape)}, expected [n, {inputs}]"
                + (" (the observation's length)" if k == 0 else "")
            )
        if bias.shape != (weight.shape[0],):
            raise ValueError(f"its layer {k} has a bias of shape {list(bias.shape)}, expected [{weight.shape[0]}]")
        inputs = weight.shape[0]


def _policy_name(entry: object) -> str:
    """The policy class's name, read from the readable parts SB3 stores beside the pickle."""
    if not isinstance(entry, dict):
        raise ValueError("its data has no policy_class")
    for value in entry.values():
        match = re.match(r"<function (\w+)\.__init__", str(value))
        if match:
            return match.group(1)
    raise ValueError("its data does not name the policy class")


def _activation(kwargs: dict, default: str) -> str:
    text = kwargs.get("activation_fn")
    if text is None:
        return default
    match = re.fullmatch(r"<class 'torch\.nn\.modules\.activation\.(\w+)'>", str(text))
    if not match or match.group(1) not in ACTIVATIONS:
        raise ValueError(f"its activation {text!r} is not one urgym rebuilds ({', '.join(ACTIVATIONS)})")
    return match.group(1)


def _space_size(entry: object, kind: str, field: str) -> int:
    if not isinstance(entry, dict) or kind not in str(entry.get(":type:")):
        raise ValueError(
            f"its space {entry.get(':type:') if isinstance(entry, dict) else entry!r} is not a {kind} "
            "(urgym's environment has a Box observation and Discrete actions)"
        )
    value = entry.get(field)
    value = value[0] if isinstance(value, list) and len(value) == 1 else value
    if isinstance(value, str) and value.strip("[]").isdigit():
        value = int(value.strip("[]"))
    if not isinstance(value, int):
        raise ValueError(f"its {kind} space's {field} is {value!r}")
    return value


def _linear_layers(state: dict[str, np.ndarray], prefix: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The Linear layers of an ``nn.Sequential`` at ``prefix``, in order (activations hold no weights)."""
    indices = sorted({int(k[len(prefix) + 1 :].split(".")[0]) for k in state if k.startswith(prefix + ".")})
    return [(state[f"{prefix}.{i}.weight"], state[f"{prefix}.{i}.bias"]) for i in indices]


class SB3Agent(ScoringAgent):
    """A stable-baselines3 or sb3-contrib model trained on the observation of ``urgym/Ur-v2`` (v1's, unchanged).

    PPO, A2C, DQN, QR-DQN, MaskablePPO, TRPO, ...: it plays the legal action its network scores best (logits or Q-values
    masked at inference, so a model trained without masks plays legal moves too).

    Args:
        model: A model's ``.zip`` (read without unpickling, see :func:`load_sb3_network`), or a live model object
            (used during training).
        seed: Unused (the best move is deterministic, and samples come from each game's stream).
        sample: Draw from the softmax of the legal actions' scores (``sb3:PATH:sample=true``; meant for policies'
            logits, not Q-values) instead of playing the best.
    """

    def __init__(self, model: Any, seed: int | None = None, spec: str | None = None, sample: bool = False) -> None:
        if isinstance(model, (str, os.PathLike)):
            path = existing_file(model, "stable-baselines3 model")
            self.network, self.info = load_sb3_network(path)
            card = model_card(path)
            rules = Rules.from_dict(card["rules"]) if "rules" in card else None
            super().__init__(
                spec or f"sb3:{path.resolve()}", rules, self.info["actions"], self.info["observation"], seed, sample
            )
            self.cardless = None if card else path
        else:
            self.network, self.info = _live_network(model), {"policy": type(model.policy).__name__}
            super().__init__(
                spec or "sb3:live", None, int(model.action_space.n), int(model.observation_space.shape[0]), seed, sample
            )

    def scores(self, observations: np.ndarray) -> np.ndarray:
        """The model's action scores: logits, Q-values or mean quantiles."""
        return self.network(observations.astype(np.float32, copy=False))


def played_as_saved(model: Any, rules: Rules, spec: str = "sb3:live") -> SB3Agent:
    """A live stable-baselines3 model as ``sb3:PATH`` plays it once saved: the same numpy forward pass, bit for bit.

    A live model's own torch pass and the saved model's numpy pass (both float32, but summed in other orders) can
    order two near-equal scores differently; a figure measured during training must be the one ``evaluate`` gives for
    the saved model.
    """
    import tempfile

    from urgym.agents.models import write_model_card

    with tempfile.TemporaryDirectory(prefix="urgym-model-") as folder:
        path = Path(folder) / "model.zip"
        model.save(path)
        write_model_card(path, rules)
        return SB3Agent(path, spec=spec)


def _live_network(model: Any) -> Callable[[np.ndarray], np.ndarray]:
    """Action scores from a live SB3 model (during training): logits, Q-values or mean quantiles."""
    torch = require_extra("torch", "learn", "live stable-baselines3 models")
    policy = model.policy

    def network(x: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            obs = torch.as_tensor(x, dtype=torch.float32, device=policy.device)
            if hasattr(policy, "get_distribution"):
                return policy.get_distribution(obs).distribution.logits.cpu().numpy()
            if hasattr(policy, "quantile_net"):
                return policy.quantile_net(obs).mean(dim=1).cpu().numpy()
            return policy.q_net(obs).cpu().numpy()

    return network


# --- ONNX and TorchScript -------------------------------------------------------------------------------------
class OnnxAgent(ScoringAgent):
    """A network in ONNX (run by onnxruntime, the ``onnx`` extra).

    One float input ``[batch, obs]``, the first output the action scores ``[batch, L + 1]``. A network exported with a
    fixed batch size runs on slices of that size.
    """

    def __init__(self, path: str | os.PathLike, seed: int | None = None, sample: bool = False) -> None:
        path = existing_file(path, "ONNX model")
        ort = require_extra("onnxruntime", "onnx", "onnx: agents")
        try:
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as err:  # onnxruntime raises its own types for a file it cannot read
            raise ValueError(f"{path} is not an ONNX model onnxruntime can run: {err}") from None
        inputs = self._session.get_inputs()
        if len(inputs) != 1:
            raise ValueError(f"{path}: the network has {len(inputs)} inputs; urgym gives one (the observations)")
        self._input = inputs[0].name
        size = inputs[0].shape[-1] if inputs[0].shape else None
        batch = inputs[0].shape[0] if inputs[0].shape else None
        self._batch = batch if isinstance(batch, int) and batch > 0 else None  # exported with a fixed batch
        outputs = self._session.get_outputs()
        actions = outputs[0].shape[-1] if outputs and outputs[0].shape else None
        card = model_card(path)
        super().__init__(
            f"onnx:{path.resolve()}",
            Rules.from_dict(card["rules"]) if "rules" in card else None,
            actions if isinstance(actions, int) else None,
            size if isinstance(size, int) else None,
            seed,
            sample,
        )
        self.cardless = None if card else path

    def scores(self, observations: np.ndarray) -> np.ndarray:
        """The ONNX network's action scores."""
        if self._batch is None:
            return self._session.run(None, {self._input: observations})[0]
        # A network exported with a fixed batch (often 1) runs on slices of that size, the last one padded.
        parts = []
        for start in range(0, len(observations), self._batch):
            chunk = observations[start : start + self._batch]
            if len(chunk) < self._batch:  # only the last slice needs padding
                chunk = np.concatenate([chunk, np.zeros((self._batch - len(chunk), chunk.shape[1]), chunk.dtype)])
            parts.append(np.asarray(self._session.run(None, {self._input: chunk})[0]))
        return np.concatenate(parts)[: len(observations)]


class TorchScriptAgent(ScoringAgent):
    """A TorchScript network (``torch.jit.save``): observations ``[batch, obs]`` to action scores ``[batch, L + 1]``.

    A TorchScript file is a program: load only files you trust.
    """

    def __init__(self, path: str | os.PathLike, seed: int | None = None, sample: bool = False) -> None:
        path = existing_file(path, "TorchScript model")
        self._torch = require_extra("torch", "learn", "torchscript: agents")
        try:
            self._module = self._torch.jit.load(str(path), map_location="cpu").eval()
        except Exception as err:  # torch raises RuntimeError and others for a file it cannot read
            raise ValueError(f"{path} is not a TorchScript model: {err}") from None
        card = model_card(path)
        super().__init__(
            f"torchscript:{path.resolve()}",
            Rules.from_dict(card["rules"]) if "rules" in card else None,
            None,
            None,
            seed,
            sample,
        )
        self.cardless = None if card else path

    def scores(self, observations: np.ndarray) -> np.ndarray:
        """The TorchScript network's action scores."""
        with self._torch.no_grad():
            return self._module(self._torch.from_numpy(observations)).cpu().numpy()


PPOAgent = SB3Agent
"""The shipped PPO model's agent: any stable-baselines3 model (see :class:`SB3Agent`)."""
