"""The ``td`` agent: a network learned without the solved table, by self-play, played alone or searched.

The network is a :class:`urgym.agents.networks.value.ValueNetwork` over a feature set of :mod:`urgym.features`
estimating V(s), the winning chance of the side about to roll in s; a move is worth 1 if it wins, V(s') if it keeps
the turn and 1 - V(s') if it passes it. It plays as every value network does
(:class:`~urgym.agents.networks.neural.NeuralAgent`), by default the table-free finkel network that ships with the
package: TD(lambda) self-play (``train --algo td-lambda``, :mod:`urgym.evaluation.training.td_lambda`, as in
TD-Gammon) distilled into a larger network through its own two-ply search (``train --algo distill --teacher``).
"""

from __future__ import annotations

import os
from pathlib import Path

from urgym.agents.models import DEFAULT_TD_MODEL, td_model
from urgym.agents.networks.neural import NeuralAgent
from urgym.agents.networks.value import ValueNetwork

__all__ = ["DEFAULT_TD_MODEL", "TDAgent"]


class TDAgent(NeuralAgent):
    """Plays a table-free network: the move it rates best, or searched ``depth`` plies deeper (the one search).

    Args:
        model: A network file ``train`` wrote (any algorithm's, in the one network format or TD's older one), or a
            :class:`urgym.agents.networks.ValueNetwork`; by default the table-free network that ships with the
            package (finkel).
        seed: Unused (the agent is deterministic); accepted like every agent's.
        depth: Plies searched beyond the move with the network at the leaves (0: the best after-state).
        version: Which shipped network plays when ``model`` is not given (:func:`urgym.agents.models.td_model`):
            0 the newest, 1 the first (2026-11-29), and so on; earlier ones stay shipped so that their figures
            can be measured again.

    Raises:
        ValueError: If both ``model`` and ``version`` are given, or no shipped network has ``version``.
    """

    RULES_MISMATCH = "this TD model was trained on {learned!r}, not on {asked!r}"

    def __init__(
        self,
        model: str | os.PathLike | ValueNetwork | None = None,
        seed: int | None = None,
        depth: int = 0,
        version: int = 0,
    ) -> None:
        if model is not None and version:
            raise ValueError("give td a model file or a shipped version, not both")
        network = model if isinstance(model, ValueNetwork) else ValueNetwork.load(Path(model or td_model(version)))
        super().__init__(network, depth=depth, seed=seed, name="td")
        named = model is not None and not isinstance(model, ValueNetwork)
        self.spec = (
            "td"
            + (f":model={model}" if named else "")
            + (f":version={version}" if version else "")
            + (f":depth={depth}" if depth else "")
        )
