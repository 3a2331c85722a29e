"""LangSmith's API as ``langsmith.evaluate`` uses it on local examples with
``upload_results=False``, on 127.0.0.1, for the LangChain page's doc test (stdlib only).

What the client asks for in that flow (read from langsmith 0.15's client and seen on the wire):
``GET /info`` (the server's version and flags) and ``POST /runs/multipart`` (the traces of the
target's and the evaluators' LangChain runs, which it sends although no results are uploaded).
``/info`` is answered with a version and no flags (the client keeps its defaults); each run of a
multipart body is parsed and kept in ``runs`` (its name, run type and project). Any other
request is answered 404 and kept in ``unknown``, so a client that asks for more shows up as a
failure of the test, not as a warning in a log. ``keys`` holds the API keys requests carried.

``serving()`` runs one with ``LANGSMITH_ENDPOINT`` and a dummy ``LANGSMITH_API_KEY`` set for
the block. langsmith caches the environment it read and its client: both are cleared on the
way in and out, and the client is flushed before the server stops.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from email.parser import BytesParser
from typing import Any
from unittest import mock

from _http import Handler, LoopbackServer

__all__ = ["LangSmithServer", "serving"]

KEY = "lsv2-fake-key"
# no batch_ingest_config: the client's defaults (multipart ingestion, batches of 100 runs)
INFO: dict[str, Any] = {"version": "0.0.0-fake", "instance_flags": {}}


class LangSmithServer(LoopbackServer):
    """The server; use as a context manager. ``url`` is the ``LANGSMITH_ENDPOINT``."""

    def __init__(self, *, lifetime: float = 300.0) -> None:
        self.runs: list[dict[str, Any]] = []
        self.unknown: list[str] = []
        self.keys: set[str] = set()
        self._lock = threading.Lock()
        super().__init__(_Handler, lifetime=lifetime)
        self.url = self.url.removesuffix("/v1")


class _Handler(Handler):
    def do_GET(self) -> None:
        self._route()

    def do_POST(self) -> None:
        self._route()

    def do_PATCH(self) -> None:
        self._route()

    def _route(self) -> None:
        owner: LangSmithServer = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        with owner._lock:
            owner.keys.add(self.headers.get("x-api-key") or "")
        if (self.command, self.path) == ("GET", "/info"):
            self._send(200, INFO)
        elif (self.command, self.path) == ("POST", "/runs/multipart"):
            runs = _runs(self.headers.get("Content-Type") or "", body)
            with owner._lock:
                owner.runs.extend(runs)
            self._send(202, {})
        else:
            with owner._lock:
                owner.unknown.append(f"{self.command} {self.path}")
            self._send(404, {"detail": "Not Found"})


def _runs(content_type: str, body: bytes) -> list[dict[str, Any]]:
    """The runs created in a multipart body: its parts named ``post.<id>`` (the others carry a
    run's inputs, outputs, events and extras as ``post.<id>.<field>``)."""
    message = BytesParser().parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + body)
    runs = []
    for part in message.walk():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if not (isinstance(name, str) and isinstance(payload, bytes)):
            continue  # the multipart container itself
        if name.startswith("post.") and name.count(".") == 1:
            run = json.loads(payload)
            runs.append({k: run.get(k) for k in ("id", "name", "run_type", "session_name")})
    return runs


@contextmanager
def serving() -> Iterator[LangSmithServer]:
    """A fake LangSmith API, and the langsmith client pointed at it for the block."""
    import langsmith
    from langsmith.run_trees import get_cached_client
    from langsmith.utils import get_env_var

    with LangSmithServer() as server:
        env = {"LANGSMITH_ENDPOINT": server.url, "LANGSMITH_API_KEY": KEY}
        try:
            with mock.patch.dict(os.environ, env):
                get_env_var.cache_clear()
                langsmith.configure(client=None)  # a client made before would not read env
                try:
                    yield server
                finally:
                    get_cached_client().flush(timeout=30)
                    langsmith.configure(client=None)
        finally:
            get_env_var.cache_clear()  # what it read with the environment restored
