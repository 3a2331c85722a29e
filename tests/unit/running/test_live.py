"""LiveScorer: retrievals without a reference scored off the caller's path, on a bounded queue
that drops and counts, sampled, held to a per-minute call budget."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from ragrecall import ClaimCache, ContextRecall, QuestionRecall, Sample, Sufficiency
from ragrecall.adapters import LiveScorer, LiveStats, no_reference_metric, sampled
from ragrecall.engines import Record
from ragrecall.sinks import CallableSink
from ragrecall.testing import ScriptedJudge, keyword_reply

Q = "Where is the Eiffel Tower?"
SAMPLE = Sample(user_input=Q, retrieved_contexts=["The Eiffel Tower is in Paris."])


def gated(gate: threading.Event) -> ScriptedJudge:
    def reply(messages: Sequence[BaseMessage]) -> Any:
        gate.wait(10)
        return keyword_reply(messages)

    return ScriptedJudge(reply=reply)


def scorer(judge: Any = None, **options: Any) -> tuple[LiveScorer, list[Record]]:
    seen: list[Record] = []
    metric = Sufficiency(judge or ScriptedJudge(), cache=ClaimCache())
    return LiveScorer(metric, [CallableSink(seen.append)], **options), seen


def done(stats: LiveStats) -> int:
    return stats.scored + stats.unscorable + stats.dropped + stats.abandoned


def test_a_record_says_no_reference_and_which_metric() -> None:
    live, seen = scorer()
    with live:
        assert live.offer(Q, SAMPLE, run_id="run-1", extra={"retriever": "r"})
    (record,) = seen
    assert record.run_id == "run-1" and record.reference is None
    assert record.extra == {"retriever": "r", "no_reference": True, "metric": "sufficiency"}
    assert record.results["sufficiency"].status == "scored"
    stats = live.stats
    assert (stats.offered, stats.sampled, stats.scored, stats.pending) == (1, 1, 1, 0)
    assert stats.judge_calls >= 1


def test_a_full_queue_drops_and_counts_and_never_blocks() -> None:
    gate = threading.Event()
    live, seen = scorer(gated(gate), max_queue=2)
    start = time.perf_counter()
    queued = [live.offer(f"{Q} {i}", SAMPLE) for i in range(50)]
    elapsed = time.perf_counter() - start
    assert elapsed < 1.0  # a put, never a wait for the judge (held back by the gate)
    stats = live.stats
    assert stats.dropped >= 47 and queued.count(True) == 50 - stats.dropped
    gate.set()
    live.close()
    stats = live.stats
    assert stats.scored == len(seen) == 50 - stats.dropped and stats.pending == 0


def test_sampling_by_query_is_counted_and_repeatable() -> None:
    live, seen = scorer(sample_rate=0.3, max_calls_per_minute=None)
    queries = [f"question {i}?" for i in range(200)]
    with live:
        for q in queries:
            live.offer(q, Sample(user_input=q, retrieved_contexts=["x"]))
    stats = live.stats
    assert stats.sampled == sum(sampled(q, 0.3) for q in queries) == len(seen)
    assert stats.skipped_by_sampling == 200 - stats.sampled
    assert {r.extra["sample_rate"] for r in seen} == {0.3}


def test_the_call_budget_holds_the_worker_and_close_does_not_wait_for_it() -> None:
    judge = ScriptedJudge()
    live, _ = scorer(judge, max_calls_per_minute=3, max_queue=4)
    for i in range(20):
        live.offer(f"{Q} {i}", SAMPLE)
    time.sleep(0.5)
    assert len(judge.calls) == 3  # the minute's budget, spent
    start = time.perf_counter()
    live.close(timeout=0.1)
    assert time.perf_counter() - start < 3.0
    stats = live.stats
    assert stats.judge_calls <= 3 and stats.dropped >= 20 - 4 - 2
    assert done(stats) == stats.sampled == 20 and stats.abandoned >= 1


def test_a_failing_judge_is_an_unscorable_record_with_its_reason() -> None:
    live, seen = scorer(ScriptedJudge(reply=lambda _: RuntimeError("judge down")))
    with live:
        live.offer(Q, SAMPLE)
        live.offer("broken", lambda: 1 / 0)  # type: ignore[arg-type, return-value]
    stats = live.stats
    assert stats.unscorable == 2 and stats.scored == 0 and len(seen) == 2
    reasons = sorted(r.results["sufficiency"].reason or "" for r in seen)
    assert "ZeroDivisionError" in reasons[0] and "judge down" in reasons[1]


def test_flush_waits_and_times_out() -> None:
    gate = threading.Event()
    live, seen = scorer(gated(gate))
    live.offer(Q, SAMPLE)
    assert live.flush(timeout=0.1) is False and seen == []
    gate.set()
    assert live.flush(timeout=10) is True and len(seen) == 1
    live.close()
    assert live.offer(Q, SAMPLE) is False  # closed: counted, not queued
    assert live.stats.skipped_by_sampling == 1


@pytest.mark.parametrize(
    ("name", "cls"), [("sufficiency", Sufficiency), ("question_recall", QuestionRecall)]
)
@pytest.mark.filterwarnings("ignore:QuestionRecall is deprecated:DeprecationWarning")
def test_the_metric_by_name_takes_the_judge_of_the_referenced_metrics(name: str, cls: type) -> None:
    judge = ScriptedJudge()
    metric = no_reference_metric(name, [ContextRecall(judge)])
    assert isinstance(metric, cls) and metric.judge is judge


@pytest.mark.parametrize(
    ("name", "message"),
    [("nope", "no_reference='nope': unknown metric"), ("context_recall", "needs reference")],
)
def test_a_metric_that_cannot_score_without_a_reference_is_refused(name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        no_reference_metric(name)


@pytest.mark.parametrize(
    ("options", "argument"),
    [
        ({"sample_rate": 1.5}, "sample_rate"),
        ({"max_calls_per_minute": 0}, "max_calls_per_minute"),
        ({"max_queue": 0}, "max_queue"),
    ],
)
def test_options_out_of_range_name_the_argument(options: dict[str, Any], argument: str) -> None:
    with pytest.raises(ValueError, match=argument):
        scorer(**options)
