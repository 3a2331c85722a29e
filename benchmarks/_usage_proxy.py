"""A counting reverse proxy: every tool talks to the judge through it, so calls and tokens are
counted the same way for all of them, from the server's own ``usage``.

    with UsageProxy("http://127.0.0.1:8080/v1") as proxy:
        base_url = proxy.base_url("ragas")      # http://127.0.0.1:PORT/ragas/v1
        ...                                     # point a tool's OpenAI client at base_url
        proxy.tallies["ragas"].calls

The first path segment names the tool; the rest goes to the upstream server unchanged, with
the same headers (the API key included). Standard library only, loopback only, one thread per
client connection, one keep-alive upstream connection per thread. Responses are buffered, so a
streamed (SSE) reply reaches the client at once when it ends; its ``usage`` chunk still counts.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

__all__ = ["Tally", "UsageProxy"]

_HOP_HEADERS = {
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-length",
    "host",
    "proxy-connection",
    "te",
    "upgrade",
    "accept-encoding",
}


@dataclass
class Tally:
    """What one tool asked of the judge, as the judge server reported it."""

    calls: int = 0  # chat-completion responses with a usage block
    errors: int = 0  # non-2xx responses and upstream failures
    prompt_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens served from the server's prompt cache
    completion_tokens: int = 0
    truncated: int = 0  # choices that stopped on max_tokens (finish_reason "length")
    abandoned: int = 0  # replies that came after their client had hung up (gave up)
    busy_s: float = 0.0  # summed request latency (overlapping requests add up)
    server_s: float = 0.0  # the server's own prompt + generation time (llama.cpp ``timings``)

    def add(self, body: bytes, content_type: str) -> None:
        for reply in _replies(body, content_type):
            usage = reply.get("usage")
            if isinstance(usage, dict):
                self.calls += 1
                self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
                self.completion_tokens += int(usage.get("completion_tokens") or 0)
                self.cached_tokens += _cached(reply, usage)
                self.server_s += _server_seconds(reply)
            for choice in reply.get("choices") or []:
                if isinstance(choice, dict) and choice.get("finish_reason") == "length":
                    self.truncated += 1

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _cached(reply: dict[str, Any], usage: dict[str, Any]) -> int:
    details = usage.get("prompt_tokens_details") or {}
    if isinstance(details, dict) and details.get("cached_tokens") is not None:
        return int(details["cached_tokens"])
    timings = reply.get("timings") or {}  # llama.cpp's own report
    return int(timings.get("cache_n") or 0) if isinstance(timings, dict) else 0


def _server_seconds(reply: dict[str, Any]) -> float:
    timings = reply.get("timings") or {}
    if not isinstance(timings, dict):
        return 0.0
    return (float(timings.get("prompt_ms") or 0) + float(timings.get("predicted_ms") or 0)) / 1e3


def _replies(body: bytes, content_type: str) -> list[dict[str, Any]]:
    text = body.decode("utf-8", errors="replace")
    if "text/event-stream" in content_type:
        found = []
        for line in text.splitlines():
            if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
                try:
                    found.append(json.loads(line[5:]))
                except json.JSONDecodeError:
                    continue
        return [f for f in found if isinstance(f, dict)]
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return []
    return [value] if isinstance(value, dict) else []


class UsageProxy:
    """Forward ``/<tool>/<path>`` to ``upstream/<path>`` and tally each tool's usage."""

    def __init__(self, upstream: str, host: str = "127.0.0.1", timeout: float = 900.0):
        parts = urlsplit(upstream)
        if parts.hostname is None or parts.port is None:
            raise ValueError(f"upstream needs a host and port: {upstream!r}")
        self.upstream_host, self.upstream_port = parts.hostname, parts.port
        self.upstream_path = parts.path.rstrip("/")  # e.g. "/v1"
        self.timeout = timeout
        self.tallies: dict[str, Tally] = {}
        self.in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="usage-proxy", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def base_url(self, tool: str) -> str:
        """The OpenAI base URL a tool should use: ``http://host:port/<tool>/v1``."""
        host = self._server.server_address[0]
        return f"http://{host}:{self.port}/{tool}{self.upstream_path}"

    def tally(self, tool: str) -> Tally:
        with self._lock:
            return self.tallies.setdefault(tool, Tally())

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no request is in flight (abandoned ones still hold the judge)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if self.in_flight == 0:
                    return True
            time.sleep(0.2)
        return False

    def start(self) -> UsageProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> UsageProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _handler(proxy: UsageProxy) -> type[BaseHTTPRequestHandler]:
    local = threading.local()

    def upstream() -> http.client.HTTPConnection:
        conn = getattr(local, "conn", None)
        if conn is None:
            conn = http.client.HTTPConnection(
                proxy.upstream_host, proxy.upstream_port, timeout=proxy.timeout
            )
            local.conn = conn
        return conn

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the tools' HTTP clients expect

        def do_GET(self) -> None:
            self._forward()

        def do_POST(self) -> None:
            self._forward()

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet

        def _forward(self) -> None:
            tool, _, rest = self.path.lstrip("/").partition("/")
            tally = proxy.tally(tool or "unknown")
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_HEADERS}
            # The upstream path already ends in /v1; the tool's path starts with v1/ too.
            path = "/" + rest
            start = time.perf_counter()
            with proxy._lock:
                proxy.in_flight += 1
            try:
                status, reason, reply_headers, data = self._send(path, body, headers)
            except (OSError, http.client.HTTPException) as exc:
                local.conn = None
                status, reason, reply_headers = 502, "Bad Gateway", [("Content-Type", "text/plain")]
                data = f"usage proxy: upstream failed: {exc}".encode()
            elapsed = time.perf_counter() - start
            content_type = dict((k.lower(), v) for k, v in reply_headers).get("content-type", "")
            with proxy._lock:
                proxy.in_flight -= 1
                tally.busy_s += elapsed
                if 200 <= status < 300:
                    tally.add(data, content_type)
                else:
                    tally.errors += 1
            try:
                self.send_response(status, reason)
                for key, value in reply_headers:
                    if key.lower() not in _HOP_HEADERS:
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                with proxy._lock:
                    tally.abandoned += 1
                self.close_connection = True

        def _send(
            self, path: str, body: bytes | None, headers: dict[str, str]
        ) -> tuple[int, str, list[tuple[str, str]], bytes]:
            for attempt in range(2):  # a kept-alive connection the server closed: retry once
                conn = upstream()
                try:
                    conn.request(self.command, path, body=body, headers=headers)
                    response = conn.getresponse()
                    data = response.read()
                    return response.status, response.reason, response.getheaders(), data
                except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                    conn.close()
                    local.conn = None
                    if attempt == 1:
                        raise
            raise AssertionError("unreachable")

    return Handler
