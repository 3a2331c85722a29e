"""Each distinct reference decomposed once across the cluster, for inputs Ray reads itself
(they have no first pass on the driver): a ``Board`` actor where the first worker to meet a
task takes it, decomposes it and posts its claims; every other worker that meets the task
waits for them. A taker that fails posts nothing usable (each sample then decomposes on its
own and says why it failed); one that dies is waited for at most ``hold`` seconds.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

import ray

from ragrecall._core.schemas import Sample

__all__ = ["Board", "start_board", "task_of"]

Claims = tuple[list[str] | None, str | None]  # claims and the judge id they are for


class Board:
    """Claims by task (run as one async Ray actor)."""

    def __init__(self, hold: float):
        self.hold = hold
        self.posted: dict[str, Claims] = {}
        self.taken: dict[str, asyncio.Event] = {}

    async def take(self, task: str) -> tuple[bool, Claims]:
        """``(True, _)``: the caller decomposes ``task`` and posts it; ``(False, claims)``:
        claims posted by another (``(None, None)``: none came; decompose on your own)."""
        if task in self.posted:
            return False, self.posted[task]
        event = self.taken.get(task)
        if event is None:
            self.taken[task] = asyncio.Event()
            return True, (None, None)
        try:
            await asyncio.wait_for(event.wait(), self.hold)
        except asyncio.TimeoutError:
            return False, (None, None)
        return False, self.posted.get(task, (None, None))

    def post(self, task: str, claims: list[str] | None, judge_id: str | None) -> None:
        self.posted[task] = (claims, judge_id)
        event = self.taken.pop(task, None)
        if event is not None:
            event.set()


def start_board(hold: float) -> Any:
    """The board actor: no CPU reserved; room for every waiting taker beside the posts that
    release them; a lost board is restarted empty (its tasks are then decomposed again)."""
    remote = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)(Board)
    return remote.options(max_concurrency=100_000).remote(hold)


def task_of(sample: Sample) -> str:
    """What a sample's claims are decomposed from, as a digest of its reference and question
    ("" when it has no reference)."""
    reference = (sample.reference or "").strip()
    if not reference:
        return ""
    value = json.dumps([reference, sample.user_input or ""])
    return hashlib.sha256(value.encode()).hexdigest()
