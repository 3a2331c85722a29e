"""LangChain integration of ragrecall: context recall for retrievers, chains and LangSmith."""

from ragrecall.adapters import References

from ._callbacks import CapturedRetrieval, RecallCallbackHandler
from ._documents import documents_to_chunks
from ._langsmith import RecallEvaluator
from ._retriever import RecallRetriever, RetrieverStats
from ._runnable import as_runnable
from ._samples import retrieve_samples

__all__ = [
    "CapturedRetrieval",
    "RecallCallbackHandler",
    "RecallEvaluator",
    "RecallRetriever",
    "References",
    "RetrieverStats",
    "as_runnable",
    "documents_to_chunks",
    "retrieve_samples",
]
