"""The games a person plays.

One human-against-agent session (:mod:`~urgym.evaluation.play.session`: the agent's moves, forced moves and passes,
hints from the table or a network's estimate, the record) under two thin shells, the terminal
(:mod:`~urgym.evaluation.play.terminal`, ``ur-play``) and the browser (:mod:`~urgym.evaluation.play.web`, ``ur-play
--web``); the pages are in :mod:`urgym.evaluation.pages`.
"""
