"""One rate limit and one budget for the whole cluster: a Ray actor every worker asks.

Requests are spaced evenly at ``rpm`` (each attempt reserves the next slot, so no burst runs
past the limit), tokens are drawn from a bucket refilled at ``tpm`` (a sample's tokens are
spent when it finishes, so the bucket may go below zero and then holds every worker until
it refills), and a ``Retry-After`` from the provider moves every worker's next slot past it.
A sample starts only if its estimated calls and tokens fit beside what the cluster spent and
reserved (``max_calls``, ``max_tokens``): the gate holds the run's ``Budget``, the one every
engine spends against.

A worker asks the gate only what its limits need: with ``rpm`` or ``tpm``, the slots of the
requests waiting at once in one round trip; with neither, no round trip per request (a pause
another worker was told of is learnt in the background, at most ``REFRESH`` seconds late);
with a budget, one
``admit`` per sample. What a sample spent is told right away with ``tpm`` or a budget, and
once per batch otherwise (it only counts then).
"""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass
from typing import Any

import ray
import ray.cloudpickle

from ragrecall._running import budget as _budget
from ragrecall._running.budget import Budget

__all__ = ["REFRESH", "Gate", "GateClient", "Limits"]

REFRESH = 0.1  # seconds between an unpaced worker's looks at the cluster's pause

# What this module and the budget define travel by value (not as names to import): the gate's
# process then imports Ray only, not ragrecall (about 2 CPU-s less to start, and it answers
# ~1.7 s sooner). ``_budget`` imports nothing else.
for _module in (sys.modules[__name__], _budget):
    ray.cloudpickle.register_pickle_by_value(_module)  # type: ignore[no-untyped-call]


@dataclass(frozen=True)
class Limits:
    """Requests and tokens per minute for the whole cluster, and its budget (None: none)."""

    rpm: float | None = None
    tpm: float | None = None
    max_calls: int | None = None
    max_tokens: int | None = None

    @property
    def paced(self) -> bool:
        """Whether every request waits for its slot from the gate."""
        return bool(self.rpm or self.tpm)

    @property
    def budgeted(self) -> bool:
        return self.max_calls is not None or self.max_tokens is not None


class Gate:
    """The shared state (run as one Ray actor)."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.next_slot = 0.0  # monotonic time of the next free request slot
        self.paused_until = 0.0
        self.tokens = float(limits.tpm or 0)
        self.refilled = time.monotonic()
        self.budget = Budget(limits.max_calls, limits.max_tokens)
        self.pauses = 0
        self.usage: dict[str, int] = {}  # the judge usage told, field by field (``Usage``'s)

    def reserve(self, count: int = 1) -> list[float]:
        """Seconds each of ``count`` requests waits (its slot, a pause, the token bucket), in
        the order they take their slots."""
        now = time.monotonic()
        start = max(now, self.paused_until)
        if self.limits.tpm:
            self._refill(now)
            if self.tokens < 0:
                start = max(start, now - self.tokens / (self.limits.tpm / 60.0))
        if not self.limits.rpm:
            return [start - now] * count
        delays = []
        for _ in range(count):
            slot = max(start, self.next_slot)
            self.next_slot = slot + 60.0 / self.limits.rpm
            delays.append(slot - now)
        return delays

    def pause(self) -> float:
        """Seconds left of the cluster's pause (0: none)."""
        return max(0.0, self.paused_until - time.monotonic())

    def retry_after(self, seconds: float) -> None:
        self.paused_until = max(self.paused_until, time.monotonic() + seconds)
        self.next_slot = max(self.next_slot, self.paused_until)  # slots resume spaced after it
        self.pauses += 1

    def admit(self, calls: int, tokens: int) -> bool:
        """Reserve a sample's estimated work; False (and no more) once it does not fit."""
        return self.budget.reserve(calls, tokens)

    def settle(
        self,
        held: tuple[int, int],
        calls: int,
        tokens: int,
        usage: dict[str, int] | None = None,
    ) -> None:
        """Samples finished: their reservation gives way to what they spent (``usage``:
        the same, field by field: prompt and completion tokens apart)."""
        self.budget.settle(held, calls, tokens)
        for name, value in (usage or {}).items():
            self.usage[name] = self.usage.get(name, 0) + value
        if self.limits.tpm:
            self._refill(time.monotonic())
            self.tokens -= tokens

    def state(self) -> dict[str, Any]:
        return {
            "spent": self.budget.spent,
            "calls": self.budget.calls,
            "tokens": self.budget.tokens,
            "pauses": self.pauses,
            "usage": dict(self.usage),
        }

    def _refill(self, now: float) -> None:
        assert self.limits.tpm
        rate = self.limits.tpm / 60.0
        self.tokens = min(float(self.limits.tpm), self.tokens + (now - self.refilled) * rate)
        self.refilled = now


def start_gate(limits: Limits) -> Any:
    """The gate actor (tiny: no CPU reserved, never restarted with lost state unnoticed)."""
    return ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)(Gate).remote(limits)


class GateClient:
    """The ``Limiter`` the judge-call driver sees on a worker (``Policy.limiter``).

    Paced (``rpm`` or ``tpm``): each request waits for the slot the gate gives it; the
    requests that wait while a round trip is under way take their slots together in the next.
    Unpaced: a request waits only for a pause, this worker's own at once, another's once learnt
    from the gate, which is asked in the background at most every ``REFRESH`` seconds (so no
    request waits for the gate, not even for it to start)."""

    def __init__(self, gate: Any, paced: bool):
        self.gate, self.paced = gate, paced
        self.paused_until = 0.0  # this process's monotonic clock
        self.looked = -REFRESH  # when the gate's pause was last asked (unpaced)
        self.looking: asyncio.Task[None] | None = None
        self.waiting: list[asyncio.Future[float]] = []
        self.asking: asyncio.Task[None] | None = None

    async def acquire(self) -> None:
        if not self.paced:
            if time.monotonic() - self.looked >= REFRESH and not _running(self.looking):
                self.looked = time.monotonic()
                self.looking = asyncio.ensure_future(self._look())
            await asyncio.sleep(max(0.0, self.paused_until - time.monotonic()))
            return
        # A slot that falls in a pause is given up for a fresh one after it: the requests
        # held by the pause then go out spaced at ``rpm``, not all at once when it ends.
        await asyncio.sleep(max(0.0, await self._slot()))
        while (left := self.paused_until - time.monotonic()) > 0:
            await asyncio.sleep(left)
            await asyncio.sleep(max(0.0, await self._slot()))

    def acquire_blocking(self) -> None:
        if not self.paced:
            if time.monotonic() - self.looked >= REFRESH:
                self.looked = time.monotonic()
                self._paused(ray.get(self.gate.pause.remote()))
            time.sleep(max(0.0, self.paused_until - time.monotonic()))
            return
        time.sleep(max(0.0, ray.get(self.gate.reserve.remote())[0]))
        while (left := self.paused_until - time.monotonic()) > 0:
            time.sleep(left)
            time.sleep(max(0.0, ray.get(self.gate.reserve.remote())[0]))

    def retry_after(self, seconds: float) -> None:
        self._paused(seconds)
        self.gate.retry_after.remote(seconds)

    def _paused(self, seconds: float) -> None:
        self.paused_until = max(self.paused_until, time.monotonic() + seconds)

    async def _look(self) -> None:
        self._paused(await self.gate.pause.remote())

    async def _slot(self) -> float:
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.waiting.append(future)
        if not _running(self.asking):
            self.asking = asyncio.ensure_future(self._ask())
        return await future

    async def _ask(self) -> None:
        """Slots for the requests waiting, one round trip at a time, until none waits."""
        while self.waiting:
            asked, self.waiting = self.waiting, []
            try:
                delays = await self.gate.reserve.remote(len(asked))
            except Exception as exc:  # the caller sees what the gate raised
                for future in asked:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for future, delay in zip(asked, delays, strict=True):
                if not future.done():  # a request cancelled meanwhile leaves its slot unused
                    future.set_result(delay)


def _running(task: asyncio.Task[None] | None) -> bool:
    return task is not None and not task.done()
