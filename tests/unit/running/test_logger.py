"""RecallLogger and sinks: one record per scored sample, unscorable records, drop policy."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from fakes import ScriptedJudge, keyword_reply

from ragrecall import ClaimCache, ContextRecall, RecallLogger
from ragrecall.sinks import CallableSink, JsonlSink, LangSmithSink, RecallRecord, SQLiteSink

SAMPLE = {"user_input": "q", "reference": "Cats purr. Dogs fly.", "contexts": ["Cats purr."]}


def recall(judge: Any = None) -> ContextRecall:
    return ContextRecall(judge or ScriptedJudge(), claims="sentences", cache=ClaimCache())


def test_every_sink_gets_one_record_per_sample(tmp_path: Any) -> None:
    seen: list[RecallRecord] = []
    jsonl, db = JsonlSink(tmp_path / "r.jsonl"), SQLiteSink(tmp_path / "r.sqlite")
    with RecallLogger([recall()], [jsonl, db, CallableSink(seen.append)]) as logger:
        for i in range(3):
            logger.submit(SAMPLE, run_id=f"run-{i}", extra={"parent_run_id": "p"})
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert len(lines) == 3 and len(seen) == 3
    record = RecallRecord.model_validate(json.loads(lines[0]))
    assert record.result.score == 0.5 and record.query == "q"
    assert record.chunks[0].text == "Cats purr." and record.extra == {"parent_run_id": "p"}
    assert sorted(r.run_id for r in SQLiteSink(tmp_path / "r.sqlite").records()) == [
        "run-0",
        "run-1",
        "run-2",
    ]
    assert logger.stats.written == 9 and logger.stats.submitted == 3


def test_judge_failure_writes_an_unscorable_record() -> None:
    seen: list[RecallRecord] = []
    judge = ScriptedJudge(reply=lambda m: ValueError("judge down"))
    with RecallLogger([recall(judge)], [CallableSink(seen.append)]) as logger:
        logger.submit(SAMPLE, run_id="r")
    assert [r.result.status for r in seen] == ["unscorable"]
    assert "judge down" in seen[0].result.reason
    assert logger.stats.unscorable == 1


def test_full_queue_drops_and_counts(caplog: pytest.LogCaptureFixture) -> None:
    gate = threading.Event()

    def slow(messages: Any) -> Any:
        gate.wait(5)
        return keyword_reply(messages)

    seen: list[RecallRecord] = []
    logger = RecallLogger(
        [recall(ScriptedJudge(reply=slow))],
        [CallableSink(seen.append)],
        max_queue=1,
        on_full="drop",
    )
    for i in range(5):
        logger.submit(SAMPLE, run_id=str(i))
    gate.set()
    logger.close()
    assert logger.stats.dropped >= 3
    assert len(seen) + logger.stats.dropped == 5
    assert "queue full" in caplog.text


def test_flush_leaves_nothing_pending_and_inline_scores_now() -> None:
    seen: list[RecallRecord] = []
    logger = RecallLogger([recall()], [CallableSink(seen.append)])
    for _ in range(4):
        logger.submit(SAMPLE)
    logger.flush()
    assert len(seen) == 4
    inline = RecallLogger([recall()], [CallableSink(seen.append)], inline=True)
    inline.submit(SAMPLE)
    assert len(seen) == 5


def test_a_failing_sink_is_counted_and_others_still_write() -> None:
    seen: list[RecallRecord] = []

    def broken(record: RecallRecord) -> None:
        raise OSError("disk full")

    with RecallLogger([recall()], [CallableSink(broken), CallableSink(seen.append)]) as logger:
        logger.submit(SAMPLE)
    assert logger.stats.sink_errors == 1 and len(seen) == 1


def test_langsmith_sink_sends_score_and_missing_claims() -> None:
    class Client:
        def __init__(self) -> None:
            self.feedback: list[dict[str, Any]] = []

        def create_feedback(self, **kwargs: Any) -> None:
            self.feedback.append(kwargs)

    client = Client()
    with RecallLogger([recall()], [LangSmithSink(client)]) as logger:
        logger.submit(SAMPLE, run_id="3f0c6f1e-0000-4000-8000-000000000000")
    (feedback,) = client.feedback
    assert feedback["key"] == "context_recall" and feedback["score"] == 0.5
    assert feedback["comment"] == 'missing: ["Dogs fly."]'


def test_a_sink_that_fails_to_close_does_not_keep_the_others_open(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Failing(CallableSink):
        def close(self) -> None:
            raise OSError("disk gone")

    closed: list[str] = []

    class Closing(CallableSink):
        def close(self) -> None:
            closed.append("closed")

    logger = RecallLogger([recall()], [Failing(print), Closing(print)])
    logger.submit(SAMPLE)
    logger.close()
    assert closed == ["closed"] and logger.stats.sink_errors == 1
    assert "sink Failing failed to close" in caplog.text
