"""The provider's side of a batch run: request files sent as batches, polled until they end,
and the batches a stopped run left behind settled.

No batch is orphaned. Before a request file is uploaded, the journal records the intent (the
round, the part, the file's SHA-256); each batch's ``metadata`` carries the run's identity
(``ragrecall_run``), that digest and the intent. A run stopped between creating a batch and
journaling its id leaves an intent with no batch: the run started again lists the provider's
batches (newest first, back to the intent's time), adopts the one tagged with this run and
this digest (it is polled and its answers used, nothing is sent again), and cancels any
other batch of this run's tags that the journal does not know. An intent no batch matches
was stopped before the create call: its requests are asked again. A provider that cannot
list batches (404, 405, 501 on ``GET /v1/batches``) gets them asked again too, with a warning
naming the tags to look for (a batch created just before the stop may then run twice); one
that refuses the listing (401, 403) stops the run with exit 2, before anything is sent.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .api import ENDED, BatchAPI, CannotList, ProviderError, outcomes
from .exchange import ENDPOINT
from .journal import Intent, Journal

__all__ = ["BatchSettings", "cancel_strays", "reconcile", "submit", "tags", "wait"]


@dataclass(frozen=True)
class BatchSettings:
    """``poll_interval``: seconds between status checks; ``max_requests``/``max_bytes``: one
    batch's input at most (OpenAI's limits: 50,000 requests, 200 MB); ``retries``: times a
    failed request is sent again (expired, 5xx, rate-limited items); ``max_rounds``: rounds
    one run may take (a metric whose requests changed from one replay to the next would
    never finish)."""

    poll_interval: float = 30.0
    max_requests: int = 50_000
    max_bytes: int = 190 * 2**20
    completion_window: str = "24h"
    retries: int = 3
    max_rounds: int = 30


def tags(run: str, intent: Intent) -> dict[str, str]:
    """The ``metadata`` of the batch created for ``intent`` in run ``run``."""
    return {
        RUN_TAG: run,
        DIGEST_TAG: intent.digest,
        "ragrecall_intent": intent.id,
        "ragrecall_round": str(intent.round),
        "ragrecall_part": str(intent.part),
    }


RUN_TAG, DIGEST_TAG = "ragrecall_run", "ragrecall_digest"
# How much earlier than an intent its batch may say it was created (the provider's clock).
_CLOCK_SKEW = 3600.0
# Create calls for one batch, the first included.
_CREATE_TRIES = 5


def submit(
    new: dict[str, dict[str, Any]], api: BatchAPI, settings: BatchSettings, journal: Journal
) -> Iterator[tuple[str, list[str]]]:
    """Upload ``new`` as batch input files within the size limits, each after its intent is
    journaled and each batch's id journaled once it is created; each batch's id and request
    ids."""
    round_ = journal.rounds
    with tempfile.TemporaryDirectory(prefix="ragrecall-batch-") as folder:
        for part, (path, requests) in enumerate(_parts(new, Path(folder), settings)):
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            intent = journal.intend(round_, part, digest, requests)
            batch = _create(api, path, journal, intent)
            journal.sent(batch, intent)
            yield batch, requests


def _create(api: BatchAPI, path: Path, journal: Journal, intent: Intent) -> str:
    """Upload ``path`` and create ``intent``'s batch; the batch id. A create call that
    failed on the way (no answer, a timeout, a 5xx or 429) may have created the batch: the
    provider's list is read for it before the call is tried again."""
    file_id = api.upload(path)
    for attempt in range(_CREATE_TRIES):
        try:
            return api.create(file_id, tags(journal.run, intent))
        except ProviderError as error:
            if not error.transient or attempt == _CREATE_TRIES - 1:
                raise
        time.sleep(min(30.0, 0.5 * 2**attempt))
        with contextlib.suppress(CannotList):
            for batch in api.tagged(RUN_TAG, journal.run, intent.at - _CLOCK_SKEW):
                if (batch.metadata or {}).get("ragrecall_intent") == intent.id:
                    return batch.id
    raise AssertionError("unreachable")


def reconcile(api: BatchAPI, journal: Journal, notify: Callable[[str], None]) -> float | None:
    """Settle the intents a stopped run left without a batch id: adopt the batch the provider
    lists with this run's tags and the intent's digest, or drop the intent (its requests are
    asked again); cancel the other batches of this run the journal does not know. The time
    the listing went back to (for a last sweep at the end), None where the provider cannot
    list."""
    pending = sorted(journal.pending.values(), key=lambda i: (i.round, i.part, i.at))
    since = min(i.at for i in pending) - _CLOCK_SKEW
    try:
        listed = api.tagged(RUN_TAG, journal.run, since)
    except CannotList as error:
        for intent in pending:
            journal.dropped(intent, str(error))
        notify(
            f"warning: {error}. The last run was stopped while creating {len(pending)} "
            f"batches; they are sent again. If the provider did create them, cancel the "
            f"batches whose metadata has {RUN_TAG}={journal.run} and that this run does not "
            "report, or they are paid twice"
        )
        return None
    listed = sorted(reversed(listed), key=_preference)  # listed newest first: oldest first
    for intent in pending:
        match = next(
            (
                b
                for b in listed
                if b.id not in journal.batches
                and (b.metadata or {}).get(DIGEST_TAG) == intent.digest
            ),
            None,
        )
        if match is None:
            journal.dropped(intent, "no batch at the provider has its tags")
            continue
        journal.sent(match.id, intent)
        notify(
            f"batch {match.id}: adopted ({len(intent.requests)} requests of round "
            f"{intent.round}, created before the last run stopped)"
        )
    _cancel(api, journal, listed, notify)
    return since


def _preference(batch: Any) -> tuple[int, int]:
    """Which of several batches with the same requests to adopt: one that ended well, then
    one still running, then one that ended otherwise; the oldest first."""
    rank = {"completed": 0, "finalizing": 1, "in_progress": 1, "validating": 1, "expired": 2}
    return rank.get(batch.status, 3), batch.created_at


def _cancel(
    api: BatchAPI, journal: Journal, listed: list[Any], notify: Callable[[str], None]
) -> None:
    """Cancel the batches of ``listed`` the journal does not know (duplicates of a batch
    adopted, or created after the listing began) and that have not ended."""
    for batch in listed:
        if batch.id in journal.batches or batch.status in ENDED or batch.status == "cancelling":
            continue
        why = api.cancel(batch.id)
        notify(
            f"batch {batch.id}: a duplicate of this run's requests, "
            + (f"could not be cancelled: {why}" if why else "cancelled")
        )


def cancel_strays(
    api: BatchAPI, journal: Journal, since: float, notify: Callable[[str], None]
) -> None:
    """At the end of a run that settled intents: cancel any batch of this run's tags the
    journal does not know (a create call of the stopped run the provider answered late).
    Every sample is written by then: a listing that fails is a warning, not an error."""
    try:
        listed = api.tagged(RUN_TAG, journal.run, since)
    except ProviderError as error:
        notify(f"warning: could not look for stray batches of this run: {error}")
        return
    _cancel(api, journal, listed, notify)


def _parts(
    new: dict[str, dict[str, Any]], folder: Path, settings: BatchSettings
) -> Iterator[tuple[Path, list[str]]]:
    lines: list[str] = []
    requests: list[str] = []
    size = 0
    written = 0

    def flush() -> tuple[Path, list[str]]:
        nonlocal written
        path = folder / f"part-{written}.jsonl"
        path.write_text("".join(lines), encoding="utf-8")
        written += 1
        return path, list(requests)

    for request, body in new.items():
        line = json.dumps(
            {"custom_id": request, "method": "POST", "url": ENDPOINT, "body": body},
            ensure_ascii=False,
        )
        line += "\n"
        grown = size + len(line.encode())
        if requests and (len(requests) >= settings.max_requests or grown > settings.max_bytes):
            yield flush()
            lines.clear()
            requests.clear()
            grown = len(line.encode())
        lines.append(line)
        requests.append(request)
        size = grown
    if requests:
        yield flush()


def wait(
    api: BatchAPI, journal: Journal, settings: BatchSettings, notify: Callable[[str], None]
) -> None:
    """Poll every running batch until it ends; record what its requests got."""
    reported: dict[str, str] = {}
    while journal.running:
        for batch_id, requests in list(journal.running.items()):
            batch = api.retrieve(batch_id)
            counts = batch.request_counts
            state = batch.status + (f" {counts.completed}/{counts.total}" if counts else "")
            if reported.get(batch_id) != state:
                notify(f"batch {batch_id}: {state}")
                reported[batch_id] = state
            if batch.status in ENDED:
                found = outcomes(api, batch, requests)
                journal.ended(batch_id, batch.status, found, settings.retries)
        if journal.running:
            time.sleep(settings.poll_interval)
