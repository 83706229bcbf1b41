"""Self-play on the PettingZoo environment: one policy plays both agents and learns from both sides.

The policy is a masked softmax over actions with linear logits (numpy only): both agents, ``light`` and
``dark``, act with it, each from its own observation, and after each game it takes one REINFORCE step
per agent with that agent's return (+1 or -1) against a running baseline. Everything it uses is
PettingZoo's API: ``agent_iter``, ``last``, the observation's ``action_mask`` and the rewards.

Run: ``python -m urgym.examples.selfplay_pettingzoo --games 3000 --pieces 3`` (prints its win rate against a
random player before and after training).
"""

from __future__ import annotations

import argparse

import numpy as np

from urgym.multiagent import env as make_env


class LinearPolicy:
    """Softmax over the legal actions of logits ``W @ observation + b``."""

    def __init__(self, n_observation: int, n_actions: int, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.w = np.zeros((n_actions, n_observation))
        self.b = np.zeros(n_actions)

    def probabilities(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The policy's move probabilities over the legal actions."""
        logits = self.w @ observation + self.b
        logits = np.where(mask.astype(bool), logits, -np.inf)
        p = np.exp(logits - logits.max())
        return p / p.sum()

    def act(self, observation: np.ndarray, mask: np.ndarray) -> tuple[int, np.ndarray]:
        """A sampled legal action, and the probabilities it was drawn from."""
        p = self.probabilities(observation, mask)
        return int(self.rng.choice(p.shape[0], p=p)), p


def play_game(game, policies: dict, seed: int) -> tuple[dict[str, float], dict[str, list]]:
    """Game ``seed``; ``policies[agent]`` is a LinearPolicy or None (a uniformly random legal move, seeded too).

    Returns each agent's return and its decisions (observation, probabilities, action) for learning.
    """
    game.reset(seed=seed)
    random_player = np.random.default_rng(seed)
    returns = {agent: 0.0 for agent in game.possible_agents}
    decisions: dict[str, list] = {agent: [] for agent in game.possible_agents}
    for agent in game.agent_iter():
        observation, reward, termination, truncation, _ = game.last()
        returns[agent] += reward
        if termination or truncation:
            game.step(None)
            continue
        obs, mask = observation["observation"], observation["action_mask"]
        policy = policies[agent]
        if policy is None:
            action = int(random_player.choice(np.flatnonzero(mask)))
        else:
            action, p = policy.act(obs, mask)
            decisions[agent].append((obs, p, action))
        game.step(action)
    return returns, decisions


def reinforce_step(policy: LinearPolicy, decisions: list, advantage: float, learning_rate: float) -> None:
    """Move the policy towards (advantage > 0) or away from its own choices in one game."""
    for obs, p, action in decisions:
        grad = -p
        grad[action] += 1.0  # d log pi(action) / d logits, zero outside the legal actions
        policy.w += learning_rate * advantage * np.outer(grad, obs)
        policy.b += learning_rate * advantage * grad


def new_policy(game, seed: int = 0) -> LinearPolicy:
    """A policy sized for the environment ``game``; all-zero logits play a uniformly random legal move."""
    space = game.observation_space("light")
    return LinearPolicy(space["observation"].shape[0], space["action_mask"].shape[0], seed)


def train(
    games: int, rules: str = "finkel", pieces: int | None = 3, seed: int = 0, learning_rate: float = 0.02
) -> LinearPolicy:
    """Self-play for ``games`` games; returns the policy."""
    game = make_env(rules=rules, pieces=pieces)
    policy = new_policy(game, seed)
    baseline = {agent: 0.0 for agent in game.possible_agents}  # light starts with an edge: one baseline each
    for g in range(games):
        returns, decisions = play_game(game, {"light": policy, "dark": policy}, seed=seed * 1_000_003 + g)
        for agent in game.possible_agents:
            reinforce_step(policy, decisions[agent], returns[agent] - baseline[agent], learning_rate)
            baseline[agent] += 0.01 * (returns[agent] - baseline[agent])
    return policy


def win_rate_against_random(
    policy: LinearPolicy, games: int, rules: str = "finkel", pieces: int | None = 3, seed: int = 10**9
) -> float:
    """The policy's share of wins against a random player, playing each side in half the games."""
    game = make_env(rules=rules, pieces=pieces)
    wins = 0
    for g in range(games):
        side = game.possible_agents[g % 2]
        other = game.possible_agents[1 - g % 2]
        returns, _ = play_game(game, {side: policy, other: None}, seed=seed + g)
        wins += returns[side] > 0
    return wins / games


def main() -> None:
    """Train by self-play, and print the win rate against a random player before and after."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=3000, help="self-play games (default 3000)")
    parser.add_argument("--rules", default="finkel")
    parser.add_argument("--pieces", type=int, default=3)
    parser.add_argument("--eval-games", type=int, default=1000)
    args = parser.parse_args()
    untrained = new_policy(make_env(rules=args.rules, pieces=args.pieces))
    print(
        f"before training: {win_rate_against_random(untrained, args.eval_games, args.rules, args.pieces):.1%} "
        "against a random player"
    )
    policy = train(args.games, args.rules, args.pieces)
    print(
        f"after {args.games:,} self-play games: "
        f"{win_rate_against_random(policy, args.eval_games, args.rules, args.pieces):.1%} against a random player"
    )


if __name__ == "__main__":
    main()
