"""Learned agents' models: the shipped PPO model and model cards (the JSON beside a model: its rules, how it was
trained, its measured regret).

The agent of a stable-baselines3 model is :class:`urgym.agents.neural.SB3Agent` (``PPOAgent`` here is the same
class); it plays with numpy alone (the weights are read without torch, which only training needs).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from urgym.agents.neural import SB3Agent, card_path, model_card

from urgym import Rules
from urgym.files import write_atomic

__all__ = ["DEFAULT_PPO_MODEL", "PPOAgent", "card_path", "model_card", "write_model_card"]

DEFAULT_PPO_MODEL = Path(__file__).parent / "models" / "ppo_finkel.zip"


def write_model_card(model_path: str | os.PathLike, rules: Rules, **facts: Any) -> Path:
    """Write a model's card atomically."""
    text = json.dumps({"rules": rules.to_dict(), **facts}, indent=2) + "\n"
    return write_atomic(card_path(model_path), lambda tmp: tmp.write_text(text))


PPOAgent = SB3Agent
"""The shipped PPO model's agent: any stable-baselines3 model (see :class:`urgym.agents.neural.SB3Agent`)."""
