"""Batch mode: score samples through a provider's Batch API (half the price, within a day).

A run goes in rounds. Each round replays every sample still to score, metric by metric,
against the judge's ``Exchange``: requests a batch answered replay as they came, and the first
unanswered request of each metric ends that metric's replay. The round's new requests (each
once, however many samples ask it) go out as batches; the run waits for them to end, records
what each request got in the journal, and starts the next round. Decomposition is the first
round and attribution the second; a re-ask or a failed request sent again takes one more.
A sample is written to the results file once all its metrics finish, exactly as ``eval``
writes it; failures are results (unscorable, with the batch's reason), never lost.

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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ragrecall._core.schemas import RecallResult, Sample
from ragrecall._judge.retry import Policy
from ragrecall._metrics.base import Metric
from ragrecall._metrics.estimate import run_estimator
from ragrecall._running.budget import Budget
from ragrecall._running.store import Record, ResultsFile

from ..base import Identity
from .api import ENDED, BatchAPI, CannotList, ProviderError, outcomes
from .exchange import ENDPOINT, Deferred, Exchange
from .journal import Intent, Journal

__all__ = ["BatchSettings", "journal_path", "run_rounds"]


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


def journal_path(out: Path) -> Path:
    """Where a batch run into ``out`` keeps its journal."""
    return out.with_name(out.name + ".batches.jsonl")


def run_rounds(
    samples: Sequence[Sample],
    metrics: Sequence[Metric[RecallResult]],
    *,
    todo: Sequence[int],
    ids: Sequence[Identity],
    store: ResultsFile,
    journal: Journal,
    api: BatchAPI,
    exchange: Exchange,
    budget: Budget,
    on_record: Callable[[Record], None],
    settings: BatchSettings = BatchSettings(),
    notify: Callable[[str], None] = lambda _: None,
    max_retries: int | None = None,
) -> None:
    """Score the samples ``todo`` (indices), in rounds of batches, until each is written or
    the budget stops new samples (``budget.spent``). With a limit, a sample is admitted by
    its estimated total (every round's requests, as the local engine reserves it), the first
    time it asks for something, and then sent every request it asks for: so the budget
    finishes the samples it starts, never stops them after the first round. What it counts:
    the requests the provider ran, as the journal counts them, and what the admitted
    samples still to finish hold (their estimates, less their answered requests).
    ``metrics`` judge through ``exchange``; they are replayed under a policy of their own
    with no deadline (replies are at hand: no call needs one, or a thread), the metrics
    themselves left as they are."""
    overrides: dict[str, Any] = {"timeout": None}
    if max_retries is not None:
        overrides["max_retries"] = max_retries
    policies = {m.name: replace(m.policy, **overrides) for m in metrics}
    swept = _reconcile(api, journal, notify) if journal.pending else None
    exchange.answers = journal.answers
    estimate = run_estimator(metrics) if budget.limited else None
    admitted: dict[int, tuple[int, int]] = {}  # sample index -> its estimate (calls, tokens)
    for _ in range(settings.max_rounds + 1):
        waiting: list[tuple[int, list[str]]] = []  # samples waiting, and for which requests
        answered: dict[int, int] = {}  # per sample waiting: its requests answered so far
        left: list[int] = []
        keep: set[str] = set()  # the answers the samples still waiting replay
        for index in todo:
            results, needs = _replay(samples[index], metrics, policies, exchange)
            if results is None:
                left.append(index)
                waiting.append((index, needs))
                answered[index] = len(exchange.used) - len(needs)
                keep |= exchange.used
                continue
            admitted.pop(index, None)
            (key, occurrence), content = ids[index]
            record = Record(key, index, samples[index], results, occurrence, content)
            store.append(record)
            on_record(record)
        held = _held(admitted, answered)
        _account(budget, journal, held)
        if not left:
            if swept is not None:  # a batch whose create call was still under way then
                _cancel_strays(api, journal, swept, notify)
            return
        for request in [r for r in exchange.answers if r not in keep]:
            del exchange.answers[request]  # memory: the answers of finished samples go
        if estimate is None:
            new = _admit([n for _, n in waiting], exchange, journal, budget, held)
        else:
            for index, _ in waiting:
                if index not in admitted:
                    est = estimate(samples[index])
                    need = (est.calls, est.prompt_tokens + est.completion_tokens)
                    if not budget.reserve(*need):
                        break
                    admitted[index] = need
            new = _requests([n for i, n in waiting if i in admitted], exchange, journal)
        exchange.asked.clear()
        if new:
            journal.rounds += 1
            for batch, requests in _submit(new, api, settings, journal):
                notify(f"batch {batch}: {len(requests)} requests sent (round {journal.rounds})")
        if not journal.running:  # nothing new could be sent: the budget is spent
            return
        _wait(api, journal, settings, notify)
        todo = left
    raise RuntimeError(
        f"{len(todo)} samples still wait for answers after {settings.max_rounds} rounds of "
        "batches: their metrics ask something new at every replay (a request that is not the "
        "same twice cannot be answered by a batch)"
    )


def _replay(
    sample: Sample,
    metrics: Sequence[Metric[RecallResult]],
    policies: dict[str, Policy],
    exchange: Exchange,
) -> tuple[dict[str, RecallResult] | None, list[str]]:
    """Each metric's result on ``sample`` (None while any waits for an answer), and the
    requests it waits for."""
    results: dict[str, RecallResult] = {}
    exchange.used.clear()
    for metric in metrics:
        with contextlib.suppress(Deferred):
            results[metric.name] = metric.score(sample, policies[metric.name])
    needs = [r for r in exchange.used if r not in exchange.answers]
    return (results if len(results) == len(metrics) else None), needs


def _held(admitted: dict[int, tuple[int, int]], answered: dict[int, int]) -> tuple[int, int]:
    """What the admitted samples still waiting hold: each its estimate, less the calls it
    has had answered (its tokens in the same proportion)."""
    calls = tokens = 0
    for index, (est_calls, est_tokens) in admitted.items():
        left = max(0, est_calls - answered.get(index, 0))
        calls += left
        tokens += est_tokens * left // est_calls if est_calls else 0
    return calls, tokens


def _account(budget: Budget, journal: Journal, held: tuple[int, int] | None = None) -> None:
    """The budget told what the journal counts: requests answered (and their tokens) spent;
    held: the admitted samples' estimates still to spend (``held``) or, without them, the
    requests running."""
    usage = journal.usage
    running = sum(len(requests) for requests in journal.running.values())
    calls, tokens = held if held is not None and held != (0, 0) else (running, 0)
    budget.account(usage.calls, usage.prompt_tokens + usage.completion_tokens, calls, tokens)


def _requests(
    waiting: list[list[str]], exchange: Exchange, journal: Journal
) -> dict[str, dict[str, Any]]:
    """The request bodies the admitted samples ``waiting`` ask for that are not sent yet."""
    running = {r for requests in journal.running.values() for r in requests}
    new: dict[str, dict[str, Any]] = {}
    for needs in waiting:
        new.update((r, exchange.asked[r]) for r in dict.fromkeys(needs) if r not in running)
    return new


def _admit(
    waiting: list[list[str]],
    exchange: Exchange,
    journal: Journal,
    budget: Budget,
    held: tuple[int, int] | None = None,
) -> dict[str, dict[str, Any]]:
    """Without a limit: the request bodies to send this round, those not sent yet, sample
    by sample while the budget admits them (every request sent is a call)."""
    running = {r for requests in journal.running.values() for r in requests}
    _account(budget, journal, held)
    new: dict[str, dict[str, Any]] = {}
    for needs in waiting:
        fresh = [r for r in dict.fromkeys(needs) if r not in running and r not in new]
        if not fresh:
            continue
        if not budget.reserve(len(fresh)):
            break
        new.update((r, exchange.asked[r]) for r in fresh)
    return new


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


def _submit(
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


def _reconcile(api: BatchAPI, journal: Journal, notify: Callable[[str], None]) -> float | None:
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


def _cancel_strays(
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


def _wait(
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
