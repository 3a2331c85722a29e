"""The provider's Files and Batches API (OpenAI's, or a server that speaks it), through the
openai SDK: upload a JSONL of requests, create a batch, poll it, read back what each request
got."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
from openai.types import Batch

from .._judge.drive import TRANSIENT_STATUS
from .exchange import ENDPOINT, Answer

__all__ = ["ENDED", "BatchAPI", "Outcome", "outcomes"]

# Batch statuses after which nothing changes.
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
# Item errors worth sending again (the request was not run, or failed on the provider's side).
_AGAIN = frozenset({"batch_expired", "server_error", "rate_limit_exceeded", "timeout"})


@dataclass(frozen=True)
class Outcome:
    """What one request of a batch got: an answer (``answer``), or an error (``reason``) that
    is worth sending again (``again``) or final."""

    request: str
    answer: Answer | None = None
    reason: str = ""
    again: bool = False


class BatchAPI:
    """Batches of chat-completion requests on ``client``'s server."""

    def __init__(self, client: openai.OpenAI, completion_window: str = "24h"):
        self.client = client
        self.completion_window = completion_window

    def submit(self, requests: Path, metadata: Mapping[str, str]) -> str:
        """Upload ``requests`` (JSONL batch input) and create its batch; the batch id."""
        with requests.open("rb") as f:
            uploaded = self.client.files.create(file=f, purpose="batch")
        batch = self.client.batches.create(
            input_file_id=uploaded.id,
            endpoint=ENDPOINT,
            completion_window=self.completion_window,  # type: ignore[arg-type]
            metadata=dict(metadata),
        )
        return batch.id

    def retrieve(self, batch_id: str) -> Batch:
        return self.client.batches.retrieve(batch_id)

    def lines(self, file_id: str | None) -> Iterator[dict[str, Any]]:
        """The JSON lines of a result file (none for ``None``)."""
        if not file_id:
            return
        for line in self.client.files.content(file_id).text.splitlines():
            if line.strip():
                yield json.loads(line)


def outcomes(api: BatchAPI, batch: Batch, requests: list[str]) -> Iterator[Outcome]:
    """What each of ``requests`` (the ids a batch was sent) got once the batch ``ENDED``; a
    request with no line in its result files failed (why: the batch's status)."""
    seen: set[str] = set()
    if batch.status == "failed":  # rejected as a whole: nothing ran
        errors = "; ".join(
            f"line {e.line}: {e.message}" if e.line else str(e.message)
            for e in (batch.errors.data or [] if batch.errors else [])
        )
        reason = f"batch {batch.id} failed: {errors or 'no reason given'}"
        yield from (Outcome(r, reason=reason) for r in requests)
        return
    for line in [*api.lines(batch.output_file_id), *api.lines(batch.error_file_id)]:
        request = str(line.get("custom_id"))
        seen.add(request)
        yield _outcome(batch.id, request, line)
    ended = batch.status == "expired"  # unfinished requests of an expired batch run again
    for request in requests:
        if request not in seen:
            reason = f"batch {batch.id} {batch.status} with no result for this request"
            yield Outcome(request, reason=reason, again=ended)


def _outcome(batch_id: str, request: str, line: dict[str, Any]) -> Outcome:
    response = line.get("response") or {}
    error = line.get("error") or {}
    status = response.get("status_code")
    body = response.get("body")
    if status == 200 and isinstance(body, dict) and not error:
        return Outcome(request, Answer(200, body))
    if error:
        code = str(error.get("code") or "error")
        reason = f"{code}: {error.get('message') or ''}".strip()
        return Outcome(request, reason=f"batch {batch_id}: {reason}", again=code in _AGAIN)
    message = body.get("error", {}).get("message") if isinstance(body, dict) else None
    reason = f"batch {batch_id}: HTTP {status}: {message or body}"
    again = isinstance(status, int) and status in TRANSIENT_STATUS
    return Outcome(request, reason=reason, again=again)
