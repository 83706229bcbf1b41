"""The review of recorded games.

Every move judged against the solved table, with grades, accuracy and ratings (:mod:`~urgym.evaluation.review.grades`),
the luck of each roll (:mod:`~urgym.evaluation.review.luck`), one player over many games
(:mod:`~urgym.evaluation.review.summary`) and the shape of games, their length and branching
(:mod:`~urgym.evaluation.review.game_stats`).

The names of :mod:`~urgym.evaluation.review.grades` (and the page helpers the module ``urgym.evaluation.review``
of urgym 0.5 exported) are importable from here.
"""

from urgym.evaluation.pages import board_data, position_data, render_page
from urgym.evaluation.review import grades
from urgym.evaluation.review.grades import *  # noqa: F403 (the module's public names, listed once: grades.__all__)

__all__ = [*grades.__all__, "board_data", "position_data", "render_page"]
