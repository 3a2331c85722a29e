"""RecallLogger and sinks: one record per scored sample (a results file's Record), unscorable
records, drop policy."""

from __future__ import annotations

import json
import sqlite3
import threading
from typing import Any

import pytest
from fakes import ScriptedJudge, keyword_reply

from ragrecall import ChunkRecall, ClaimCache, ContextRecall, RecallLogger
from ragrecall.engines import Record, read_records
from ragrecall.sinks import CallableSink, JsonlSink, LangSmithSink, RecallRecord, SQLiteSink

SAMPLE = {"user_input": "q", "reference": "Cats purr. Dogs fly.", "contexts": ["Cats purr."]}


def recall(judge: Any = None) -> ContextRecall:
    return ContextRecall(judge or ScriptedJudge(), claims="sentences", cache=ClaimCache())


def test_every_sink_gets_one_record_per_sample(tmp_path: Any) -> None:
    seen: list[Record] = []
    jsonl, db = JsonlSink(tmp_path / "r.jsonl"), SQLiteSink(tmp_path / "r.sqlite")
    metrics = [recall(), ChunkRecall(ScriptedJudge())]
    with RecallLogger(metrics, [jsonl, db, CallableSink(seen.append)]) as logger:
        for i in range(3):
            sample = {**SAMPLE, "user_input": f"q{i}"}
            logger.submit(sample, run_id=f"run-{i}", extra={"parent_run_id": "p"})
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert len(lines) == 3 and len(seen) == 3
    line = json.loads(lines[0])
    assert sorted(line["results"]) == ["chunk_recall", "context_recall"]
    assert line["results"]["context_recall"]["score"] == 0.5 and line["run_id"] == "run-0"
    (record,) = (r for r in read_records(tmp_path / "r.jsonl") if r.run_id == "run-0")
    assert record.score("context_recall") == 0.5 and record.query == "q0"
    assert record.chunks[0].text == "Cats purr." and record.extra == {"parent_run_id": "p"}
    assert record.timestamp is not None and record.key == record.sample.key()
    stored = SQLiteSink(tmp_path / "r.sqlite").records()
    assert [r.run_id for r in stored] == ["run-0", "run-1", "run-2"]
    assert [r.to_json() for r in stored] == lines
    # a record counts once however many sinks took it; the sinks' writes are counted apart
    assert logger.stats.written == 3 and logger.stats.sink_writes == 9
    assert logger.stats.submitted == 3


def test_the_older_shape_is_a_view_of_a_record(tmp_path: Any) -> None:
    seen: list[Record] = []
    with RecallLogger([recall()], [CallableSink(seen.append)]) as logger:
        logger.submit(SAMPLE, run_id="r", extra={"parent_run_id": "p"})
    (view,) = RecallRecord.views(seen[0])
    assert view.result == seen[0].result and view.result.score == 0.5
    assert (view.run_id, view.query, view.extra) == ("r", "q", {"parent_run_id": "p"})
    assert view.timestamp == seen[0].timestamp
    assert RecallRecord.model_validate_json(view.model_dump_json()) == view


def test_a_torn_last_line_is_cut_before_the_next_record(tmp_path: Any) -> None:
    path = tmp_path / "r.jsonl"
    with RecallLogger([recall()], [JsonlSink(path)]) as logger:
        logger.submit(SAMPLE, run_id="first")
    with path.open("a") as f:
        f.write('{"key": "torn')
    with RecallLogger([recall()], [JsonlSink(path)]) as logger:
        logger.submit({**SAMPLE, "user_input": "q2"}, run_id="second")
    assert sorted(str(r.run_id) for r in read_records(path)) == ["first", "second"]


def test_an_older_sqlite_table_is_refused_by_name(tmp_path: Any) -> None:
    db = sqlite3.connect(tmp_path / "r.sqlite")
    db.execute("CREATE TABLE recall (id INTEGER PRIMARY KEY, metric TEXT, record TEXT)")
    db.commit()
    db.close()
    with pytest.raises(ValueError, match="older shape"):
        SQLiteSink(tmp_path / "r.sqlite")
    assert SQLiteSink(tmp_path / "r.sqlite", table="records").records() == []


def test_judge_failure_writes_an_unscorable_record() -> None:
    seen: list[Record] = []
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

    seen: list[Record] = []
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
    seen: list[Record] = []
    logger = RecallLogger([recall()], [CallableSink(seen.append)])
    for _ in range(4):
        logger.submit(SAMPLE)
    logger.flush()
    assert len(seen) == 4
    inline = RecallLogger([recall()], [CallableSink(seen.append)], inline=True)
    inline.submit(SAMPLE)
    assert len(seen) == 5


def test_a_failing_sink_is_counted_and_others_still_write() -> None:
    seen: list[Record] = []

    def broken(record: Record) -> None:
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
