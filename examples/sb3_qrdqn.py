"""An sb3-contrib algorithm under urgym's benchmark: QR-DQN, through the learner API in a few lines.

``urgym bench --task finkel-3-v1 --algo examples/sb3_qrdqn.py:QRDQNLearner --out runs/qrdqn``

:class:`urgym.evaluation.bench.SB3Learner` keeps the rest: the environments and their opponents (``self`` is the live
learner), ``learn`` in chunks whose schedules follow the whole budget, the logs, checkpoints and the agent.
"""

from dataclasses import dataclass

from urgym.evaluation.bench import SB3Learner


@dataclass(frozen=True)
class QRDQNSettings:
    """What ``--set KEY=VALUE`` may change."""

    opponents: tuple[str, ...] = ("self", "greedy")
    envs: int = 16
    learning_rate: float = 1e-4
    exploration_fraction: float = 0.2


class QRDQNLearner(SB3Learner):
    """sb3-contrib's QR-DQN (distributional DQN), which knows no action masks."""

    name = "qr-dqn"
    Settings = QRDQNSettings
    policy_network = True  # its network chooses every move (an exact evaluation asks it at every decision)
    decisions_per_second = 2_500
    illegal_action = "replace"  # an illegal action plays the nearest legal move instead of losing the game

    def make_model(self, env, seed, settings):
        """QR-DQN on the environments, seeded."""
        from sb3_contrib import QRDQN

        return QRDQN(
            "MlpPolicy",
            env,
            seed=seed,
            learning_rate=settings.learning_rate,
            exploration_fraction=settings.exploration_fraction,
            gamma=1.0,
            policy_kwargs={"net_arch": [128, 128]},
            device="cpu",
        )
