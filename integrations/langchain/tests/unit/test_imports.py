"""The public surface is exactly this."""

import langchain_ragrecall

# fmt: off
EXPECTED = [
    "CapturedRetrieval", "RecallCallbackHandler", "RecallEvaluator",
    "RecallRetriever", "References", "RetrieverStats", "as_runnable", "documents_to_chunks",
    "retrieve_samples",
]
# fmt: on


def test_all_is_pinned() -> None:
    assert sorted(langchain_ragrecall.__all__) == EXPECTED
    for name in EXPECTED:
        assert getattr(langchain_ragrecall, name) is not None


def test_constructors_refuse_unknown_keywords() -> None:
    """A misspelt keyword is an error, never silently ignored."""
    import pytest
    from fakes import ScriptedJudge
    from langchain_core.retrievers import BaseRetriever
    from pydantic import ValidationError

    from ragrecall import ClaimCache, ContextRecall

    class Empty(BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: object) -> list:  # type: ignore[override]
            return []

    metric = ContextRecall(ScriptedJudge(), cache=ClaimCache())
    builds = [
        lambda: langchain_ragrecall.RecallRetriever(retriever=Empty(), sink=None),
        lambda: langchain_ragrecall.RecallRetriever(retriever=Empty(), k=3),
        lambda: langchain_ragrecall.RecallCallbackHandler({}, loger=None),
        lambda: langchain_ragrecall.RecallEvaluator(metric, question="q"),
    ]
    for build in builds:
        with pytest.raises((TypeError, ValidationError)):
            build()
