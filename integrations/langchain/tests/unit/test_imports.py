"""The public surface is exactly this."""

import langchain_ragrecall

# fmt: off
EXPECTED = [
    "CapturedRetrieval", "HashingEmbeddings", "RecallCallbackHandler", "RecallEvaluator",
    "RecallRetriever", "References", "RetrieverStats", "as_runnable", "documents_to_chunks",
    "retrieve_samples",
]
# fmt: on


def test_all_is_pinned() -> None:
    assert sorted(langchain_ragrecall.__all__) == EXPECTED
    for name in EXPECTED:
        assert getattr(langchain_ragrecall, name) is not None
