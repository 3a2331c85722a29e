"""What ``RecallRetriever`` does to the retriever it wraps: ``with_k`` sets how many
documents it returns, on a copy; ``CONFIG`` and ``inner_config`` hand it the caller's config."""

from __future__ import annotations

from contextvars import ContextVar

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import patch_config
from pydantic import BaseModel

__all__ = ["CONFIG", "inner_config", "with_k"]


def with_k(retriever: Runnable[str, list[Document]], k: int) -> Runnable[str, list[Document]]:
    """A copy of ``retriever`` that returns ``k`` documents: its ``k`` field set, or ``k`` in
    its ``search_kwargs``; ValueError (a ValidationError from the constructor) otherwise."""
    fields = type(retriever).model_fields if isinstance(retriever, BaseModel) else {}
    if isinstance(retriever, BaseModel) and "k" in fields:
        return retriever.model_copy(update={"k": k})
    search_kwargs = getattr(retriever, "search_kwargs", None)
    if isinstance(retriever, BaseModel) and isinstance(search_kwargs, dict):
        return retriever.model_copy(update={"search_kwargs": {**search_kwargs, "k": k}})
    raise ValueError(
        f"k={k}: the wrapped retriever ({type(retriever).__name__}) has neither a `k` field nor "
        "`search_kwargs`, so RecallRetriever cannot set how many documents it returns; set "
        "that on the wrapped retriever instead"
    )


# The caller's config (configurable fields, tags, metadata) for the wrapped retriever, as
# LangChain's own EnsembleRetriever passes it on; callbacks become this run's children.
CONFIG: ContextVar[RunnableConfig | None] = ContextVar("ragrecall_retriever_config", default=None)


def inner_config(
    run_manager: CallbackManagerForRetrieverRun | AsyncCallbackManagerForRetrieverRun,
) -> RunnableConfig:
    return patch_config(CONFIG.get(), callbacks=run_manager.get_child())
