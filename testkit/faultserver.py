"""A misbehaving OpenAI-compatible judge on 127.0.0.1, for fault tests (stdlib only).

It answers ``POST /v1/chat/completions`` as the keyword judge of ``fakes`` does (a claim is
supported when its words all occur in a passage), in the shape the request asks for: a
``response_format`` (json_schema or json_object) gets JSON content, ``tools`` get a tool call.
Faults are scripted per request, deterministically:

- A request's *key* is a hash of its conversation up to the first user message and of its
  response format, so a re-ask (which appends turns) and a transport retry keep the key.
- The text of that conversation may carry a marker ``fault=NAME``; ``SCENARIOS[NAME]`` lists
  the faults for the key's attempts 0, 1, ...; later attempts are answered correctly.

Faults: ``rate_limit`` (429 with ``Retry-After``), ``server_error`` (500), ``hang`` (no reply
for ``hang_s``), ``drop`` (connection closed without a reply), ``truncated_body`` (the HTTP
body cut short), ``truncated`` (the reply's JSON cut in half), ``wrong_schema`` (valid JSON,
wrong fields), ``empty`` (an empty message), ``wrong_length`` (a batched reply one verdict
short), ``html_body`` (a 200 whose body is an HTML page, as a proxy's error page is),
``bad_utf8`` (a 200 whose body is not UTF-8) and ``retry_after_text`` (a 429 whose
``Retry-After`` is neither seconds nor a date). The server logs every request (key, attempt,
arrival time, fault) and counts what it injected. ``faults=False`` ignores the markers (a
clean run for comparison). It stops on ``stop()``, on leaving its ``with`` block, or after
``lifetime`` seconds.

For kill tests (a provider bills a request it received, answered or not): ``delay`` seconds
before each answer, ``answered`` (the indices in ``log`` of the requests answered), each
request's ``text`` (its messages' contents), and ``frozen()``, a block in which no request is
admitted or answered (kill the client inside it, and what the server saw is the state at
the kill).
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from _http import Handler, LoopbackServer
from fakes import keyword_reply
from langchain_core.messages import convert_to_messages

__all__ = ["FAULTS", "SCENARIOS", "FaultServer", "Request", "completion"]

FAULTS = (
    "rate_limit",
    "server_error",
    "hang",
    "drop",
    "truncated_body",
    "truncated",
    "wrong_schema",
    "empty",
    "wrong_length",
    "html_body",
    "bad_utf8",
    "retry_after_text",
)

# Scenario name -> the faults of attempts 0, 1, ... of each request key that carries it.
SCENARIOS: dict[str, tuple[str, ...]] = {
    **{fault: (fault,) for fault in FAULTS},
    "mixed": ("rate_limit", "server_error", "drop", "truncated"),
    "always_500": ("server_error",) * 50,
    "always_hang": ("hang",) * 50,
    "always_empty": ("empty",) * 50,
    "always_wrong_length": ("wrong_length",) * 50,
}

_MARKER = re.compile(r"fault=([a-z0-9_]+)")


@dataclass(frozen=True)
class Request:
    """One request as the server saw it."""

    key: str
    attempt: int
    at: float  # time.monotonic() on arrival
    scenario: str | None
    fault: str | None
    format: str  # what the client asked for: json_schema, json_object, tools or text
    text: str = ""  # the contents of its messages
    index: int = 0  # its place in the server's log
    max_tokens: int | None = None  # the reply's cap the client asked for


class FaultServer(LoopbackServer):
    """The server; use as a context manager. ``url`` is the OpenAI ``base_url``."""

    def __init__(
        self,
        *,
        faults: bool = True,
        retry_after: float = 1.0,
        hang_s: float = 5.0,
        lifetime: float = 120.0,
        delay: float = 0.0,
    ):
        self.faults = faults
        self.delay = delay
        self.answered: set[int] = set()
        self.retry_after = retry_after
        self.hang_s = hang_s
        self.log: list[Request] = []
        self.injected: Counter[str] = Counter()
        self._attempts: Counter[str] = Counter()
        self._lock = threading.Lock()
        super().__init__(_Handler, lifetime=lifetime)

    @contextmanager
    def frozen(self) -> Iterator[None]:
        """No request is admitted or answered while inside."""
        with self._lock:
            yield

    def _answered(self, request: Request) -> None:
        with self._lock:
            self.answered.add(request.index)

    def _admit(self, body: dict[str, Any]) -> Request:
        messages = body.get("messages") or []
        first_user = next(
            (i for i, m in enumerate(messages) if m.get("role") == "user"), len(messages)
        )
        head = messages[: first_user + 1]
        tools = [t.get("function", {}) for t in body.get("tools", [])]
        shape = json.dumps([body.get("response_format"), tools], sort_keys=True)
        key = hashlib.sha256(json.dumps([head, shape]).encode()).hexdigest()[:16]
        found = _MARKER.search(" ".join(str(m.get("content", "")) for m in head))
        scenario = found.group(1) if found and self.faults else None
        batched = '"verdicts"' in shape  # only a verdict list can have the wrong length
        with self._lock:
            attempt = self._attempts[key]
            self._attempts[key] += 1
            script = SCENARIOS.get(scenario, ()) if scenario else ()
            fault = script[attempt] if attempt < len(script) else None
            if fault == "wrong_length" and not batched:
                fault = None
            if scenario is not None and scenario not in SCENARIOS:
                fault = "unknown_scenario"
            text = " ".join(str(m.get("content", "")) for m in messages)
            request = Request(
                key,
                attempt,
                time.monotonic(),
                scenario,
                fault,
                _format(body),
                text,
                len(self.log),
                body.get("max_tokens") or body.get("max_completion_tokens"),
            )
            self.log.append(request)
            if fault is not None:
                self.injected[fault] += 1
        return request


def _format(body: dict[str, Any]) -> str:
    if body.get("tools"):
        return "tools"
    response_format = body.get("response_format") or {}
    return str(response_format.get("type", "text"))


def completion(body: dict[str, Any], fault: str | None = None) -> dict[str, Any]:
    """The chat.completion answering ``body`` as the keyword judge would, spoiled by ``fault``
    (``wrong_schema``, ``wrong_length``, ``empty``, ``truncated``; others leave it whole)."""
    reply: Any = keyword_reply(convert_to_messages(body.get("messages") or []))
    if fault == "wrong_schema":
        reply = {"verdict": "yes", "confidence": "high"}
    elif fault == "wrong_length":
        reply = {"verdicts": (reply.get("verdicts") or [])[:-1]}
    text = "" if fault == "empty" else json.dumps(reply)
    if fault == "truncated":
        text = text[: len(text) // 2]
    message: dict[str, Any] = {"role": "assistant", "content": text}
    tools = body.get("tools")
    if tools and fault != "empty":
        name = tools[0]["function"]["name"]
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": name, "arguments": text},
                }
            ],
        }
    prompt = sum(len(str(m.get("content", ""))) for m in body.get("messages") or []) // 4
    return {
        "id": "chatcmpl-fault",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fault-judge"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if "tool_calls" in message else "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": len(text) // 4,
            "total_tokens": prompt + len(text) // 4,
        },
    }


class _Handler(Handler):
    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        request = owner._admit(body)
        try:
            self._answer(owner, body, request)
        finally:
            owner._answered(request)

    def _answer(self, owner: FaultServer, body: dict[str, Any], request: Request) -> None:
        if owner.delay:
            owner.stopping.wait(owner.delay)
        owner._answered(request)  # before a byte of the answer is sent
        fault = request.fault
        if fault == "unknown_scenario":
            self._send(400, {"error": {"message": f"unknown scenario {request.scenario!r}"}})
        elif fault == "rate_limit":
            headers = {"Retry-After": f"{owner.retry_after:g}"}
            self._send(429, {"error": {"message": "slow down", "type": "rate_limit"}}, headers)
        elif fault == "retry_after_text":
            self._send(429, {"error": {"message": "slow down"}}, {"Retry-After": "soon"})
        elif fault in ("html_body", "bad_utf8"):
            if fault == "html_body":
                page = b"<html><body>Bad gateway</body></html>"
                self._send_raw(200, page, "text/html")
            else:
                self._send_raw(200, b'{"id": "\xff\xfe"}')
        elif fault == "server_error":
            self._send(500, {"error": {"message": "injected server error", "type": "server"}})
        elif fault == "hang":
            owner.stopping.wait(owner.hang_s)
            self._drop()
        elif fault == "drop":
            self._drop()
        elif fault == "truncated_body":
            data = json.dumps(completion(body, fault)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self._drop()
        else:
            self._send(200, completion(body, fault))

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
