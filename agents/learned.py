"""Agents learned with stable-baselines3: a MaskablePPO policy as an ordinary agent, and training opponents.

Needs the ``learn`` extra (``pip install torch==2.13.0`` first for the CPU build, then
``pip install -e ".[learn]"``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent, legal_moves_or_raise
from urgym import SIDES, Position, Rules, core
from urgym.core import geometry, observation_size
from urgym.files import loads_json, require_extra, write_atomic

__all__ = ["DEFAULT_PPO_MODEL", "PPOAgent", "model_card", "write_model_card"]

DEFAULT_PPO_MODEL = Path(__file__).parent / "models" / "ppo_finkel.zip"


def _maskable_ppo():
    return require_extra("sb3_contrib", "learn", "PPO agents").MaskablePPO


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
    card = loads_json(path.read_bytes(), str(path))
    if not isinstance(card, dict):
        raise ValueError(f"{path} is not a model card (a JSON object)")
    return card


def write_model_card(model_path: str | os.PathLike, rules: Rules, **facts: Any) -> Path:
    """Write a model's card atomically."""
    text = json.dumps({"rules": rules.to_dict(), **facts}, indent=2) + "\n"
    return write_atomic(card_path(model_path), lambda tmp: tmp.write_text(text))


class PPOAgent(Agent):
    """A MaskablePPO policy playing its deterministic (most likely) legal action.

    Args:
        model: A saved model (``.zip``) or a live ``MaskablePPO``; by default the model that ships with the
            package (finkel).
        seed: Unused (play is deterministic); accepted like every agent's.
    """

    def __init__(self, model: Any = None, seed: int | None = None) -> None:
        if model is None or isinstance(model, (str, os.PathLike)):
            path = Path(model or DEFAULT_PPO_MODEL)
            if not path.exists():
                raise FileNotFoundError(f"no PPO model at {path}")
            card = model_card(path)
            self.rules: Rules | None = Rules.from_dict(card["rules"]) if "rules" in card else None
            MaskablePPO = _maskable_ppo()
            import torch

            torch.set_num_threads(1)  # one move at a time: threads only add overhead (and workers run in parallel)
            self.model = MaskablePPO.load(path, device="cpu")
            self.spec = "ppo" if model is None else f"ppo:model={model}"
        else:
            self.model = model
            self.rules = None
            self.spec = "ppo:live"
        self._obs = np.zeros(self.model.observation_space.shape, dtype=np.float32)
        self._mask = np.zeros(self.model.action_space.n, dtype=bool)
        super().__init__(seed)

    def check_rules(self, rules: Rules) -> None:
        if self.rules is not None and rules != self.rules:
            raise ValueError(f"this PPO model was trained on {self.rules.describe()!r}, not {rules.describe()!r}")
        if self._obs.shape != (observation_size(rules),) or self._mask.shape != (rules.length + 1,):
            raise ValueError(f"this PPO model's spaces do not fit {rules.describe()!r}")

    def select_move(self, position: Position, roll: int) -> int:
        moves = legal_moves_or_raise(position, roll)
        rules = position.rules
        self.check_rules(rules)
        if len(moves) == 1:
            return moves[0]
        core.write_observation(position.code, SIDES.index(position.turn), roll, geometry(rules), self._obs)
        self._mask[:] = False
        self._mask[list(moves)] = True
        action, _ = self.model.predict(self._obs, action_masks=self._mask, deterministic=True)
        return int(action)
