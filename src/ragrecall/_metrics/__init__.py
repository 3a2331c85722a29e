"""The metrics: the base class and its driver hooks, one module per metric, the list of them
(``registry``), and the machinery they share: claims (``claims/``), verdicts (``verdicts/``),
text work without a judge (``text/``), the decision, the prompts and the dry run's estimate."""
