"""The judge server's lifecycle and `LocalJudge`, with a stdlib fake in place of llama.cpp."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from pydantic import BaseModel

from ragrecall import JudgeModelError

# The local judge's server (private): its process, port, crashes and restarts, by hand.
from ragrecall._judge.local import LocalJudge, _server
from ragrecall._judge.local._server import JudgeServer, ServerConfig

pytestmark = pytest.mark.system  # child processes started, killed and orphaned

# Speaks the child's command line and the two endpoints we use; FAKE_MODE makes it misbehave.
FAKE_CHILD = textwrap.dedent(
    """
    import argparse, json, os, sys, time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from _child import ENV_API_KEY, watch_parent  # the real child's folder is on sys.path

    parser = argparse.ArgumentParser()
    for name in ("port", "slots", "context", "threads", "parent-pid"):
        parser.add_argument(f"--{name}", type=int)
    parser.add_argument("--model")
    args = parser.parse_args()
    key = os.environ.pop(ENV_API_KEY)
    mode = os.environ.get("FAKE_MODE", "")
    if mode == "exit":
        print("boom: cannot load the model", flush=True)
        sys.exit(3)
    if mode == "hang":
        time.sleep(60)
    watch_parent(args.parent_pid, interval=0.1)
    answer = {"supported": True, "chunk": 1}

    class Handler(BaseHTTPRequestHandler):
        def reply(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.reply(200 if self.path == "/health" else 404, {"status": "ok"})

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            if self.headers.get("Authorization") != f"Bearer {key}":
                return self.reply(401, {"error": {"message": "Invalid API Key"}})
            message = {"role": "assistant", "content": json.dumps(answer)}
            self.reply(200, {
                "id": "fake", "object": "chat.completion", "created": 0, "model": "fake",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10},
            })

        def log_message(self, *args):
            pass

    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()
    """
)


class Verdict(BaseModel):
    supported: bool
    chunk: int


@pytest.fixture
def fake_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    script = tmp_path / "fake_child.py"
    child_dir = Path(_server.__file__).parent
    script.write_text(f"import sys; sys.path.insert(0, {str(child_dir)!r})\n{FAKE_CHILD}")
    command = [sys.executable, str(script)]
    monkeypatch.setattr(_server, "CHILD_COMMAND", tuple(command))
    monkeypatch.delenv("FAKE_MODE", raising=False)
    yield command
    _server.shutdown_servers()  # the LocalJudge tests' shared servers


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF tiny fake model")
    return path


@pytest.fixture
def server(model: Path, fake_child: list[str]) -> Iterator[JudgeServer]:
    server = JudgeServer(ServerConfig(str(model)), command=fake_child, start_timeout=20)
    yield server
    server.stop()


def post(server: JudgeServer, key: str | None) -> int:
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    body = json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode()
    request = urllib.request.Request(f"{server.base_url}/chat/completions", body, headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as err:
        return err.code


def kill(server: JudgeServer) -> None:
    """SIGKILL the child and wait until it can be seen dead (as a crash would be)."""
    assert server._proc is not None
    os.kill(server._proc.pid, signal.SIGKILL)
    server._proc.wait(10)


def wait_dead(pid: int, timeout: float = 10) -> bool:
    """Whether ``pid`` (not our child) is gone, or a zombie nobody reaps, within ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            if Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] == "Z":
                return True
        except ProcessLookupError:
            return True
        except FileNotFoundError:  # no /proc: os.kill alone decides
            pass
        time.sleep(0.05)
    return False


def test_starts_on_loopback_with_a_key(server: JudgeServer) -> None:
    assert server.pid is None  # nothing runs before the first request
    server.ensure_running()
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
    assert post(server, server.api_key) == 200
    assert post(server, None) == 401
    assert server.model is not None and server.model.source == "explicit"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_key_is_not_in_argv(server: JudgeServer) -> None:
    server.ensure_running()
    argv = Path(f"/proc/{server.pid}/cmdline").read_bytes()
    assert server.api_key.encode() not in argv


def test_restarts_once_after_a_crash(server: JudgeServer, caplog) -> None:
    server.ensure_running()
    first, port = server.pid, server.port
    kill(server)
    with caplog.at_level(logging.WARNING, "ragrecall.judge"):
        server.ensure_running()
    assert "restarting" in caplog.text
    assert server.pid != first and server.port == port
    assert post(server, server.api_key) == 200


def test_second_death_in_a_row_raises(server: JudgeServer) -> None:
    server.ensure_running()
    kill(server)
    server.ensure_running()
    kill(server)
    with pytest.raises(JudgeModelError, match="died again"):
        server.ensure_running()


def test_a_success_between_deaths_allows_another_restart(server: JudgeServer) -> None:
    server.ensure_running()
    kill(server)
    server.ensure_running()
    server.mark_ok()
    kill(server)
    server.ensure_running()
    assert post(server, server.api_key) == 200


def test_early_exit_raises_with_log_tail(
    server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_MODE", "exit")
    with pytest.raises(JudgeModelError, match="boom: cannot load the model") as err:
        server.ensure_running()
    assert "exited (code 3)" in str(err.value)


def test_start_deadline(model: Path, fake_child: list[str], monkeypatch) -> None:
    monkeypatch.setenv("FAKE_MODE", "hang")
    server = JudgeServer(ServerConfig(str(model)), command=fake_child, start_timeout=1)
    with pytest.raises(JudgeModelError, match="did not get ready"):
        server.ensure_running()
    assert server.pid is None


def test_stop_then_start_again(server: JudgeServer) -> None:
    server.ensure_running()
    pid = server.pid
    server.stop()
    assert pid is not None and wait_dead(pid)
    server.ensure_running()
    assert post(server, server.api_key) == 200


def test_child_exits_when_the_parent_dies(model: Path, fake_child: list[str]) -> None:
    parent = textwrap.dedent(
        f"""
        import os
        from ragrecall._judge.local._server import JudgeServer, ServerConfig
        server = JudgeServer(ServerConfig({str(model)!r}), command={fake_child!r})
        server.ensure_running()
        print(server.pid, flush=True)
        os._exit(0)  # no atexit: only the child's watcher can stop it
        """
    )
    out = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert wait_dead(int(out.stdout))


def test_missing_model_raises_on_first_request_only(tmp_path: Path, fake_child: list[str]) -> None:
    judge = LocalJudge(tmp_path / "absent.gguf")  # constructing is cheap and never fails
    assert (judge.context_window, judge.slots) == (4096, 2)
    with pytest.raises(JudgeModelError, match="does not exist"):
        judge.invoke("hi")


def test_local_judge_settings(model: Path, fake_child: list[str]) -> None:
    judge = LocalJudge(model, slots=3, context_window=2048, threads=1)
    assert (judge.context_window, judge.slots) == (2048, 3)
    assert judge.model_name == "tiny"
    assert (judge.temperature, judge.logprobs, judge.top_logprobs) == (0, True, 5)
    assert judge.max_retries == 0
    assert judge.openai_api_base is not None
    assert judge.openai_api_base.startswith("http://127.0.0.1:")
    same = LocalJudge(model, slots=3, context_window=2048, threads=1)
    assert same._server is judge._server  # one server per configuration
    assert judge._server.pid is None


def test_local_judge_structured_output(model: Path, fake_child: list[str]) -> None:
    judge = LocalJudge(model, slots=1)
    out = judge.with_structured_output(Verdict, include_raw=True).invoke("claim")
    assert out["parsed"] == Verdict(supported=True, chunk=1)
    assert judge._server.pid is not None


async def test_local_judge_async(model: Path, fake_child: list[str]) -> None:
    judge = LocalJudge(model, slots=1, context_window=1024)
    out = await judge.with_structured_output(Verdict, include_raw=True).ainvoke("claim")
    assert out["parsed"] == Verdict(supported=True, chunk=1)
    kill(judge._server)  # the next request restarts it
    out = await judge.with_structured_output(Verdict).ainvoke("claim")
    assert out == Verdict(supported=True, chunk=1)


def test_local_judge_ignores_proxy_settings(
    model: Path, fake_child: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # nothing listens there
    judge = LocalJudge(model, slots=1, context_window=512)
    assert judge.with_structured_output(Verdict).invoke("claim") == Verdict(supported=True, chunk=1)


@pytest.mark.parametrize("reuse_port", [False, True])
def test_a_process_squatting_the_port_gets_neither_the_key_nor_a_sample(
    server: JudgeServer, reuse_port: bool
) -> None:
    """Another process takes the reserved port before the child and answers /health: the judge
    refuses to start and nothing with the key reaches the squatter (with SO_REUSEPORT both bind,
    and the port is still not the child's alone)."""
    seen: list[tuple[str, str, str | None]] = []

    class Squatter(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(("GET", self.path, self.headers.get("Authorization")))
            self.send_response(200)
            self.end_headers()

        do_POST = do_GET

        def log_message(self, *args: object) -> None:
            pass

    class Server(ThreadingHTTPServer):
        allow_reuse_port = reuse_port

    squatter = Server(("127.0.0.1", server.port), Squatter)
    threading.Thread(target=squatter.serve_forever, daemon=True).start()
    try:
        with pytest.raises(JudgeModelError, match=f"another process .*{server.port}"):
            server.ensure_running()
    finally:
        squatter.shutdown()
        squatter.server_close()
    assert server.pid is None
    assert all(path == "/health" and auth is None for _, path, auth in seen)


def test_the_childs_own_port_is_recognised() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert _server.holds_port(os.getpid(), port) is True
        assert _server.holds_port(os.getppid(), port) is False
