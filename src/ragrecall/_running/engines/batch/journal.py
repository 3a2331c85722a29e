"""A batch run's journal, beside its results file (``OUT.batches.jsonl``): the batches sent
(their ids and request ids) and what each request got once its batch ended. A run started
again reads it back: answers are not paid for twice, batches still running are polled again.

Lines (JSON, appended and fsynced once per event):

- ``{"run": RUN}``: the run's identity (the first line), a random id that tags every batch
  it creates (the batch's ``metadata``), so that a batch the journal lost can be found.
- ``{"intent": INTENT, "round": N, "part": P, "digest": SHA256, "requests": [ID, ...],
  "at": UNIX_TIME}``: a batch is about to be created from a request file whose SHA-256 is
  ``digest``; written before the file is uploaded. An intent with no ``sent`` (or
  ``dropped``) line is one the run was stopped in: the batch may or may not exist at the
  provider, and a run started again looks for it (``pending``) before sending anything.
- ``{"sent": BATCH, "requests": [ID, ...], "round": N, "intent": INTENT}``: a batch was
  created (or, after a stop, found at the provider and adopted).
- ``{"dropped": INTENT, "reason": "..."}``: an intent whose batch the provider does not have
  (the run stopped before creating it): its requests are asked again.
- ``{"answer": ID, "batch": BATCH, "status": 200, "body": {...}}``: a request's reply (or a
  request given up on, status 400, the reason in the body).
- ``{"failed": ID, "batch": BATCH, "reason": "..."}``: an attempt that failed and is sent again.
- ``{"ended": BATCH, "status": "completed"}``: the batch's lines above are all written (lines
  of a batch with no ``ended`` line are ignored on reading: it is polled again).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ragrecall._core.errors import SampleError
from ragrecall._core.schemas import Usage

from .api import Outcome
from .exchange import Answer

__all__ = ["Intent", "Journal", "journal_path"]


def journal_path(out: Path) -> Path:
    """Where a batch run into ``out`` keeps its journal."""
    return out.with_name(out.name + ".batches.jsonl")


@dataclass(frozen=True)
class Intent:
    """A batch about to be created: ``id`` (its ``ragrecall_intent`` tag), the round and part
    it belongs to, the SHA-256 of its request file (its ``ragrecall_digest`` tag), its request
    ids, and when it was written (``at``, Unix time)."""

    id: str
    round: int
    part: int
    digest: str
    requests: list[str]
    at: float


@dataclass
class Journal:
    """The journal at ``path``: ``answers`` by request id, ``attempts`` that failed by request
    id, the batches not ended yet (``running``: batch id -> request ids), and ``usage``: the
    requests of the batches that ended since it was opened (``calls``: each request the
    provider ran or failed; ``retries``: those that were sent again) and their tokens.
    ``run``: the run's identity; ``pending``: the intents with no batch id (the run was
    stopped between writing one and journaling its batch); ``batches``: every batch id sent."""

    path: Path
    run: str = ""
    pending: dict[str, Intent] = field(default_factory=dict)
    batches: set[str] = field(default_factory=set)
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
            _cut_torn_tail(path)
        journal._file = path.open("a", encoding="utf-8")
        if not journal.run:  # a new journal (or one written before runs had an identity)
            journal.run = uuid.uuid4().hex
            journal._write([{"run": journal.run}])
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
        settled = {line.get("intent") for line in lines if "sent" in line}
        settled |= {line["dropped"] for line in lines if "dropped" in line}
        for line in lines:
            if "run" in line and not self.run:
                self.run = str(line["run"])
            elif "intent" in line and "sent" not in line:
                self.rounds = max(self.rounds, int(line.get("round", 0)))
                if line["intent"] not in settled:
                    intent = Intent(
                        str(line["intent"]),
                        int(line["round"]),
                        int(line["part"]),
                        str(line["digest"]),
                        list(line["requests"]),
                        float(line["at"]),
                    )
                    self.pending[intent.id] = intent
            elif "sent" in line:
                self.rounds = max(self.rounds, int(line.get("round", 0)))
                self.batches.add(line["sent"])
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

    def intend(self, round_: int, part: int, digest: str, requests: list[str]) -> Intent:
        """Journal that a batch of ``requests`` (a request file whose SHA-256 is ``digest``) is
        about to be created, before anything is uploaded."""
        intent = Intent(uuid.uuid4().hex[:16], round_, part, digest, requests, time.time())
        self.pending[intent.id] = intent
        self._write(
            [
                {
                    "intent": intent.id,
                    "round": round_,
                    "part": part,
                    "digest": digest,
                    "requests": requests,
                    "at": intent.at,
                }
            ]
        )
        return intent

    def sent(self, batch: str, intent: Intent) -> None:
        """Journal the batch created (or adopted) for ``intent``."""
        self.pending.pop(intent.id, None)
        self.batches.add(batch)
        self.running[batch] = list(intent.requests)
        line = {"sent": batch, "requests": intent.requests, "round": intent.round}
        self._write([{**line, "intent": intent.id}])

    def dropped(self, intent: Intent, reason: str) -> None:
        """Journal that ``intent``'s batch was never created: its requests are asked again."""
        self.pending.pop(intent.id, None)
        self._write([{"dropped": intent.id, "reason": reason}])

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


def _cut_torn_tail(path: Path) -> None:
    """Cut a last line a crash left without its newline (it was ignored on reading), so that
    the lines appended next start on a line of their own."""
    with path.open("rb+") as f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return
        f.seek(max(0, size - 1))
        if f.read(1) == b"\n":
            return
        # find the last newline, reading backwards in blocks
        end = size
        while end > 0:
            start = max(0, end - 65536)
            f.seek(start)
            block = f.read(end - start)
            cut = block.rfind(b"\n")
            if cut >= 0:
                f.truncate(start + cut + 1)
                break
            end = start
        else:
            f.truncate(0)
        f.flush()
        os.fsync(f.fileno())
