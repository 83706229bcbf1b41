"""The models shipped with urgym, and model cards.

The package data beside this module: the shipped value networks (``neural_RULES_Np.npz``, ``td_finkel.npz``) and
the PPO model (``ppo_finkel.zip``), each with its card (``NAME.json``: the rules it learned, how it was trained and
what it measured; the measured figures live there, never in code) and its learning curve. A card is the JSON
beside any model: :func:`card_path`, read by :func:`model_card` and written by :func:`write_model_card`.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

from urgym import Rules, get_rules
from urgym.files import loads_json, read_bounded, write_atomic

__all__ = [
    "DEFAULT_PPO_MODEL",
    "DEFAULT_TD_MODEL",
    "MODELS",
    "card_path",
    "model_card",
    "shipped_model",
    "shipped_models",
    "td_model",
    "td_model_versions",
    "write_model_card",
]

MODELS = Path(__file__).parent
"""The folder of the shipped models."""
MAX_CARD_BYTES = 1 << 20
"""The largest model card read (a card is a few kilobytes of JSON)."""
DEFAULT_PPO_MODEL = MODELS / "ppo_finkel.zip"
"""The shipped MaskablePPO model (finkel), the ``ppo`` agent's default."""
DEFAULT_TD_MODEL = MODELS / "td_finkel.npz"
"""The shipped table-free network (finkel: TD(lambda) self-play distilled through its own search), ``td``'s default."""
TD_VERSION_PREFIX = "td_finkel_v"
"""Earlier table-free networks stay shipped as ``td_finkel_vN.npz`` (N from 1); the newest is ``td_finkel.npz``."""


def card_path(model_path: str | os.PathLike) -> Path:
    """The JSON card beside a model: ``model.zip`` -> ``model.json``."""
    return Path(model_path).with_suffix(".json")


def model_card(model_path: str | os.PathLike) -> dict[str, Any]:
    """The card of a model (rule set, how it was trained, measured regret); {} when there is none.

    Raises:
        ValueError: If the card is not a JSON object (naming the file).
    """
    path = card_path(model_path)
    if not path.exists():
        return {}
    data = loads_json(read_bounded(path, MAX_CARD_BYTES, "a model card"), str(path))
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a model card (a JSON object)")
    return data


@functools.cache
def shipped_models() -> dict[tuple[str, int], Path]:
    """The value networks shipped with the package, by (rule set, pieces).

    Read once: the package does not change while it runs.
    """
    found = {}
    for path in sorted(MODELS.glob("neural_*.npz")):
        name, _, pieces = path.stem.removeprefix("neural_").rpartition("_")
        if pieces.endswith("p") and pieces[:-1].isdigit():
            found[(name, int(pieces[:-1]))] = path
    return found


def shipped_model(rules: Rules) -> Path:
    """The shipped network of ``rules`` (a named rule set at a piece count a model was trained on).

    Raises:
        ValueError: If no shipped network learned these rules, naming those that exist.
    """
    models = shipped_models()
    key = (rules.name, rules.pieces)
    if key not in models or get_rules(rules.name, rules.pieces) != rules:
        have = ", ".join(f"{name} with {pieces} pieces" for name, pieces in models) or "none"
        what = (
            f"{rules.name} with {rules.pieces} pieces"
            if get_rules(rules.name, rules.pieces) == rules
            else repr(rules.describe())
        )
        raise ValueError(
            f"no shipped neural model plays {what} (shipped: {have}); train one with "
            f"`train --algo distill --rules {rules.name} --pieces {rules.pieces}` and pass "
            "neural:model=PATH"
        )
    return models[key]


@functools.cache
def td_model_versions() -> dict[int, Path]:
    """The shipped table-free networks by version: the earlier ones' numbers, and the newest after them."""
    versions = {}
    for path in MODELS.glob(f"{TD_VERSION_PREFIX}*.npz"):
        number = path.stem.removeprefix(TD_VERSION_PREFIX)
        if number.isdigit() and int(number) > 0:
            versions[int(number)] = path
    versions[max(versions, default=0) + 1] = DEFAULT_TD_MODEL
    return dict(sorted(versions.items()))


def td_model(version: int = 0) -> Path:
    """The shipped table-free network of ``version`` (0: the newest), which ``td:version=N`` plays.

    Raises:
        ValueError: If no shipped network has that version, naming those that exist.
    """
    versions = td_model_versions()
    if version == 0:
        return DEFAULT_TD_MODEL
    if version not in versions:
        have = ", ".join(str(number) for number in versions)
        raise ValueError(f"no shipped td network has version {version}; versions: {have} (0: the newest)")
    return versions[version]


def write_model_card(model_path: str | os.PathLike, rules: Rules, **facts: Any) -> Path:
    """Write a model's card atomically."""
    text = json.dumps({"rules": rules.to_dict(), **facts}, indent=2) + "\n"
    return write_atomic(card_path(model_path), lambda tmp: tmp.write_text(text))
