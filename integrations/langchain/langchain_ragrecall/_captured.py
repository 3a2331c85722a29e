"""``CapturedRetrieval``: one retriever run, as ``RecallCallbackHandler`` saw it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.documents import Document

__all__ = ["CapturedRetrieval"]


@dataclass(frozen=True)
class CapturedRetrieval:
    """One retriever run as the handler saw it: ``documents`` is None until it ends (or if it
    failed, see ``error``); ``reference`` is the one in the run's metadata, if any."""

    run_id: UUID
    parent_run_id: UUID | None
    root_run_id: UUID
    name: str | None
    query: str
    documents: list[Document] | None = None
    error: str | None = None
    nested: bool = False
    reference: Any = field(default=None, repr=False)

    @property
    def finished(self) -> bool:
        return self.documents is not None
