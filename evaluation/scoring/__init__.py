"""Match play and scoring against perfect play.

Matches between agents with every decision scored (:mod:`~urgym.evaluation.scoring.match`), the position benchmark and
its regret (:mod:`~urgym.evaluation.scoring.positions`), round-robin tournaments
(:mod:`~urgym.evaluation.scoring.tournament`), an agent's card over every rule set
(:mod:`~urgym.evaluation.scoring.card`), intervals and regret summaries (:mod:`~urgym.evaluation.scoring.stats`), the
parallel runner (:mod:`~urgym.evaluation.scoring.runner`), reports (:mod:`~urgym.evaluation.scoring.report`) and the
numba kernels of match play (``_kernels``).
"""
