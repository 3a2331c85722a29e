"""Building blocks the LangChain and LlamaIndex adapters share: where a query's reference
comes from, which run a retrieval belongs to, and ``blocking`` (the sync twin of a coroutine
function, run on the loop ``ragrecall.evaluate`` uses).

``References`` is a mapping ``query -> reference``, a dataset of samples (a list of dicts or
Samples, a DataFrame, a .jsonl/.json/.csv/.parquet path: anything ``ragrecall.load_samples``
reads), or a callable ``query -> reference | None``. A reference is a string, or a dict /
Sample that may also carry ``reference_claims`` (which skips decomposition).

``LiveScorer`` scores the retrievals that have no reference, off the request path, with a
metric that needs none (``no_reference_metric("sufficiency")``): sampled, held to a call
budget, on a bounded queue that drops and counts (``LiveStats``) rather than block.

``sampled`` picks the share of production traffic to score (``sample_rate=``), by a hash of
the query text or run id: the same queries are scored run after run.

``error_type`` is an unscorable result's class of failure, for a host's error field (OTel's
``error.type``, MLflow's ``AssessmentError.error_code``); ``explanation`` the result in words
and ``claim_metadata`` its per-claim verdicts as fields, as MLflow, Phoenix and the traces'
write-back all carry them. ``RETRIEVAL_STEP`` and ``RETRIEVAL_QUERY`` are the chunk metadata
keys that give a chunk of a sample joined from several retrieval steps (an agent's) the step
that first retrieved it and that step's query; both read them.
"""

import typing as _typing

from ._core.lazy import lazy as _lazy

# Each public name and the module it lives in, imported on first use.
_EXPORTS: dict[str, str] = {
    "ReferenceBook": "ragrecall._io.references",
    "References": "ragrecall._io.references",
    "as_reference": "ragrecall._io.references",
    "error_type": "ragrecall._io.references",
    "RETRIEVAL_QUERY": "ragrecall._io.traces.explain",
    "RETRIEVAL_STEP": "ragrecall._io.traces.explain",
    "claim_metadata": "ragrecall._io.traces.explain",
    "explanation": "ragrecall._io.traces.explain",
    "blocking": "ragrecall._running.loop",
    "LiveScorer": "ragrecall._running.live",
    "LiveStats": "ragrecall._running.live",
    "live_scorer": "ragrecall._running.live",
    "no_reference_metric": "ragrecall._running.live",
    "RunTree": "ragrecall._running.sampling",
    "SampleKey": "ragrecall._running.sampling",
    "check_rate": "ragrecall._running.sampling",
    "sampled": "ragrecall._running.sampling",
}


__getattr__, __dir__ = _lazy(__name__, _EXPORTS)


if _typing.TYPE_CHECKING:
    from ._io.references import ReferenceBook, References, as_reference, error_type
    from ._io.traces.explain import RETRIEVAL_QUERY, RETRIEVAL_STEP, claim_metadata, explanation
    from ._running.live import LiveScorer, LiveStats, live_scorer, no_reference_metric
    from ._running.loop import blocking
    from ._running.sampling import RunTree, SampleKey, check_rate, sampled

__all__ = [
    "RETRIEVAL_QUERY",
    "RETRIEVAL_STEP",
    "LiveScorer",
    "LiveStats",
    "ReferenceBook",
    "References",
    "RunTree",
    "SampleKey",
    "as_reference",
    "blocking",
    "check_rate",
    "claim_metadata",
    "error_type",
    "explanation",
    "live_scorer",
    "no_reference_metric",
    "sampled",
]
