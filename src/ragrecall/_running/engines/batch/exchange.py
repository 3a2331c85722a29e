"""The judge's HTTP exchange, answered from batch results.

A metric is replayed against a copy of its judge whose HTTP transport is an ``Exchange``: a
request already answered by a batch gets that answer, byte for byte as the provider sent it,
so the chat model, the reply parser and the usage count run as they do online; a request
not answered yet is noted (for the next batch) and raises ``Deferred``, which ends the replay
of that sample for this round. A request's id is the digest of its body, so the same request
(one reference's decomposition shared by several samples) is sent once.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Final

import httpx
from langchain_core.language_models import BaseChatModel
from langchain_openai import ChatOpenAI

from ragrecall._judge.structured import chat_completions

__all__ = ["Answer", "Deferred", "Exchange", "batch_judge", "request_id"]

ENDPOINT: Final = "/v1/chat/completions"


class Deferred(BaseException):
    """A request whose answer is not back yet (a BaseException: no retry or metric catches
    it, so it ends the sample's replay for this round)."""


@dataclass(frozen=True)
class Answer:
    """A batch's answer to one request: the provider's reply, or why there is none."""

    status: int
    body: dict[str, Any]

    @classmethod
    def failed(cls, reason: str) -> Answer:
        """A request given up on: a 400 (no retry) whose message the result's reason shows."""
        return cls(400, {"error": {"message": reason, "type": "batch_request_failed"}})


def request_id(body: dict[str, Any]) -> str:
    """The id of a request body (its ``custom_id`` in a batch)."""
    canonical = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "rr-" + hashlib.sha256(canonical.encode()).hexdigest()[:40]


@dataclass
class Exchange(httpx.BaseTransport):
    """Answers chat-completion requests from ``answers``; notes the others in ``asked``.
    ``used``: the ids of the requests seen since it was last cleared."""

    answers: dict[str, Answer] = field(default_factory=dict)
    asked: dict[str, dict[str, Any]] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if not request.url.path.endswith("/chat/completions"):
            return httpx.Response(404, json={"error": {"message": f"no route {request.url}"}})
        body = json.loads(request.read())
        key = request_id(body)
        self.used.add(key)
        answer = self.answers.get(key)
        if answer is None:
            self.asked.setdefault(key, body)
            raise Deferred(key)
        return httpx.Response(answer.status, json=answer.body, request=request)


def batch_judge(judge: BaseChatModel, exchange: Exchange) -> ChatOpenAI:
    """A copy of ``judge`` (a ChatOpenAI on the Chat Completions API) whose requests go to
    ``exchange``."""
    chat = judge if isinstance(judge, ChatOpenAI) else None
    if chat is None or not chat_completions(judge):
        raise ValueError(
            "batch mode needs an OpenAI-compatible judge on the Chat Completions API "
            f"(ChatOpenAI, 'openai:MODEL' or --judge-url), not {type(judge).__name__}"
        )
    root = chat.root_client.with_options(http_client=httpx.Client(transport=exchange))
    return chat.model_copy(update={"root_client": root, "client": root.chat.completions})
