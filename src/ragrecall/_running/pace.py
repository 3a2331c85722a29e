"""``PerMinute``: a ``Limiter`` (``_judge/retry.py``) that holds judge calls to a number in
any minute, for the live scoring of unreferenced retrievals; a wait ends early, with
``Stopped``, when its ``stop`` event is set (the scorer closed); ``check_args``: the live
scorer's options checked."""

from __future__ import annotations

import threading
import time
from collections import deque

from .sampling import check_rate

__all__ = ["PerMinute", "Stopped", "check_args"]


class Stopped(Exception):
    """The scorer closed while a judge call waited for the budget."""


class PerMinute:
    """A ``Limiter``: at most ``calls`` judge calls in any ``window`` seconds; ``stop`` ends a
    wait."""

    def __init__(self, calls: int, stop: threading.Event, window: float = 60.0):
        self.calls, self.stop, self.window = calls, stop, window
        self._sent: deque[float] = deque()
        self._paused_until = 0.0
        self._lock = threading.Lock()

    def acquire_blocking(self) -> None:
        while True:
            with self._lock:
                now = time.monotonic()
                while self._sent and self._sent[0] <= now - self.window:
                    self._sent.popleft()
                wait = max(self._paused_until - now, 0.0)
                if len(self._sent) >= self.calls:
                    wait = max(wait, self._sent[0] + self.window - now)
                if wait <= 0:
                    self._sent.append(now)
                    return
            if self.stop.wait(wait):
                raise Stopped("the live scorer closed while waiting for its call budget")

    async def acquire(self) -> None:  # the worker scores synchronously; for the protocol
        self.acquire_blocking()

    def retry_after(self, seconds: float) -> None:
        with self._lock:
            self._paused_until = max(self._paused_until, time.monotonic() + seconds)


def check_args(*, sample_rate: float, max_calls_per_minute: int | None, max_queue: int) -> None:
    """ValueError naming the argument that is out of range."""
    check_rate(sample_rate)
    if max_calls_per_minute is not None and (
        isinstance(max_calls_per_minute, bool)
        or not isinstance(max_calls_per_minute, int)
        or max_calls_per_minute < 1
    ):
        raise ValueError(
            f"max_calls_per_minute must be a whole number >= 1 or None, not "
            f"{max_calls_per_minute!r}"
        )
    if isinstance(max_queue, bool) or not isinstance(max_queue, int) or max_queue < 1:
        raise ValueError(f"max_queue must be a whole number >= 1, not {max_queue!r}")
