"""REINFORCE with a linear policy: ``urgym bench --task finkel-3-v1 --algo examples/own_learner.py:OwnLearner``."""

from dataclasses import dataclass

import numpy as np
from gymnasium.vector import AutoresetMode
from urgym.agents.outside.policies import PolicyAgent
from urgym.evaluation.bench import Learner

from urgym.vector import UrVectorEnv


class OwnLearner(Learner):
    """A softmax policy linear in the observation, moved towards the moves of the side that won."""

    name = "linear-reinforce"
    decisions_per_second = 100_000  # for the estimate before a run

    @dataclass(frozen=True)
    class Settings:
        """Games played at once and the step size (``--set envs=128`` changes one)."""

        envs: int = 64
        learning_rate: float = 0.01

    def setup(self, task, seed, settings, folder):
        """Self-play games (a finished one starts again within the step: every step is a decision)."""
        self.settings, self.rng, mode = settings, np.random.default_rng(seed), AutoresetMode.SAME_STEP
        self.env = UrVectorEnv(num_envs=settings.envs, rules=task.get_rules(), opponent="self", autoreset_mode=mode)
        self.obs, self.info = self.env.reset(seed=seed)
        self.weights = np.zeros((self.obs.shape[1], self.info["action_mask"].shape[1]))
        self.games, self.granularity = [[] for _ in range(settings.envs)], settings.envs  # a move per game a step

    def learn(self, decisions):
        """Steps of every game; at a game's end +1 for the winner's moves' log-chance gradients, -1 for the loser's."""
        for _ in range(-(-decisions // self.settings.envs)):
            logits = np.where(self.info["action_mask"], self.obs @ self.weights, -np.inf)
            p = (e := np.exp(logits - logits.max(axis=1, keepdims=True))) / e.sum(axis=1, keepdims=True)
            actions = (p.cumsum(axis=1) > self.rng.random((len(p), 1))).argmax(axis=1)
            for i, game in enumerate(self.games):
                game.append((self.info["player"][i], np.outer(self.obs[i], np.eye(p.shape[1])[actions[i]] - p[i])))
            self.obs, _, ended, _, self.info = self.env.step(actions)
            for i in np.flatnonzero(ended):  # the last mover won
                moves, self.games[i] = self.games[i], []
                step = sum(g if who == moves[-1][0] else -g for who, g in moves)
                self.weights = self.weights + self.settings.learning_rate * step
        return -(-decisions // self.settings.envs) * self.settings.envs

    def agent(self):
        """The policy as it is now (learning makes new weights), playing its most likely move."""
        return PolicyAgent(lambda obs, masks, w=self.weights: np.where(masks, obs @ w, -np.inf).argmax(axis=1))

    def state(self):
        """Everything it is (weights, random stream, games in progress): resumed, a seed ends as if never cut."""
        return dict(vars(self))

    def load(self, state):
        """Go on from :meth:`state`."""
        vars(self).update(state)
