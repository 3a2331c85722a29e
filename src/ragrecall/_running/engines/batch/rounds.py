"""Batch mode: score samples through a provider's Batch API (half the price, within a day).

A run goes in rounds. Each round replays every sample still to score, metric by metric,
against the judge's ``Exchange``: requests a batch answered replay as they came, and the first
unanswered request of each metric ends that metric's replay. The round's new requests (each
once, however many samples ask it) go out as batches; the run waits for them to end, records
what each request got in the journal, and starts the next round. Decomposition is the first
round and attribution the second; a re-ask or a failed request sent again takes one more.
A sample is written to the results file once all its metrics finish, exactly as ``eval``
writes it; failures are results (unscorable, with the batch's reason), never lost.

The batches themselves (sending, polling, settling those a stopped run left) are
``batches.py``'s.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from ragrecall._core.schemas import RecallResult, Sample
from ragrecall._judge.retry import Policy
from ragrecall._metrics.base import Metric
from ragrecall._metrics.estimate import run_estimator
from ragrecall._running.budget import Budget
from ragrecall._running.store import Record, ResultsFile

from ..base import Identity
from .api import BatchAPI
from .batches import BatchSettings, cancel_strays, reconcile, submit, wait
from .exchange import Deferred, Exchange
from .journal import Journal

__all__ = ["run_rounds"]


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
    settings: BatchSettings,
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
    swept = reconcile(api, journal, notify) if journal.pending else None
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
            record = Record(
                key,
                index,
                samples[index],
                results,
                occurrence,
                content,
                timestamp=datetime.now(timezone.utc),
            )
            store.append(record)
            on_record(record)
        held = _held(admitted, answered)
        _account(budget, journal, held)
        if not left:
            if swept is not None:  # a batch whose create call was still under way then
                cancel_strays(api, journal, swept, notify)
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
            for batch, requests in submit(new, api, settings, journal):
                notify(f"batch {batch}: {len(requests)} requests sent (round {journal.rounds})")
        if not journal.running:  # nothing new could be sent: the budget is spent
            return
        wait(api, journal, settings, notify)
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
