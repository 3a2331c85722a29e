"""`LocalJudge`: a `ChatOpenAI` that talks to the embedded llama.cpp server.

Constructing one is cheap: it reserves a port and a key but resolves the model and starts the
server only on the first request, so a missing model surfaces there as `JudgeModelError`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import openai
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai import ChatOpenAI
from pydantic import PrivateAttr

from ._model import model_id
from ._server import JudgeServer, ServerConfig, default_threads, shared_server

__all__ = ["LocalJudge"]

REQUEST_TIMEOUT = 600.0  # a full 4k-token prompt takes about a minute on two cores


class LocalJudge(ChatOpenAI):
    """The embedded judge (Qwen2.5-Coder-1.5B-Instruct by default) as a LangChain chat model.

    Temperature 0 and log-probabilities are on; retries are left to the caller.

    Args:
        model_path: a GGUF file. Default: $RAGRECALL_JUDGE_MODEL, else the pinned model,
            found or fetched on the first request (see `resolve_model`).
        slots: requests served in parallel.
        context_window: context tokens per slot.
        threads: CPU threads (default: all this process may use).
        **kwargs: passed on to `ChatOpenAI` (``max_tokens``, say).
    """

    _server: JudgeServer = PrivateAttr()

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        slots: int = 2,
        context_window: int = 4096,
        threads: int | None = None,
        **kwargs: Any,
    ) -> None:
        path = os.fspath(model_path) if model_path is not None else None
        config = ServerConfig(path, slots, context_window, threads or default_threads())
        server = shared_server(config)
        settings: dict[str, Any] = {
            "model": model_id(path),
            "temperature": 0,
            "logprobs": True,
            "top_logprobs": 5,
            "timeout": REQUEST_TIMEOUT,
            "max_retries": 0,
            # Ignore HTTP(S)_PROXY: the server is on this machine.
            "http_client": openai.DefaultHttpxClient(trust_env=False),
            "http_async_client": openai.DefaultAsyncHttpxClient(trust_env=False),
        }
        super().__init__(base_url=server.base_url, api_key=server.api_key, **{**settings, **kwargs})
        self._server = server

    @property
    def _llm_type(self) -> str:
        return "ragrecall-local"

    @property
    def context_window(self) -> int:
        return self._server.config.context_window

    @property
    def slots(self) -> int:
        return self._server.config.slots

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self._server.ensure_running()
        result = super()._generate(messages, *args, **kwargs)
        self._server.mark_ok()
        return result

    async def _agenerate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> ChatResult:
        await asyncio.to_thread(self._server.ensure_running)
        result = await super()._agenerate(messages, *args, **kwargs)
        self._server.mark_ok()
        return result

    def _stream(self, *args: Any, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        self._server.ensure_running()
        yield from super()._stream(*args, **kwargs)
        self._server.mark_ok()

    async def _astream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        await asyncio.to_thread(self._server.ensure_running)
        async for chunk in super()._astream(*args, **kwargs):
            yield chunk
        self._server.mark_ok()
