"""LlamaIndex nodes as ragrecall chunks, keeping node id, score, rank and metadata."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from llama_index.core.schema import MetadataMode, NodeWithScore
from pydantic import BaseModel

from ragrecall import Chunk

__all__ = ["chunks_from_nodes", "response_text", "source_nodes"]


def chunks_from_nodes(nodes: Iterable[NodeWithScore]) -> list[Chunk]:
    """One chunk per node, best first; a node retrieved twice is kept once, at its first rank."""
    chunks: list[Chunk] = []
    seen: set[str] = set()
    for item in nodes:
        node_id = item.node.node_id
        if node_id in seen:
            continue
        seen.add(node_id)
        chunks.append(
            Chunk(
                id=node_id,
                text=item.node.get_content(metadata_mode=MetadataMode.NONE),
                score=item.score,
                rank=len(chunks) + 1,
                metadata=dict(item.node.metadata),
            )
        )
    return chunks


def source_nodes(response: Any) -> list[NodeWithScore] | None:
    """``response.source_nodes`` of any LlamaIndex response type, or None if it has none."""
    nodes = getattr(response, "source_nodes", None)
    return list(nodes) if nodes is not None else None


def response_text(response: Any) -> str | None:
    """The answer text of a Response / StreamingResponse / PydanticResponse, or None."""
    text = getattr(response, "response", None)
    if text is None and hasattr(response, "get_response"):
        text = response.get_response().response  # a StreamingResponse: drain it
    if text is None or isinstance(text, str):
        return text
    return text.model_dump_json() if isinstance(text, BaseModel) else str(text)
