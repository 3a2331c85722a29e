"""One implementation for sync and async scoring.

A metric is written once as a generator of steps: it yields a ``Call`` (a runnable and its
input) and is sent back the runnable's output, or has the exception thrown in. ``run_sync``
and ``run_async`` drive that generator and differ only in how they invoke the runnable.
Transient errors (rate limits, timeouts, 5xx) are retried here with backoff.

One concern over 300 lines: driving a metric's judge calls (retries, deadlines, sync and
async), which must read as one piece.
"""

from __future__ import annotations

import asyncio
import contextvars
import email.utils
import json
import random
import threading
import time
from collections.abc import Awaitable, Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel, ValidationError
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    Retrying,
    retry_if_exception,
)

from .._core.errors import JudgeError, JudgeRateLimitError
from .._core.schemas import Usage

__all__ = [
    "DEFAULT_TIMEOUT",
    "TRANSIENT_STATUS",
    "Call",
    "Limiter",
    "Policy",
    "Reply",
    "Steps",
    "ask",
    "run_async",
    "run_sync",
]

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """One judge call: a runnable producing ``{"raw", "parsed", "parsing_error"}``. The driver
    counts each attempt (retries included) in ``usage``."""

    runnable: Runnable[Any, Any]
    input: dict[str, Any]
    usage: Usage | None = None


Steps = Generator[Call, Any, T]


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


@dataclass
class Reply:
    """A validated reply and the raw message it came from."""

    parsed: BaseModel
    raw: AIMessage | None


def ask(call: Call, usage: Usage, check: Callable[[Any], None] | None = None) -> Steps[Reply]:
    """Yield ``call``; on an invalid reply re-ask once with the error. Adds to ``usage``
    (the driver counts the attempts, this the tokens).

    ``check`` may raise JudgeError to reject a reply that parsed but makes no sense.
    """
    retry: list[BaseMessage] = []
    for attempt in range(2):
        try:
            out = yield Call(call.runnable, {**call.input, "retry": retry}, usage)
        except ValidationError as err:  # a client that validates the reply itself rejected it
            out = {"raw": None, "parsed": None, "parsing_error": err}
        raw = out.get("raw")
        _add_usage(usage, raw)
        parsed = out.get("parsed")
        error = out.get("parsing_error") or "no structured output"
        if parsed is not None:
            try:
                if check is not None:
                    check(parsed)
                return Reply(parsed, raw if isinstance(raw, AIMessage) else None)
            except JudgeError as err:
                error = err
        text = _content(raw)
        if attempt == 0:
            retry = [
                AIMessage(content=text or "(empty reply)"),
                HumanMessage(
                    content=f"That reply was not valid: {error}. Reply again with only the JSON "
                    "object, exactly as specified."
                ),
            ]
    raise JudgeError(f"invalid reply after a re-ask: {error}", raw_output=text)


def _content(raw: Any) -> str:
    if isinstance(raw, AIMessage) and isinstance(raw.content, str):
        return raw.content
    return ""


def _add_usage(usage: Usage, raw: Any) -> None:
    meta = getattr(raw, "usage_metadata", None)
    if not meta:
        return
    usage.prompt_tokens += int(meta.get("input_tokens") or 0)
    usage.completion_tokens += int(meta.get("output_tokens") or 0)
    usage.cached_tokens += int((meta.get("input_token_details") or {}).get("cache_read") or 0)


class _Driver(Generic[T]):
    """Iterates over the calls ``steps`` yields; each call's ``reply`` or ``error``, set by the
    caller, is sent back before the next call is taken. ``result``: what ``steps`` returned."""

    def __init__(self, steps: Steps[T]):
        self.steps = steps
        self.reply: Any = None
        self.error: BaseException | None = None
        self.result: T

    def __iter__(self) -> Iterator[Call]:
        while True:
            try:
                call = self.steps.throw(self.error) if self.error else self.steps.send(self.reply)
            except StopIteration as stop:
                self.result = stop.value
                return
            self.reply, self.error = None, None
            yield call


def run_sync(steps: Steps[T], policy: Policy) -> T:
    """Drive ``steps`` with blocking calls, each under ``policy.timeout``."""
    driver = _Driver(steps)
    for call in driver:
        try:
            for attempt in Retrying(**_retry_args(policy)):
                with attempt:
                    if policy.limiter is not None:
                        policy.limiter.acquire_blocking()
                    _count(call, attempt.retry_state)
                    driver.reply = _invoke_within(call, policy.timeout)
        except Exception as exc:
            driver.error = exc
    return driver.result


async def run_async(steps: Steps[T], policy: Policy) -> T:
    """Drive ``steps`` with awaited calls, each under ``policy.timeout``."""
    driver = _Driver(steps)
    for call in driver:
        try:
            async for attempt in AsyncRetrying(**_retry_args(policy)):
                with attempt:
                    if policy.limiter is not None:
                        await policy.limiter.acquire()
                    _count(call, attempt.retry_state)
                    driver.reply = await _within(call.runnable.ainvoke(call.input), policy.timeout)
        except Exception as exc:
            driver.error = exc
    return driver.result


def _count(call: Call, state: RetryCallState) -> None:
    """Count an attempt before it is sent: a request that fails or times out was still made."""
    if call.usage is not None:
        call.usage.calls += 1
        call.usage.retries += int(state.attempt_number > 1)


def _invoke_within(call: Call, timeout: float | None) -> Any:
    """``call``'s result, or TimeoutError after ``timeout``. The call runs in a daemon thread
    (with this thread's context, so callbacks and tracing follow it); one that never returns
    is left behind, as ``asyncio.wait_for`` leaves a client that ignores cancellation."""
    if timeout is None:
        return call.runnable.invoke(call.input)
    outcome: list[Any] = []
    context = contextvars.copy_context()

    def target() -> None:
        try:
            outcome.append((True, context.run(call.runnable.invoke, call.input)))
        except BaseException as exc:  # handed to the caller's thread
            outcome.append((False, exc))

    thread = threading.Thread(target=target, name="ragrecall-judge-call", daemon=True)
    thread.start()
    thread.join(timeout)
    if not outcome:
        raise TimeoutError(f"the judge did not reply within {timeout:g} s")
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


async def _within(call: Awaitable[T], timeout: float | None) -> T:
    """``call``'s result, or TimeoutError (the builtin, which is transient) after ``timeout``."""
    try:
        return await asyncio.wait_for(call, timeout)
    except asyncio.TimeoutError:  # not the builtin TimeoutError before Python 3.11
        raise TimeoutError(f"the judge did not reply within {timeout:g} s") from None


def _retry_args(policy: Policy) -> dict[str, Any]:
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
