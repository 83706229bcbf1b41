"""stable-baselines3 on the native vector environment: :class:`SB3VecEnv` (needs the ``learn`` extra).

SB3 and sb3-contrib algorithms (PPO, A2C, DQN, MaskablePPO, ...) train on a ``VecEnv``; this one steps
:class:`urgym.vector.UrVectorEnv`'s games in numba instead of one Python environment after another
(``DummyVecEnv``). MaskablePPO finds the masks through ``env_method("action_masks")`` as usual.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv

from urgym.vector import UrVectorEnv

__all__ = ["SB3VecEnv"]


class SB3VecEnv(VecEnv):
    """A stable-baselines3 ``VecEnv`` over :class:`urgym.vector.UrVectorEnv`.

    Takes a ``UrVectorEnv`` built with ``autoreset_mode=AutoresetMode.SAME_STEP`` (SB3 restarts an episode in the
    step that ends it), or builds one from ``UrVectorEnv``'s arguments: ``SB3VecEnv(num_envs=256, opponent="greedy")``.
    Each step's infos follow SB3: ``terminal_observation`` and ``TimeLimit.truncated`` where an episode ended, and
    ``illegal_action`` where an illegal action was replaced or lost. The environments share one object, so
    ``get_attr``/``set_attr``/``env_method`` act on the vector environment and answer once per index.
    """

    def __init__(self, env: UrVectorEnv | None = None, **kwargs: Any) -> None:
        if env is None:
            env = UrVectorEnv(**{"autoreset_mode": AutoresetMode.SAME_STEP, **kwargs})
        elif kwargs:
            raise ValueError("give either a UrVectorEnv or its arguments, not both")
        if env.autoreset_mode != AutoresetMode.SAME_STEP:
            raise ValueError(
                "stable-baselines3 restarts an episode in the step that ends it: build the UrVectorEnv "
                "with autoreset_mode=AutoresetMode.SAME_STEP"
            )
        self.env = env
        self._actions: np.ndarray | None = None
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)

    def reset(self) -> np.ndarray:
        """Reset every environment; return the observations."""
        seeds = None if all(s is None for s in self._seeds) else list(self._seeds)
        obs, _ = self.env.reset(seed=seeds)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Keep the actions for :meth:`step_wait`."""
        self._actions = np.asarray(actions).reshape(self.num_envs).astype(np.int64, copy=False)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Step every environment; return observations, rewards, dones and infos."""
        obs, rewards, terminated, truncated, info = self.env.step(self._actions)
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            final = info["final_obs"]
            for i in np.flatnonzero(dones):
                infos[i]["terminal_observation"] = final[i]
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        illegal = (
            info["final_info"]["illegal_action"] | info["illegal_action"] if dones.any() else info["illegal_action"]
        )
        for i in np.flatnonzero(illegal):
            infos[i]["illegal_action"] = True
        return obs, rewards.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """The legal actions of every environment, ``bool[num_envs, L + 1]``."""
        return self.env.action_masks()

    def close(self) -> None:
        """Close the vector environment."""
        self.env.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The attribute of the environments (of the vector environment: one value for all)."""
        return [getattr(self.env, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set an attribute of the vector environment."""
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> Any:
        """Call a method of the vector environment, once per environment asked."""
        chosen = self._indices(indices)
        if method_name == "action_masks":  # MaskablePPO's call, answered as one array
            return self.env.action_masks()[chosen]
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [result] * len(chosen)

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """No environment is wrapped."""
        return [False] * len(self._indices(indices))

    def get_images(self) -> Sequence[np.ndarray | None]:
        """The rendered images of the environments."""
        if self.env.render_mode != "rgb_array":
            return [None] * self.num_envs
        return list(self.env.render())

    def _indices(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        return list(indices)
