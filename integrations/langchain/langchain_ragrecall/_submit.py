"""``RecallCallbackHandler``'s live logging: ``submit`` hands the sample of one retriever run,
or of all the retrievals under one root run (``group_by="trace"``), to the logger, or, with
no reference known, to the live scorer; ``reference_of`` finds the reference, and ``steps``
gives ``step_chunks`` their documents."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any
from uuid import UUID

from langchain_core.documents import Document

from ragrecall import RecallLogger, Sample
from ragrecall.adapters import LiveScorer, ReferenceBook, as_reference

from ._captured import CapturedRetrieval
from ._documents import documents_to_chunks, step_chunks
from ._live import offer_chunks

__all__ = ["reference_of", "steps", "submit"]


def submit(
    logger: RecallLogger,
    live: LiveScorer | None,
    run_id: UUID,
    members: Sequence[CapturedRetrieval],
    reference: Sample | None,
) -> None:
    """Log the sample of ``members``: one retriever run's (``run_id`` its own; its parent run
    id and retriever name in the record's ``extra``) or a root run's retrievals (``run_id``
    the root's; ``extra`` lists their retrievers and run ids, and the chunks say their step).
    Without a ``reference`` it goes to ``live`` (if any), the first query as its question."""
    extra: dict[str, Any]
    if len(members) == 1 and members[0].run_id == run_id:
        parent = members[0].parent_run_id
        extra = {"parent_run_id": str(parent) if parent else None, "retriever": members[0].name}
        chunks = partial(documents_to_chunks, members[0].documents or [])
    else:
        extra = {
            "retrievers": [r.name for r in members],
            "retrieval_run_ids": [str(r.run_id) for r in members],
        }
        chunks = partial(step_chunks, steps(members))
    if reference is None:
        if live is not None:
            query = members[0].query
            offer_chunks(live, query, query, chunks, str(run_id), extra)
        return
    sample = reference.model_copy(update={"retrieved_contexts": chunks()})
    logger.submit(sample, run_id=str(run_id), extra=extra)


def steps(members: Sequence[CapturedRetrieval]) -> list[tuple[str, list[Document]]]:
    """Each retrieval's (query, documents), in the order given (start order)."""
    return [(r.query, r.documents or []) for r in members]


def reference_of(members: Sequence[CapturedRetrieval], book: ReferenceBook) -> Sample | None:
    """The first reference known for ``members``: in a run's metadata, else in ``book`` by
    its query."""
    for retrieval in members:
        reference = as_reference(retrieval.query, retrieval.reference)
        if reference is None and book:
            reference = book.lookup(retrieval.query)
        if reference is not None:
            return reference
    return None
