"""Judge selection: a chat model, a ``"provider:model"`` string, or the embedded local judge."""

from __future__ import annotations

import importlib
from typing import Any

from langchain_core.language_models import BaseChatModel

from ._schemas import JudgeInfo

__all__ = ["JudgeLike", "context_window", "judge_info", "resolve_judge"]

JudgeLike = BaseChatModel | str | None

# Used to pack contexts when a judge does not say how large its window is.
DEFAULT_CONTEXT_WINDOW = 32_000


def resolve_judge(judge: JudgeLike) -> BaseChatModel:
    """``None`` or ``"local"``: the embedded judge; ``"provider:model"``: that provider's chat
    model at temperature 0 (as ``init_chat_model`` resolves it); a chat model: itself."""
    if isinstance(judge, BaseChatModel):
        return judge
    if judge is None or judge == "local":
        from ._local import LocalJudge

        return LocalJudge()
    if isinstance(judge, str):
        return _from_string(judge)
    raise TypeError(f"judge must be a chat model, a 'provider:model' string or None, not {judge!r}")


def _from_string(spec: str) -> BaseChatModel:
    provider, _, model = spec.partition(":")
    if not model:
        raise ValueError(f"judge {spec!r}: expected 'provider:model', e.g. 'openai:gpt-4o-mini'")
    if provider == "openai":
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(model=model, temperature=0)
    try:
        chat_models = importlib.import_module("langchain.chat_models")
    except ImportError as err:
        raise ValueError(
            f"judge {spec!r}: install `langchain` (for init_chat_model) and the provider's "
            "package, or pass a chat model instance"
        ) from err
    model_obj: BaseChatModel = chat_models.init_chat_model(
        model, model_provider=provider, temperature=0
    )
    return model_obj


def judge_info(judge: BaseChatModel) -> JudgeInfo:
    """Model id and the parameters that decide its verdicts."""
    model = getattr(judge, "model_name", None) or getattr(judge, "model", None)
    params: dict[str, Any] = {}
    for name in ("temperature", "top_p", "seed", "max_tokens", "base_url", "openai_api_base"):
        value = getattr(judge, name, None)
        if value is not None:
            params["base_url" if name == "openai_api_base" else name] = value
    return JudgeInfo(
        model=str(model or type(judge).__name__), provider=judge._llm_type, params=params
    )


def context_window(judge: BaseChatModel) -> int:
    """Tokens the judge can read per request (``context_window`` attribute if it has one)."""
    value = getattr(judge, "context_window", None)
    return int(value) if isinstance(value, int) and value > 0 else DEFAULT_CONTEXT_WINDOW
