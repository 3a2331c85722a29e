"""ragrecall's one long-lived event loop, on a background thread: ``run_blocking`` runs a
coroutine there and waits (the local engine's ``score``, each Ray worker's batch); ``blocking``
makes the sync twin of a coroutine function (``ragrecall.adapters.blocking``)."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

__all__ = ["CLEANUP_S", "blocking", "run_blocking"]

T = TypeVar("T")
P = ParamSpec("P")


def blocking(coroutine: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """The blocking twin of the coroutine function ``coroutine``, run on ragrecall's one
    long-lived loop (so it works inside notebooks, and async clients stay bound to a live
    loop across calls)."""

    @functools.wraps(coroutine)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_blocking(coroutine(*args, **kwargs))

    return run


_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def run_blocking(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on one long-lived background loop, so async clients cached by model
    libraries stay bound to a live loop across calls, and so this works inside notebooks.
    An interrupt (Ctrl-C, or SIGTERM as ``ragrecall eval`` takes it) cancels ``coro`` and
    waits for its cleanup (a results file closed) before it goes on up."""
    global _loop
    with _loop_lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="ragrecall-loop", daemon=True).start()
    ended = threading.Event()

    async def run() -> T:
        try:
            return await coro
        finally:
            ended.set()

    future = asyncio.run_coroutine_threadsafe(run(), _loop)
    try:
        return future.result()
    except KeyboardInterrupt:
        future.cancel()
        ended.wait(CLEANUP_S)
        raise


CLEANUP_S = 30.0  # seconds an interrupted run may take to clean up before the interrupt goes on
