"""One rate limit and one budget for the whole cluster: a Ray actor every worker asks.

Requests are spaced evenly at ``rpm`` (each attempt reserves the next slot, so no burst runs
past the limit), tokens are drawn from a bucket refilled at ``tpm`` (a sample's tokens are
spent when it finishes, so the bucket may go below zero and then holds every worker until
it refills), and a ``Retry-After`` from the provider moves every worker's next slot past it.
A sample starts only if its estimated calls and tokens fit beside what the cluster spent and
reserved (``max_calls``, ``max_tokens``), as the local run's ``Budget`` does.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import ray

__all__ = ["Gate", "GateClient", "Limits"]


@dataclass(frozen=True)
class Limits:
    """Requests and tokens per minute for the whole cluster, and its budget (None: none)."""

    rpm: float | None = None
    tpm: float | None = None
    max_calls: int | None = None
    max_tokens: int | None = None


class Gate:
    """The shared state (run as one Ray actor)."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.next_slot = 0.0  # monotonic time of the next free request slot
        self.paused_until = 0.0
        self.tokens = float(limits.tpm or 0)
        self.refilled = time.monotonic()
        self.calls_spent = 0
        self.tokens_spent = 0
        self.calls_held = 0
        self.tokens_held = 0
        self.spent = False
        self.pauses = 0

    def reserve(self) -> float:
        """Seconds the caller waits before its request (its slot, a pause, the token bucket)."""
        now = time.monotonic()
        start = max(now, self.paused_until)
        if self.limits.tpm:
            self._refill(now)
            if self.tokens < 0:
                start = max(start, now - self.tokens / (self.limits.tpm / 60.0))
        if self.limits.rpm:
            start = max(start, self.next_slot)
            self.next_slot = start + 60.0 / self.limits.rpm
        return start - now

    def retry_after(self, seconds: float) -> None:
        self.paused_until = max(self.paused_until, time.monotonic() + seconds)
        self.pauses += 1

    def admit(self, calls: int, tokens: int) -> bool:
        """Reserve a sample's estimated work; False (and no more) once it does not fit."""
        max_calls, max_tokens = self.limits.max_calls, self.limits.max_tokens
        if self.spent:
            return False
        if (max_calls is not None and self.calls_spent + self.calls_held + calls > max_calls) or (
            max_tokens is not None and self.tokens_spent + self.tokens_held + tokens > max_tokens
        ):
            self.spent = True
            return False
        self.calls_held += calls
        self.tokens_held += tokens
        return True

    def settle(self, held: tuple[int, int], calls: int, tokens: int) -> None:
        """A sample finished: its reservation gives way to what it spent."""
        self.calls_held -= held[0]
        self.tokens_held -= held[1]
        self.calls_spent += calls
        self.tokens_spent += tokens
        if self.limits.tpm:
            self._refill(time.monotonic())
            self.tokens -= tokens
        max_calls, max_tokens = self.limits.max_calls, self.limits.max_tokens
        if (max_calls is not None and self.calls_spent >= max_calls) or (
            max_tokens is not None and self.tokens_spent >= max_tokens
        ):
            self.spent = True

    def state(self) -> dict[str, Any]:
        return {
            "spent": self.spent,
            "calls": self.calls_spent,
            "tokens": self.tokens_spent,
            "pauses": self.pauses,
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
    """The ``Limiter`` the judge-call driver sees on a worker (``Policy.limiter``)."""

    def __init__(self, gate: Any):
        self.gate = gate

    async def acquire(self) -> None:
        delay = await self.gate.reserve.remote()
        if delay > 0:
            await asyncio.sleep(delay)

    def acquire_blocking(self) -> None:
        delay = ray.get(self.gate.reserve.remote())
        if delay > 0:
            time.sleep(delay)

    def retry_after(self, seconds: float) -> None:
        self.gate.retry_after.remote(seconds)
