"""Runnable examples (plain PPO, PettingZoo self-play, AlphaZero with mctx) and the reference UEI engine."""
