"""Batch mode: a judge answered through a provider's Batch API (see run.py)."""
