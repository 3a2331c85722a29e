"""Judge selection: a chat model, a ``"provider:model"`` string, or the embedded local judge."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

from langchain_core.language_models import BaseChatModel

from .._core.schemas import JudgeInfo

__all__ = [
    "JudgeLike",
    "context_window",
    "import_judge",
    "is_embedded",
    "is_local",
    "judge_at",
    "judge_info",
    "resolve_judge",
]

# The one public judge type: a chat model, "provider:model" (or "local"), a factory called for
# the model (picklable ones travel to Ray workers: ``factory``, ``server``), or None (the
# embedded judge).
JudgeLike = BaseChatModel | str | Callable[[], BaseChatModel] | None

# Used to pack contexts when a judge does not say how large its window is.
DEFAULT_CONTEXT_WINDOW = 32_000


def resolve_judge(judge: JudgeLike) -> BaseChatModel:
    """``None`` or ``"local"``: the embedded judge; ``"provider:model"``: that provider's chat
    model at temperature 0 (as ``init_chat_model`` resolves it); a chat model: itself.

    The OpenAI clients built here do not retry on their own (``max_retries=0``): ragrecall
    retries, and counts every attempt in ``Usage.calls``. A chat model you pass keeps its own
    retries, which ragrecall cannot see; give it ``max_retries=0`` to have them counted. A
    factory is called (it must return a chat model)."""
    if isinstance(judge, BaseChatModel):
        return judge
    if judge is None or judge == "local":
        from .local import LocalJudge

        return LocalJudge()
    if isinstance(judge, str):
        return _from_string(judge)
    if callable(judge):
        made = judge()
        if not isinstance(made, BaseChatModel):
            raise TypeError(f"judge factory {judge!r} returned {type(made).__name__}")
        return made
    raise TypeError(
        f"judge must be a chat model, a 'provider:model' string, a factory or None, not {judge!r}"
    )


def _from_string(spec: str) -> BaseChatModel:
    provider, _, model = spec.partition(":")
    if not model:
        raise ValueError(f"judge {spec!r}: expected 'provider:model', e.g. 'openai:gpt-4o-mini'")
    if provider == "openai":
        import openai  # the provider's SDK: loaded when its judge is asked for, never before
        from langchain_openai import ChatOpenAI

        try:
            return ChatOpenAI(model=model, temperature=0, max_retries=0)
        except openai.OpenAIError as err:  # e.g. no OPENAI_API_KEY: one line, not a traceback
            raise ValueError(f"judge {spec!r}: {err}") from err
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


def judge_at(url: str, model: str | None = None, key_env: str | None = None) -> BaseChatModel:
    """A chat model on any OpenAI-compatible server (vLLM, llama.cpp, Ollama, LM Studio) at
    ``url``, with the key in the environment variable ``key_env``; without one, none is sent
    (never ``OPENAI_API_KEY``, which is not that server's to see)."""
    from langchain_openai import ChatOpenAI

    key = os.environ.get(key_env) if key_env else "not-needed"
    if not key:
        raise ValueError(f"--judge-key-env: ${key_env} is not set")
    return ChatOpenAI(
        base_url=url, api_key=key, model=model or "default", temperature=0, max_retries=0
    )


def import_judge(factory: str) -> BaseChatModel:
    """The chat model returned by ``factory`` ("module:callable"), imported and called."""
    module_name, _, attr = factory.partition(":")
    if not module_name or not attr:
        raise ValueError(f"judge factory: expected MODULE:CALLABLE, got {factory!r}")
    try:
        target = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as err:
        raise ValueError(f"judge factory {factory!r}: {err}") from err
    judge = target()
    if not isinstance(judge, BaseChatModel):
        raise ValueError(
            f"judge factory {factory!r} returned {type(judge).__name__}, not a LangChain chat model"
        )
    return judge


def is_embedded(judge: BaseChatModel) -> bool:
    """The embedded local judge (a LocalJudge; its module is loaded once one exists)."""
    chat = sys.modules.get("ragrecall._judge.local._chat")
    return chat is not None and isinstance(judge, chat.LocalJudge)


def judge_info(judge: BaseChatModel) -> JudgeInfo:
    """Model id and the parameters that decide its verdicts."""
    model = getattr(judge, "model_name", None) or getattr(judge, "model", None)
    params: dict[str, Any] = {}
    names = ["temperature", "top_p", "seed", "max_tokens"]
    if not is_embedded(judge):  # the embedded judge's URL has a per-process port
        names += ["base_url", "openai_api_base"]
    for name in names:
        value = getattr(judge, name, None)
        if value is not None:
            params["base_url" if name == "openai_api_base" else name] = value
    return JudgeInfo(
        model=str(model or type(judge).__name__), provider=judge._llm_type, params=params
    )


def is_local(judge: BaseChatModel) -> bool:
    """A judge served from this machine (its prompt cache makes per-claim calls cheap)."""
    if is_embedded(judge):
        return True
    return _host(judge) in ("127.0.0.1", "localhost", "::1")


def _host(judge: BaseChatModel) -> str | None:
    """The judge's server: the URL it was given, else the one its client took from the
    environment (``OPENAI_BASE_URL`` reaches only the client, ``OPENAI_API_BASE`` both)."""
    client = getattr(judge, "root_client", None)
    base_url = (
        getattr(judge, "openai_api_base", None)
        or getattr(judge, "base_url", None)
        or getattr(client, "base_url", None)
    )
    return urlparse(str(base_url)).hostname if base_url else None


def context_window(judge: BaseChatModel) -> int:
    """Tokens the judge can read per request (``context_window`` attribute if it has one)."""
    value = getattr(judge, "context_window", None)
    return int(value) if isinstance(value, int) and value > 0 else DEFAULT_CONTEXT_WINDOW
