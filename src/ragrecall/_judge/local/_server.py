"""The embedded judge's llama.cpp server, run in a child process.

One server per process and configuration, started on the first request, bound to 127.0.0.1 on
a free port and protected by a random API key (given to the child in its environment, not its
argv). A crash of llama.cpp cannot take the caller down: the child is restarted once, on the
same port with the same key. The child watches its parent and exits when the parent is gone.

The port is reserved by binding and releasing it, so another local process could take it first
and answer in the child's place (and receive the key and every prompt). On Linux the server is
used only once the socket listening on its port is shown, through /proc, to be the child's own.
"""

from __future__ import annotations

import atexit
import http.client
import importlib.util
import logging
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ragrecall._core.errors import JudgeModelError

from ._child import ENV_API_KEY, HOST
from ._model import ModelInfo, resolve_model

__all__ = [
    "JudgeServer",
    "ServerConfig",
    "holds_port",
    "shared_server",
    "shutdown_servers",
    "wait_healthy",
]

logger = logging.getLogger("ragrecall.judge")

CHILD_COMMAND = (sys.executable, str(Path(__file__).with_name("_child.py")))
START_TIMEOUT = 180.0


def default_threads() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class ServerConfig:
    model_path: str | None = None  # None: resolve_model()'s default
    slots: int = 2  # requests served in parallel
    context_window: int = 4096  # tokens per slot
    threads: int = field(default_factory=default_threads)


def wait_healthy(host: str, port: int, timeout: float, alive: Callable[[], bool]) -> bool:
    """True once ``/health`` answers 200; False if ``alive()`` turns false or time runs out."""
    deadline = time.monotonic() + timeout
    while alive() and time.monotonic() < deadline:
        conn = http.client.HTTPConnection(host, port, timeout=2)
        try:
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                return True
        except (OSError, http.client.HTTPException):
            pass  # not listening yet
        finally:
            conn.close()
        time.sleep(0.1)
    return False


class JudgeServer:
    """A llama.cpp server in a child process, started on demand. Thread-safe."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        command: Sequence[str] | None = None,  # tests swap in a fake child
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        self.config = config
        self.port = _free_port()
        self.api_key = secrets.token_urlsafe(24)
        self.model: ModelInfo | None = None  # resolved on first start
        self._command = list(command or CHILD_COMMAND)
        self._needs_runtime = command is None
        self._start_timeout = start_timeout
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: Path | None = None
        self._restarted = False
        self._owner = os.getpid()

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def ensure_running(self) -> None:
        """Start the server, or restart it once if it died; raise `JudgeModelError` if it can't."""
        if os.getpid() != self._owner:  # a forked copy: the parent's server answers
            return
        with self._lock:
            if self._proc is not None:
                code = self._proc.poll()
                if code is None:
                    return
                if self._restarted:
                    raise JudgeModelError(
                        f"the local judge server died again after a restart (exit code {code})"
                        f"; not restarting it.\n{self._tail()}"
                    )
                logger.warning(
                    "The local judge server died (exit code %s); restarting it on port %d",
                    code,
                    self.port,
                )
                self._restarted = True
            self._start()

    def mark_ok(self) -> None:
        """A request succeeded: a later death may be restarted again."""
        self._restarted = False

    def stop(self) -> None:
        with self._lock:
            proc, self._proc = self._proc, None
            if proc is not None and os.getpid() == self._owner:
                proc.terminate()
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            if self._log is not None:
                self._log.unlink(missing_ok=True)
                self._log = None

    def _start(self) -> None:
        if self._needs_runtime and importlib.util.find_spec("xllamacpp") is None:
            raise JudgeModelError(
                "the embedded judge's runtime (llama.cpp) is not installed: "
                "pip install 'ragrecall[model]'"
            )
        if self.model is None:
            self.model = resolve_model(self.config.model_path)
        if self._log is None:
            fd, name = tempfile.mkstemp(prefix="ragrecall-judge-", suffix=".log")
            os.close(fd)
            self._log = Path(name)
        c = self.config
        argv = [*self._command, "--model", str(self.model.path), "--port", str(self.port)]
        argv += ["--slots", str(c.slots), "--context", str(c.context_window)]
        argv += ["--threads", str(c.threads), "--parent-pid", str(os.getpid())]
        with self._log.open("ab") as log:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, ENV_API_KEY: self.api_key},
                start_new_session=True,  # Ctrl-C reaches the caller only; atexit stops the child
            )
        started = time.monotonic()
        if not wait_healthy(HOST, self.port, self._start_timeout, lambda: proc.poll() is None):
            code = proc.poll()
            if code is None:
                proc.kill()
                proc.wait()
            why = f"exited (code {code})" if code is not None else "did not get ready in time"
            if _listeners(self.port) and holds_port(proc.pid, self.port) is False:
                why += f"; another process listens on its port {self.port}"
            raise JudgeModelError(
                f"the local judge server {why} while starting; its log ends with:\n{self._tail()}"
            )
        if holds_port(proc.pid, self.port) is False:
            proc.kill()
            proc.wait()
            raise JudgeModelError(
                f"another process answers on {HOST}:{self.port}, the port reserved for the local "
                "judge; it was not sent the API key or any sample. Stop that process, or create "
                "a new LocalJudge (it reserves a new port)."
            )
        self._proc = proc
        logger.info("Local judge ready on port %d in %.1f s", self.port, time.monotonic() - started)

    def _tail(self, lines: int = 20) -> str:
        try:
            text = self._log.read_bytes()[-8192:].decode(errors="replace") if self._log else ""
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


def holds_port(pid: int, port: int) -> bool | None:
    """Whether process ``pid`` holds every socket listening on ``port`` of this machine (None
    where /proc cannot tell: not Linux)."""
    listeners = _listeners(port)
    if listeners is None:
        return None
    held = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:  # closed meanwhile
            continue
        if link.startswith("socket:["):
            held.add(link[len("socket:[") : -1])
    return bool(listeners) and listeners <= held


def _listeners(port: int) -> set[str] | None:
    """Socket inodes listening on TCP ``port`` (IPv4 and IPv6), from /proc/net; None if absent."""
    found: set[str] | None = None
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        found = found or set()
        for row in rows:
            fields = row.split()  # sl local_address rem_address st ... uid timeout inode
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # LISTEN
                found.add(fields[9])
    return found


_servers: dict[ServerConfig, JudgeServer] = {}
_servers_lock = threading.Lock()


def shared_server(config: ServerConfig) -> JudgeServer:
    """This process's server for ``config`` (not started yet)."""
    with _servers_lock:
        if config not in _servers:
            _servers[config] = JudgeServer(config)
        return _servers[config]


def shutdown_servers() -> None:
    """Stop every judge server this process started; they restart on the next request."""
    with _servers_lock:
        servers = list(_servers.values())
    for server in servers:
        server.stop()


atexit.register(shutdown_servers)
