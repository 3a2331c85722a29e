"""Retries and deadlines of a judge call: the ``Policy`` a metric runs under, the ``Limiter``
it may share with other processes, which errors are worth retrying (rate limits, timeouts,
5xx), and tenacity's arguments for them (backoff with jitter, or the server's Retry-After).
"""

from __future__ import annotations

import email.utils
import json
import random
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from tenacity import RetryCallState, retry_if_exception

from .._core.errors import JudgeRateLimitError

__all__ = [
    "DEFAULT_TIMEOUT",
    "TRANSIENT_STATUS",
    "Limiter",
    "Policy",
    "is_transient",
    "retry_after",
    "retry_args",
]

# Seconds a judge call may take: a full 4k-token window takes about a minute on two cores.
DEFAULT_TIMEOUT = 300.0


class Limiter(Protocol):
    """A rate limit shared beyond this process (``ragrecall.ray``'s cluster-wide gate).

    The driver awaits ``acquire`` (or calls ``acquire_blocking``) before every attempt, and
    calls ``retry_after`` when the judge asked for a pause, so every client sharing the
    limiter waits, not only the one that was told."""

    async def acquire(self) -> None: ...

    def acquire_blocking(self) -> None: ...

    def retry_after(self, seconds: float) -> None: ...


@dataclass(frozen=True)
class Policy:
    """Retries and deadline for each judge call.

    ``backoff``: seconds before the first retry of an error that names no ``Retry-After``;
    the wait doubles with each retry (up to a minute), plus up to ``backoff`` of jitter.
    ``max_wait``: the longest ``Retry-After`` honoured; a server that asks for more (a spent
    daily quota, say) ends the call at once with a JudgeRateLimitError saying so.
    ``limiter``: a rate limit shared with other processes (None: none).
    """

    max_retries: int = 3
    timeout: float | None = DEFAULT_TIMEOUT
    backoff: float = 1.0
    max_wait: float = 120.0
    limiter: Limiter | None = field(default=None, compare=False)


def retry_args(policy: Policy) -> dict[str, Any]:
    """Tenacity's arguments for one call under ``policy``."""

    def failure(state: RetryCallState) -> BaseException | None:
        return state.outcome.exception() if state.outcome else None

    def asked(state: RetryCallState) -> float | None:
        """The failed attempt's Retry-After, if its error carries one."""
        exc = failure(state)
        return retry_after(exc) if exc else None

    def wait(state: RetryCallState) -> float:
        """Honour a server's Retry-After; otherwise exponential backoff with jitter."""
        after = asked(state)
        if after is not None:
            if policy.limiter is not None and after <= policy.max_wait:
                policy.limiter.retry_after(after)
            return after
        backoff = policy.backoff * 2.0 ** (state.attempt_number - 1)
        return min(backoff + random.uniform(0, policy.backoff), 60.0)

    def too_long(state: RetryCallState) -> float | None:
        """The failed attempt's Retry-After, if it asks for more than ``policy.max_wait``."""
        after = asked(state)
        return after if after is not None and after > policy.max_wait else None

    def stop(state: RetryCallState) -> bool:
        return too_long(state) is not None or state.attempt_number > policy.max_retries

    def give_up(state: RetryCallState) -> Any:
        after = too_long(state)
        if after is not None:
            exc = failure(state)
            raise JudgeRateLimitError(
                f"the judge asked to retry after {after:g} s, more than the {policy.max_wait:g} s "
                f"allowed (Policy.max_wait): {type(exc).__name__}: {exc}",
                retry_after=after,
            ) from exc
        return state.outcome.result() if state.outcome else None  # re-raises the last error

    return {
        "retry": retry_if_exception(is_transient),
        "stop": stop,
        "wait": wait,
        "retry_error_callback": give_up,
    }


_TRANSIENT_NAMES = {
    "RateLimitError",
    "APITimeoutError",
    "APIConnectionError",
    "InternalServerError",
    "ServiceUnavailableError",
    "OverloadedError",
    "TimeoutException",
    "ConnectError",
    "RemoteProtocolError",
}
TRANSIENT_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 529}


def is_transient(exc: BaseException) -> bool:
    """Rate limits, timeouts, dropped connections, server errors and response bodies that are
    not the JSON the API speaks (a proxy's HTML error page, bytes that are not UTF-8) are worth
    retrying. (A reply whose *content* does not parse is not an exception here: it is re-asked.)"""
    if isinstance(exc, (TimeoutError, ConnectionError, json.JSONDecodeError, UnicodeDecodeError)):
        return True
    if isinstance(exc, ValueError) and str(exc).startswith("Unexpected response type"):
        return True
    if any(cls.__name__ in _TRANSIENT_NAMES for cls in type(exc).__mro__):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and status in TRANSIENT_STATUS


def retry_after(exc: BaseException) -> float | None:
    """Seconds from a ``Retry-After`` header on the error's HTTP response, if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:  # an HTTP date
        parsed = email.utils.parsedate_to_datetime(value)
    except (ValueError, TypeError, IndexError):
        return None  # neither: the usual backoff
    return max(0.0, parsed.timestamp() - time.time())
