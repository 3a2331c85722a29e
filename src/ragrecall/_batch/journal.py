"""A batch run's journal, beside its results file (``OUT.batches.jsonl``): the batches sent
(their ids and request ids) and what each request got once its batch ended. A run started
again reads it back: answers are not paid for twice, batches still running are polled again.

Lines (JSON, appended and fsynced once per event):

- ``{"sent": BATCH, "requests": [ID, ...], "round": N}``: a batch was created.
- ``{"answer": ID, "batch": BATCH, "status": 200, "body": {...}}``: a request's reply (or a
  request given up on, status 400, the reason in the body).
- ``{"failed": ID, "batch": BATCH, "reason": "..."}``: an attempt that failed and is sent again.
- ``{"ended": BATCH, "status": "completed"}``: the batch's lines above are all written (lines
  of a batch with no ``ended`` line are ignored on reading: it is polled again).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .._errors import SampleError
from .._schemas import Usage
from .api import Outcome
from .exchange import Answer

__all__ = ["Journal"]


@dataclass
class Journal:
    """The journal at ``path``: ``answers`` by request id, ``attempts`` that failed by request
    id, the batches not ended yet (``running``: batch id -> request ids), and ``usage``: the
    requests of the batches that ended since it was opened (``calls``: each request the
    provider ran or failed; ``retries``: those that were sent again) and their tokens."""

    path: Path
    answers: dict[str, Answer] = field(default_factory=dict)
    attempts: Counter[str] = field(default_factory=Counter)
    running: dict[str, list[str]] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    rounds: int = 0
    _file: IO[str] | None = None

    @classmethod
    def open(cls, path: Path) -> Journal:
        journal = cls(path)
        if path.exists():
            journal._read()
        journal._file = path.open("a", encoding="utf-8")
        return journal

    def _read(self) -> None:
        lines = []
        with self.path.open(encoding="utf-8") as f:
            for number, text in enumerate(f, 1):
                try:
                    lines.append(json.loads(text))
                except json.JSONDecodeError:  # a line cut short by a crash: its batch is not ended
                    if text.endswith("\n"):
                        raise SampleError(f"{self.path}:{number}: not a journal line") from None
        ended = {line["ended"] for line in lines if "ended" in line}
        for line in lines:
            if "sent" in line:
                self.rounds = max(self.rounds, int(line.get("round", 0)))
                if line["sent"] not in ended:
                    self.running[line["sent"]] = list(line["requests"])
            elif line.get("batch") in ended:
                self._apply(line, counted=False)

    def _apply(self, line: dict[str, Any], counted: bool = True) -> None:
        if "answer" in line:
            answer = Answer(int(line["status"]), line["body"])
            self.answers[line["answer"]] = answer
            if counted:
                self._count(line["answer"], answer)
        elif "failed" in line:
            if counted:
                self._count(line["failed"], None)
            self.attempts[line["failed"]] += 1

    def _count(self, request: str, answer: Answer | None) -> None:
        self.usage.calls += 1
        self.usage.retries += int(self.attempts[request] > 0)
        usage = answer.body.get("usage") if answer is not None and answer.status == 200 else None
        if isinstance(usage, dict):
            self.usage.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            self.usage.completion_tokens += int(usage.get("completion_tokens") or 0)
            details = usage.get("prompt_tokens_details") or {}
            self.usage.cached_tokens += int(details.get("cached_tokens") or 0)

    def sent(self, batch: str, requests: list[str], round_: int) -> None:
        self.running[batch] = requests
        self._write([{"sent": batch, "requests": requests, "round": round_}])

    def ended(self, batch: str, status: str, outcomes: Iterable[Outcome], retries: int) -> None:
        """Record what each request of ``batch`` got: an answer, or a failure that is sent
        again (at most ``retries`` times) or given up on (an answer saying why)."""
        lines: list[dict[str, Any]] = []
        for outcome in outcomes:
            request = outcome.request
            again = outcome.again and self.attempts[request] < retries
            if outcome.answer is not None or not again:
                tries = self.attempts[request] + 1
                answer = outcome.answer or Answer.failed(
                    outcome.reason + (f" (given up after {tries} attempts)" if tries > 1 else "")
                )
                line = {"answer": request, "status": answer.status, "body": answer.body}
            else:
                line = {"failed": request, "reason": outcome.reason}
            line["batch"] = batch
            self._apply(line)
            lines.append(line)
        self.running.pop(batch, None)
        self._write([*lines, {"ended": batch, "status": status}])

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _write(self, lines: list[dict[str, Any]]) -> None:
        assert self._file is not None, "journal closed"
        self._file.write("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
        self._file.flush()
        os.fsync(self._file.fileno())
