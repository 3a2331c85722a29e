"""The provider's Files and Batches API (OpenAI's, or a server that speaks it), through the
openai SDK: upload a JSONL of requests, create a batch, poll it, read back what each request
got; list the batches a run tagged, and cancel one.

A refusal or an outage of the provider (a 401, a 404 where it has no Batch API, a server
that cannot be reached once the SDK's retries are spent) is a ``ProviderError``: a
ValueError naming the call and the provider's answer (``eval`` exits 2 with it), never a
traceback; the journal keeps what was sent, so the same command run again goes on."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
from openai.types import Batch

from ragrecall._judge.retry import TRANSIENT_STATUS

from .exchange import ENDPOINT, Answer

__all__ = ["ENDED", "BatchAPI", "CannotList", "Outcome", "ProviderError", "outcomes"]

# Batch statuses after which nothing changes.
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
# Statuses of a list call that mean the provider has no such endpoint.
_NO_ENDPOINT = frozenset({404, 405, 501})
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


class ProviderError(ValueError):
    """The provider refused a Batch API call, or could not be reached: ``status`` is its HTTP
    status (None when no answer came)."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status

    @property
    def transient(self) -> bool:
        """No answer, a rate limit, a timeout or a server error: worth trying again."""
        return self.status is None or self.status in TRANSIENT_STATUS or self.status >= 500


class CannotList(ProviderError):
    """The provider has no batch listing (``GET /v1/batches`` answered 404, 405 or 501)."""


@contextlib.contextmanager
def _calling(client: openai.OpenAI, call: str) -> Iterator[None]:
    """Turn the SDK's errors for ``call`` into a ``ProviderError`` that says what failed."""
    where = f"{call} at {client.base_url}"
    try:
        yield
    except openai.APIStatusError as error:
        message = _message(error)
        raise ProviderError(
            f"the batch provider answered {error.status_code} to {where}: {message}"
            + _hint(error.status_code),
            error.status_code,
        ) from None
    except openai.APIConnectionError as error:
        raise ProviderError(
            f"the batch provider could not be reached for {where}: {error}"
        ) from None


def _message(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(error.message)


def _hint(status: int) -> str:
    if status in (401, 403):
        return " (check the API key and that it may use the Files and Batches API)"
    if status in _NO_ENDPOINT:
        return " (does this server have the Files and Batches API? batch mode needs it)"
    return ""


class BatchAPI:
    """Batches of chat-completion requests on ``client``'s server."""

    def __init__(self, client: openai.OpenAI, completion_window: str = "24h"):
        self.client = client
        self.completion_window = completion_window

    def upload(self, requests: Path) -> str:
        """Upload ``requests`` (JSONL batch input); the file's id."""
        with requests.open("rb") as f, _calling(self.client, "POST /files (upload)"):
            return self.client.files.create(file=f, purpose="batch").id

    def create(self, file_id: str, metadata: Mapping[str, str]) -> str:
        """Create the batch of the uploaded file ``file_id``, once: the SDK does not try the
        call again (a create that timed out may have created the batch: the caller looks
        for it before trying again); the batch id."""
        client = self.client.with_options(max_retries=0)
        with _calling(self.client, "POST /batches (create)"):
            batch = client.batches.create(
                input_file_id=file_id,
                endpoint=ENDPOINT,
                completion_window=self.completion_window,  # type: ignore[arg-type]
                metadata=dict(metadata),
            )
        return batch.id

    def retrieve(self, batch_id: str) -> Batch:
        with _calling(self.client, f"GET /batches/{batch_id}"):
            return self.client.batches.retrieve(batch_id)

    def tagged(self, key: str, value: str, since: float) -> list[Batch]:
        """The batches whose ``metadata[key]`` is ``value``, among those created at ``since``
        (Unix time) or later: the list is read newest first, page by page, up to the first
        batch older than that. ``CannotList`` where the provider has no listing."""
        found: list[Batch] = []
        with _calling(self.client, "GET /batches (list)"):
            try:
                page = self.client.batches.list(limit=100)
                for batch in page:  # the SDK fetches the next page as this one runs out
                    if batch.created_at < since:
                        break
                    if (batch.metadata or {}).get(key) == value:
                        found.append(batch)
            except openai.APIStatusError as error:
                if error.status_code in _NO_ENDPOINT:
                    raise CannotList(
                        f"the batch provider answered {error.status_code} to GET /batches at "
                        f"{self.client.base_url}: it cannot list batches",
                        error.status_code,
                    ) from None
                raise
        return found

    def cancel(self, batch_id: str) -> str | None:
        """Ask the provider to cancel ``batch_id``; why it could not, if it could not."""
        try:
            with _calling(self.client, f"POST /batches/{batch_id}/cancel"):
                self.client.batches.cancel(batch_id)
        except ProviderError as error:
            return str(error)
        return None

    def lines(self, file_id: str | None) -> Iterator[dict[str, Any]]:
        """The JSON lines of a result file (none for ``None``)."""
        if not file_id:
            return
        with _calling(self.client, f"GET /files/{file_id}/content"):
            text = self.client.files.content(file_id).text
        for line in text.splitlines():
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
