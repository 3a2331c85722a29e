"""Drive the system's headless Chromium through the DevTools protocol over a pipe
(``--remote-debugging-pipe``: commands on fd 3, replies on fd 4, NUL-terminated JSON).
Nothing to install beyond Debian's chromium; nothing downloaded."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

CHROMIUM = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
)

# Key events as Input.dispatchKeyEvent wants them.
_SPECIAL = {"ArrowRight": 39, "ArrowLeft": 37, "Enter": 13}


def _high(fds: tuple[int, int]) -> tuple[int, int]:
    """The pipe's ends moved above fd 4, so that putting them at 3 and 4 clobbers neither."""
    moved = tuple(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds)
    for fd in fds:
        os.close(fd)
    return moved[0], moved[1]


class Browser:
    """One headless Chromium with one page; ``events`` holds every event received."""

    def __init__(self, profile: Path):
        assert CHROMIUM is not None, "headless Chromium is not installed (apt-get install chromium)"
        to_browser, self._write = _high(os.pipe())
        self._read, from_browser = _high(os.pipe())
        # The child finds the pipes at fds 3 and 4.
        self.process = subprocess.Popen(
            [
                CHROMIUM,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            pass_fds=(3, 4),
            preexec_fn=lambda: (os.dup2(to_browser, 3), os.dup2(from_browser, 4)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def send(self, method: str, params: dict[str, Any] | None = None, **kw: Any) -> Any:
        """Send a command (to the page's session once attached) and wait for its reply."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        session = kw.get("session", self.session)
        if session is not None:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._receive(60)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def _receive(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            assert time.monotonic() < deadline, "no reply from Chromium"
            chunk = os.read(self._read, 1 << 16)
            assert chunk, "Chromium closed its pipe"
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\0", 1)
        value: dict[str, Any] = json.loads(line)
        return value

    def open(self, url: str, domains: tuple[str, ...] = ("Page", "Runtime", "Log")) -> None:
        """Open ``url`` in a new page and wait until it has loaded; ``domains`` are enabled
        before it loads (add ``"Network"`` to see every request the page makes)."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        attached = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})
        self.session = attached["sessionId"]
        for domain in domains:
            self.send(f"{domain}.enable")
        self.send("Page.navigate", {"url": url})
        deadline = time.monotonic() + 30
        while self.evaluate("document.readyState") != "complete":
            assert time.monotonic() < deadline, f"{url} did not load"
            time.sleep(0.05)

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        return result["result"].get("value")

    def press(self, key: str) -> None:
        """A key press, as a person's keyboard sends it (keydown with its text, then keyup)."""
        code = _SPECIAL.get(key, ord(key.upper()) if len(key) == 1 else 0)
        down: dict[str, Any] = {"type": "keyDown", "key": key, "windowsVirtualKeyCode": code}
        if len(key) == 1:
            down["text"] = key
        self.send("Input.dispatchKeyEvent", down)
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": key})

    def export(self, downloads: Path, name: str = "labels.jsonl") -> Path:
        """Press the page's export key ("e") and wait for its download in ``downloads``;
        asserts the page logged no error (nothing blocked by its policy, no script error)."""
        self.press("e")
        exported = downloads / name
        for _ in range(200):
            if exported.exists() and exported.read_text().endswith("\n"):
                break
            self.evaluate("1")  # let events arrive
        errors = [
            e
            for e in self.events
            if e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error"
        ]
        assert not errors, errors
        return exported

    def close(self) -> None:
        with contextlib.suppress(AssertionError, OSError, RuntimeError):
            self.send("Browser.close", session=None)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._write)
        os.close(self._read)
