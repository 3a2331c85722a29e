"""The loopback HTTP harness the test servers share (``batchserver``, ``faultserver``): a
threaded server on 127.0.0.1 at a free port that stops itself after ``lifetime`` seconds, and
a quiet handler that answers JSON or raw bytes. Stdlib only."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    owner: Any  # the LoopbackServer that serves it

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that time out or hang up are no failure of the server


class LoopbackServer:
    """Serves ``handler`` on 127.0.0.1; use as a context manager. ``url`` is the OpenAI
    ``base_url``; ``stopping`` is set once it stops."""

    def __init__(
        self, handler: type[Handler], *, lifetime: float, poll_interval: float = 0.5
    ) -> None:
        self.stopping = threading.Event()
        self._httpd = HTTPServer(("127.0.0.1", 0), handler)
        self._httpd.owner = self
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(poll_interval,), daemon=True
        )
        self._timer = threading.Timer(lifetime, self.stop)
        self._timer.daemon = True

    def start(self) -> Self:
        self._thread.start()
        self._timer.start()
        return self

    def stop(self) -> None:
        if self.stopping.is_set():
            return
        self.stopping.set()
        self._timer.cancel()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(value).encode(), headers=headers)

    def _send_raw(
        self,
        status: int,
        data: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, header in (headers or {}).items():
                self.send_header(name, header)
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up
            self.close_connection = True
