"""Any ragrecall metric as an LCEL ``Runnable``: a sample-like dict in, a RecallResult out.

The input is what ``Sample`` accepts (``question``/``user_input``, ``reference``/``ground_truth``,
``contexts``/``retrieved_contexts``, ...); contexts may be LangChain Documents, so a
retriever's output can be passed straight in::

    recall = as_runnable(ContextRecall())
    chain = RunnableParallel(
        question=RunnablePassthrough(), contexts=itemgetter("question") | retriever, ...
    ) | recall
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.documents import Document
from langchain_core.runnables import Runnable, RunnableLambda

from ragrecall import Metric, RecallResult, Sample

from ._documents import documents_to_chunks

__all__ = ["as_runnable"]

_CONTEXT_KEYS = ("retrieved_contexts", "contexts")


def _with_chunks(value: Sample | Mapping[str, Any]) -> Sample | Mapping[str, Any]:
    """``value`` with Documents among its contexts turned into chunks."""
    if isinstance(value, Sample) or not isinstance(value, Mapping):
        return value
    out = dict(value)
    for key in _CONTEXT_KEYS:
        contexts = out.get(key)
        if isinstance(contexts, list) and any(isinstance(c, Document) for c in contexts):
            out[key] = documents_to_chunks(
                c if isinstance(c, (Document, Mapping)) else Document(page_content=str(c))
                for c in contexts
            )
    return out


def as_runnable(metric: Metric[RecallResult]) -> Runnable[Sample | Mapping[str, Any], RecallResult]:
    """A ``RunnableLambda`` named after the metric; ``invoke`` calls ``metric.score`` and
    ``ainvoke`` ``metric.ascore``. Judge failures give an unscorable result, not an error."""

    def score(sample: Sample | Mapping[str, Any]) -> RecallResult:
        return metric.score(_with_chunks(sample))

    async def ascore(sample: Sample | Mapping[str, Any]) -> RecallResult:
        return await metric.ascore(_with_chunks(sample))

    return RunnableLambda(score, afunc=ascore, name=metric.name)
