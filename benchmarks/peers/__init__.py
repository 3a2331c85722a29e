"""ragrecall beside RAGAS and DeepEval on the same judge (needs .venv-peers)."""
