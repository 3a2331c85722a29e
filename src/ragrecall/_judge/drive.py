"""One implementation for sync and async scoring.

A metric is written once as a generator of steps: it yields a ``Call`` (a runnable and its
input) and is sent back the runnable's output, or has the exception thrown in. ``run_sync``
and ``run_async`` drive that generator and differ only in how they invoke the runnable.
Each call is made under a ``Policy`` (``retry.py``): transient errors (rate limits,
timeouts, 5xx) are retried with backoff, and a call past its deadline is a TimeoutError.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Awaitable, Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel, ValidationError
from tenacity import AsyncRetrying, RetryCallState, Retrying

from .._core.errors import JudgeError
from .._core.schemas import Usage
from .retry import Policy, retry_args

__all__ = [
    "Call",
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
            for attempt in Retrying(**retry_args(policy)):
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
            async for attempt in AsyncRetrying(**retry_args(policy)):
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
