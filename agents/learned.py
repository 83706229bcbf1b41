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
from solver.table import rules_from_dict, rules_to_dict
from urgym import SIDES, Position, Rules
from urgym import _kernels as K
from urgym._tables import geometry

__all__ = ["DEFAULT_PPO_MODEL", "OpponentMix", "PPOAgent", "model_card", "write_model_card"]

DEFAULT_PPO_MODEL = Path(__file__).parent / "models" / "ppo_finkel.zip"


def _maskable_ppo():
    try:
        from sb3_contrib import MaskablePPO
    except ImportError:
        raise ImportError("PPO agents need the learn extra: pip install torch==2.13.0, then "
                          "pip install -e '.[learn]'") from None
    return MaskablePPO


def card_path(model_path: str | os.PathLike) -> Path:
    """The JSON card beside a model: ``model.zip`` -> ``model.json``."""
    return Path(model_path).with_suffix(".json")


def model_card(model_path: str | os.PathLike) -> dict[str, Any]:
    """The card of a model (rule set, how it was trained, measured regret); {} when there is none."""
    path = card_path(model_path)
    return json.loads(path.read_text()) if path.exists() else {}


def write_model_card(model_path: str | os.PathLike, rules: Rules, **facts: Any) -> Path:
    """Write a model's card atomically."""
    path = card_path(model_path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps({"rules": rules_to_dict(rules), **facts}, indent=2) + "\n")
    os.replace(tmp, path)
    return path


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
            self.rules: Rules | None = rules_from_dict(card["rules"]) if "rules" in card else None
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

    def select_move(self, position: Position, roll: int) -> int:
        moves = legal_moves_or_raise(position, roll)
        rules = position.rules
        if self.rules is not None and rules != self.rules:
            raise ValueError(f"this PPO model was trained on {self.rules.describe()!r}, not {rules.describe()!r}")
        if self._obs.shape != (2 * rules.length + 4 + rules.max_roll,) or self._mask.shape != (rules.length + 1,):
            raise ValueError(f"this PPO model's spaces do not fit {rules.describe()!r}")
        if len(moves) == 1:
            return moves[0]
        K.write_observation(position.code, SIDES.index(position.turn), roll, geometry(rules), self._obs)
        self._mask[:] = False
        self._mask[list(moves)] = True
        action, _ = self.model.predict(self._obs, action_masks=self._mask, deterministic=True)
        return int(action)


class OpponentMix(Agent):
    """A training opponent that is, for each episode, one of several: agent specs or the learner's past self.

    ``"self"`` stands for a frozen snapshot of the learner, drawn uniformly from the ``.zip`` files in
    ``snapshots`` (a random player until the first snapshot exists). The environment calls :meth:`reseed`
    on every reset, which draws the episode's opponent.
    """

    def __init__(self, specs: list[str], snapshots: str | os.PathLike | None = None, seed: int | None = None) -> None:
        from agents.registry import make_agent

        if not specs:
            raise ValueError("an opponent mix needs at least one opponent")
        if "self" in specs and snapshots is None:
            raise ValueError("self-play needs a snapshot directory")
        self.specs = list(specs)
        self.snapshots = Path(snapshots) if snapshots else None
        self._agents = {s: make_agent(s) for s in specs if s != "self"}
        self._frozen: dict[Path, PPOAgent] = {}
        self._fallback = make_agent("random")
        self.spec = "mix:" + ",".join(specs)
        self.current: Agent = self._fallback
        super().__init__(seed)

    def reseed(self, seed: int | None) -> None:
        super().reseed(seed)
        choice = self.specs[int(self.rng.integers(len(self.specs)))]
        if choice == "self":
            self.current = self._snapshot()
        else:
            self.current = self._agents[choice]
        self.current.reseed(int(self.rng.integers(2**63)))

    def _snapshot(self) -> Agent:
        files = sorted(self.snapshots.glob("*.zip")) if self.snapshots and self.snapshots.exists() else []
        if not files:
            return self._fallback
        path = files[int(self.rng.integers(len(files)))]
        if path not in self._frozen:
            self._frozen[path] = PPOAgent(path)
        return self._frozen[path]

    def select_move(self, position: Position, roll: int) -> int:
        return self.current.select_move(position, roll)
