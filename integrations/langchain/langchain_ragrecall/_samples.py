"""A dataset's questions through a retriever: the samples to score, or to compare two
retrievers on (``ragrecall eval`` each, then ``ragrecall compare``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.documents import Document
from langchain_core.runnables import Runnable, RunnableConfig

from ragrecall import Sample, load_samples

from ._documents import documents_to_chunks

__all__ = ["retrieve_samples"]


def retrieve_samples(
    retriever: Runnable[str, list[Document]],
    dataset: Any,
    *,
    column_map: Mapping[str, str] | None = None,
    config: RunnableConfig | None = None,
) -> list[Sample]:
    """Each sample of ``dataset`` (anything ``ragrecall.load_samples`` reads) with what
    ``retriever`` returns for its question as ``retrieved_contexts`` (document ids, ranks,
    scores and metadata kept), in one ``retriever.batch`` call (``config`` sets its
    ``max_concurrency``). Samples without a question are refused (ValueError)."""
    samples = load_samples(dataset, column_map)
    missing = [i for i, s in enumerate(samples) if not (s.user_input or "").strip()]
    if missing:
        raise ValueError(f"samples {missing[:5]} have no question to retrieve for")
    answers = retriever.batch([s.user_input or "" for s in samples], config)
    return [
        s.model_copy(update={"retrieved_contexts": documents_to_chunks(docs)})
        for s, docs in zip(samples, answers, strict=True)
    ]
