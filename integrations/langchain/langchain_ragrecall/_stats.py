"""``RetrieverStats``: what ``RecallRetriever`` did with its retrievals, counted as it goes."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RetrieverStats"]


@dataclass
class RetrieverStats:
    """Counts of retrievals: ``submitted`` ones were handed to the logger (its own ``stats``
    say what was scored and written); ``no_reference`` ones had no known reference (handed
    to ``RecallRetriever.live``, when there is one: its ``stats`` say what was sampled,
    scored and dropped); ``errors`` counts retrievals whose sample could not be built."""

    retrievals: int = 0
    submitted: int = 0
    no_reference: int = 0
    errors: int = 0
    sampled_out: int = 0  # referenced, outside ``sample_rate``: not scored, by design
    sample_rate: float = 1.0
