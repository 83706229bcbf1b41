"""``train --algo dqn``: DQN with action masks, on stable-baselines3's DQN.

stable-baselines3's DQN knows no action masks: it explores with any action and bootstraps from the best action of
the next state, legal or not, so on Ur most of its targets would come from moves that cannot be played. Here the
masks enter at both places, as in masked Q-learning:

- **acting**: epsilon-greedy over the legal actions only (a random legal action with chance epsilon, else the legal
  action of highest Q);
- **learning**: the target of a transition (s, a, r, s') is ``r + gamma (1 - done) max_{a' legal in s'}
  Q_target(s', a')``, the next state's legal actions kept in the replay buffer beside it.

The learner plays on the native vector environment against the opponents dealt to its games (``self``: its own live
policy, sampled from the softmax of its Q-values), as ``maskable-ppo`` does; the run's bookkeeping is
:class:`~urgym.evaluation.training.run.TrainingRun`'s, stable-baselines3's logger writes ``logs/``. The saved model
is a plain stable-baselines3 DQN zip: ``sb3:PATH`` (and ``DQN.load``) play it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from urgym.evaluation.training.learner import Algorithm
from urgym.evaluation.training.ppo import SB3Learner

from urgym.files import require_extra

__all__ = ["DQN", "DQNLearner", "DQNSettings", "masked_dqn_class"]


@dataclass(frozen=True)
class DQNSettings:
    """How ``train --algo dqn`` learns (the command's defaults are these)."""

    opponents: tuple[str, ...] = ("self", "greedy")
    """Agent specs dealt to the environments in turn; ``self`` is the learner's own live policy, sampled."""
    envs: int = 16
    """Environments stepped together."""
    buffer: int = 200_000
    """Transitions the replay buffer holds."""
    learning_starts: int = 10_000
    """Transitions played at random (legal) before learning starts."""
    batch: int = 256
    learning_rate: float = 1e-4
    target_update: int = 10_000
    """Steps between copies of the network into the target network."""
    exploration_fraction: float = 0.2
    """Share of the run over which epsilon falls from 1 to its final value."""
    final_epsilon: float = 0.02
    threads: int = 1
    """Torch threads of the learner."""


class MaskedSamples(NamedTuple):
    """A replay batch with the next states' legal actions."""

    observations: Any
    actions: Any
    next_observations: Any
    dones: Any
    rewards: Any
    next_masks: Any


def masked_dqn_class() -> type:
    """stable-baselines3's DQN with action masks in acting and in its targets (see the module docstring).

    Built on first use: stable-baselines3 is an optional extra.
    """
    torch = require_extra("torch", "learn", "train --algo dqn")
    sb3 = require_extra("stable_baselines3", "learn", "train --algo dqn")
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.buffers import ReplayBuffer

    class MaskedReplayBuffer(ReplayBuffer):
        """A replay buffer that keeps each transition's next legal actions (set by the learner before ``add``)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.next_masks = np.ones((self.buffer_size, self.n_envs, int(self.action_space.n)), dtype=bool)
            self.pending_masks: np.ndarray | None = None

        def add(self, obs, next_obs, action, reward, done, infos) -> None:
            self.next_masks[self.pos] = self.pending_masks
            super().add(obs, next_obs, action, reward, done, infos)

        def _get_samples(self, batch_inds: np.ndarray, env: Any = None) -> MaskedSamples:
            envs = np.random.randint(0, high=self.n_envs, size=(len(batch_inds),))
            data = (
                self.observations[batch_inds, envs, :],
                self.actions[batch_inds, envs, :],
                self.next_observations[batch_inds, envs, :],
                (self.dones[batch_inds, envs] * (1 - self.timeouts[batch_inds, envs])).reshape(-1, 1),
                self.rewards[batch_inds, envs].reshape(-1, 1),
            )
            tensors = tuple(self.to_torch(x) for x in data)
            return MaskedSamples(*tensors, torch.as_tensor(self.next_masks[batch_inds, envs], device=self.device))

    class MaskedDQN(sb3.DQN):
        """DQN acting and bootstrapping over the legal actions only."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, replay_buffer_class=MaskedReplayBuffer, **kwargs)

        def _sample_action(self, learning_starts: int, action_noise: Any = None, n_envs: int = 1):
            masks = get_action_masks(self.env)
            legal_random = _random_legal(masks)
            if self.num_timesteps < learning_starts:
                return legal_random, legal_random
            with torch.no_grad():
                obs = torch.as_tensor(self._last_obs, device=self.device)
                q = self.q_net(obs).cpu().numpy()
            greedy = np.where(masks, q, -np.inf).argmax(axis=1)
            explore = np.random.random_sample(n_envs) < self.exploration_rate
            action = np.where(explore, legal_random, greedy)
            return action, action

        def _store_transition(self, replay_buffer, buffer_action, new_obs, reward, dones, infos) -> None:
            replay_buffer.pending_masks = get_action_masks(self.env)  # of the states after this step
            super()._store_transition(replay_buffer, buffer_action, new_obs, reward, dones, infos)

        def train(self, gradient_steps: int, batch_size: int = 100) -> None:
            self.policy.set_training_mode(True)
            self._update_learning_rate(self.policy.optimizer)
            losses = []
            for _ in range(gradient_steps):
                data = self.replay_buffer.sample(batch_size)
                with torch.no_grad():
                    following = self.q_net_target(data.next_observations).masked_fill(~data.next_masks, -torch.inf)
                    best = following.max(dim=1).values.reshape(-1, 1)
                    best = torch.where(data.dones > 0, torch.zeros_like(best), best)  # no -inf * 0
                    target = data.rewards + (1 - data.dones) * self.gamma * best
                current = torch.gather(self.q_net(data.observations), dim=1, index=data.actions.long())
                loss = torch.nn.functional.smooth_l1_loss(current, target)
                losses.append(loss.item())
                self.policy.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.policy.parameters(), self.max_grad_norm)
                self.policy.optimizer.step()
            self._n_updates += gradient_steps
            self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
            self.logger.record("train/loss", float(np.mean(losses)))

    return MaskedDQN


def _random_legal(masks: np.ndarray) -> np.ndarray:
    """A uniformly random legal action of each row (from numpy's global stream, which the algorithm's seed sets)."""
    weights = masks * np.random.random_sample(masks.shape)
    return weights.argmax(axis=1)


class DQNLearner(SB3Learner):
    """DQN with action masks against opponents dealt to the environments in turn (see the module docstring)."""

    def make_model(self, env: Any, seed: int, settings: DQNSettings) -> Any:
        """Masked DQN with ``settings``: gamma 1, one gradient step per step of the environments, [128, 128]."""
        return masked_dqn_class()(
            "MlpPolicy",
            env,
            seed=seed,
            buffer_size=settings.buffer,
            learning_starts=settings.learning_starts,
            batch_size=settings.batch,
            learning_rate=settings.learning_rate,
            gamma=1.0,
            train_freq=1,
            gradient_steps=1,
            target_update_interval=settings.target_update,
            exploration_fraction=settings.exploration_fraction,
            exploration_final_eps=settings.final_epsilon,
            policy_kwargs={"net_arch": [128, 128]},
            device="cpu",
        )


DQN = Algorithm(
    name="dqn",
    learner=DQNLearner,
    settings=DQNSettings,
    policy_network=True,
    decisions_per_second=3_000,
    description="DQN with action masks (in acting and in its targets), against itself and greedy",
    requires=(("sb3_contrib", "learn"),),
    model_suffix=".zip",
    eval_every=200_000,
)
"""DQN with action masks (measured on finkel 4: about 3,000 decisions a second on one core)."""
