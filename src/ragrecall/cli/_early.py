"""Ctrl-C and SIGTERM while the command is still starting: importing ragrecall's modules takes
seconds, and a signal then would print a traceback (SIGINT) or end the process silently
(SIGTERM). Importing this module, first thing in ``ragrecall.cli``, makes either one exit at
once with 130 or 143 and one word on stderr (nothing has been read or written yet);
``restore()`` puts the previous handlers back, and ``_exit.guarded`` handles both from there on.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

__all__ = ["install", "restore"]

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_previous: list[dict[int, Any]] = []


def _leave(signum: int, frame: FrameType | None) -> None:
    code, word = (143, "terminated") if signum == signal.SIGTERM else (130, "interrupted")
    os.write(2, f"{word} while starting; nothing was read or written\n".encode())
    os._exit(code)


def install() -> Callable[[], None]:
    """Leave quietly on SIGINT and SIGTERM until the returned function (or ``restore``) is
    called. Does nothing outside the main thread (where handlers cannot be set)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous: dict[int, Any] = {}
    for sig in _SIGNALS:
        handler = signal.signal(sig, _leave)
        previous[sig] = signal.SIG_DFL if handler is None else handler
    _previous.append(previous)
    return restore


def restore() -> None:
    """Put back the handlers the last ``install`` replaced."""
    if _previous and threading.current_thread() is threading.main_thread():
        for sig, handler in _previous.pop().items():
            signal.signal(sig, handler)


install()  # on import: the imports that follow in ragrecall.cli are covered
