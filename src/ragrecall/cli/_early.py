"""Ctrl-C and SIGTERM in a ``ragrecall`` command, from its first import to its exit.

One handler takes both signals, and in the command-line process it is never taken away, so no
moment is left to Python's defaults (a traceback on SIGINT, a silent death on SIGTERM). What it
does depends on where the command is:

- starting (modules loading, arguments parsed): exit at once with 130 or 143 and one line,
  since nothing has been read or written;
- running (inside ``running()``, which ``_exit.guarded`` enters inside its ``try``): raise
  ``Interrupted``, a ``KeyboardInterrupt``, which the command turns into its exit code and a
  note of what it saved (``interrupted()`` says which signal it was);
- ended (the command has returned): exit with 130 or 143 and the word, output flushed.

A signal the parent process ignores (SIGINT, for a job a shell script runs in the background)
stays ignored, as Python itself leaves it. This module is imported first thing in
``ragrecall.cli``. When that import is the command line (``ragrecall ...`` or ``python -m
ragrecall.cli``) the handler is installed at once, so the imports are covered too; otherwise
``main()`` installs it for its call and puts the previous handlers back when it returns.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

__all__ = ["INTERRUPTED", "TERMINATED", "Interrupted", "install", "interrupted", "running"]

INTERRUPTED, TERMINATED = 130, 143  # the exit codes (the table is in ``_exit``)

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_STARTING, _RUNNING, _ENDED = "starting", "running", "ended"

_phase = _STARTING
_terminated = threading.Event()
_previous: dict[int, Any] = {}  # the handlers ours replaced, while ours are in place
_installs = 0


class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM while the command runs. A subclass, because CPython takes a plain
    ``KeyboardInterrupt`` that leaves code run by ``exec()`` (dataclasses build their methods
    so, on import) for one nobody handled, and at exit kills the process with SIGINT (-2)
    though the command handled it and asked for 130: it looks for that class exactly."""


def interrupted() -> tuple[int, str]:
    """The exit code and word for the interrupt being handled (Ctrl-C or SIGTERM)."""
    if _terminated.is_set():
        return TERMINATED, "terminated"
    return INTERRUPTED, "interrupted"


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if signum == signal.SIGTERM:
        _terminated.set()
    if _phase == _RUNNING:
        raise Interrupted
    code, word = interrupted()
    if _phase == _STARTING:
        os.write(2, f"{word} while starting; nothing was read or written\n".encode())
        os._exit(code)
    os.write(2, f"{word}\n".encode())
    raise SystemExit(code)  # ended: what the command printed is still flushed


def install() -> Callable[[], None]:
    """Take SIGINT and SIGTERM (the command is starting) until the returned function is
    called. Does nothing outside the main thread, where handlers cannot be set."""
    global _installs, _phase
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    if not _installs:
        for sig in _SIGNALS:  # one the parent ignores (a shell's background job) stays ignored
            if signal.getsignal(sig) is not signal.SIG_IGN:
                _previous[sig] = signal.signal(sig, _on_signal)
    _installs += 1
    _phase = _STARTING
    _terminated.clear()
    return _restore


def _restore() -> None:
    global _installs
    _installs -= 1
    if not _installs:
        for sig, handler in _previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        _previous.clear()


@contextmanager
def running() -> Iterator[None]:
    """While inside, a signal raises ``Interrupted`` (enter it inside the ``try`` that handles
    it); after, it ends the process with the exit code."""
    global _phase
    _phase = _RUNNING
    try:
        yield
    finally:
        _phase = _ENDED


def _command_line() -> bool:
    """Whether this process is the ``ragrecall`` command (``python -m ragrecall.cli`` shows
    ``-m`` while the package imports; the installed script is named ``ragrecall``)."""
    first = sys.argv[0] if sys.argv else ""
    return first == "-m" or Path(first).stem == "ragrecall"


if _command_line():
    install()  # kept until the process ends: the imports that follow are covered
