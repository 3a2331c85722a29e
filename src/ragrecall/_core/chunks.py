"""A retrieved chunk, and a list of them read from what retrievers and datasets give:
strings, dicts (LangChain's ``page_content``) or Chunks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Chunk", "to_chunks"]


class Chunk(BaseModel):
    """One retrieved chunk of context."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="Stable id of the chunk; defaults to its 1-based position.")
    text: str = Field(description="The chunk's text as the retriever returned it.")
    score: float | None = Field(None, description="Retriever score, when known.")
    rank: int | None = Field(None, description="1-based rank in the retrieved list.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Retriever metadata.")


def to_chunks(value: Any) -> list[Any]:
    """Strings, dicts (``page_content`` read as ``text``) or Chunks as chunks, ids and ranks
    from their positions where they have none."""
    if value is None:
        return []
    if isinstance(value, str):
        raise ValueError("expected a list of strings or chunks, got one string")
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"expected a list of strings or chunks, got {type(value).__name__}")
    chunks: list[Any] = []
    for i, item in enumerate(value):
        if isinstance(item, Chunk):
            chunks.append(item)
        elif isinstance(item, str):
            chunks.append(Chunk(id=str(i + 1), text=item, rank=i + 1))
        elif isinstance(item, Mapping):
            chunk = {k: v for k, v in item.items() if v is not None}  # Arrow fills nulls
            if isinstance(chunk.get("metadata"), Mapping):  # to every struct's keys
                chunk["metadata"] = {k: v for k, v in chunk["metadata"].items() if v is not None}
            if "text" not in chunk and "page_content" in chunk:
                chunk["text"] = chunk.pop("page_content")
            chunk.setdefault("id", str(i + 1))
            chunk.setdefault("rank", i + 1)
            chunk["id"] = str(chunk["id"])
            chunks.append(chunk)
        else:
            raise ValueError(f"item {i} is {type(item).__name__}, not a string or chunk")
    return chunks
