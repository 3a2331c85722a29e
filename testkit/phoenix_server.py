"""A Phoenix server of a test's own: ``phoenix serve`` from its own venv (.venv-phoenix), on
127.0.0.1 with its data in ``home``; the adapter's system tests and the Phoenix page's doc test
both start it here, and wait there until it holds the spans they sent."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PHOENIX = ROOT / ".venv-phoenix" / "bin" / "phoenix"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def phoenix_server(home: Path) -> Iterator[str]:
    """A running Phoenix server with its data in ``home``; its base URL. Ends it on exit."""
    if not PHOENIX.exists():
        pytest.fail(
            f"{PHOENIX} is missing: the Phoenix server runs from its own venv; make it with: "
            "python3 -m venv .venv-phoenix && .venv-phoenix/bin/pip install -r "
            "integrations/phoenix/tests/requirements-phoenix.txt (bash .ci/run does)"
        )
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_WORKING_DIR": str(home),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    with (home / "server.log").open("w") as log:
        server = subprocess.Popen(
            [str(PHOENIX), "serve"], env=env, stdout=log, stderr=subprocess.STDOUT
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                if server.poll() is not None:
                    pytest.fail(
                        f"phoenix serve exited: {(home / 'server.log').read_text()[-2000:]}"
                    )
                try:
                    if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail("phoenix serve did not answer /healthz within 120 s")
                time.sleep(0.5)
            yield url
        finally:
            server.terminate()
            try:
                server.wait(15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def wait_ingested(client: Any, project: str, span_ids: list[str]) -> None:
    """Until Phoenix (``client``: a ``phoenix.client.Client``) holds the spans of ``project``
    (it ingests in the background)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            found = client.spans.get_spans(project_identifier=project, span_ids=span_ids)
        except httpx.HTTPStatusError as err:  # 404: no span of the project is in yet
            if err.response.status_code != 404:
                raise
            found = []
        if len(found) == len(span_ids):
            return
        assert time.monotonic() < deadline, f"Phoenix holds {len(found)} of {len(span_ids)} spans"
        time.sleep(0.5)
