"""evaluate(): dataset forms, concurrency, unscorable samples that do not stop the batch."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pandas as pd
import pytest
from fakes import ScriptedJudge, keyword_reply

from ragrecall import (
    ClaimCache,
    ContextRecall,
    SampleError,
    aevaluate,
    astream,
    evaluate,
    load_samples,
)

ROWS = [
    {"question": "q1", "ground_truth": "Cats purr. Dogs fly.", "contexts": ["Cats purr loudly."]},
    {"question": "q2", "ground_truth": "MALFORMED here.", "contexts": ["MALFORMED here, too."]},
    {"question": "q3", "ground_truth": "Snow is cold.", "contexts": ["Snow is cold and white."]},
]


def judge() -> ScriptedJudge:
    def reply(messages: Any) -> Any:
        if any("MALFORMED" in str(m.content) for m in messages):
            return "I refuse to answer in JSON."
        return keyword_reply(messages)

    return ScriptedJudge(reply=reply)


def recall() -> ContextRecall:
    return ContextRecall(judge(), claims="sentences", cache=ClaimCache())


def test_one_malformed_reply_makes_one_sample_unscorable_and_the_rest_score() -> None:
    report = evaluate(ROWS, [recall()], concurrency=2)
    results = report.results["context_recall"]
    assert [r.status for r in results] == ["scored", "unscorable", "scored"]
    assert [r.score for r in results] == [0.5, None, 1.0]
    assert "invalid reply after a re-ask" in results[1].reason
    assert report.scores == {"context_recall": 0.75}
    assert report.mean == 0.75
    assert report.unscorable() == [1]
    # batched: one call; the malformed one: batched + re-ask, then per-claim + re-ask
    assert [r.usage.calls for r in results] == [1, 4, 1]
    assert report.usage.calls == 6


def test_evaluate_twice_in_one_process_and_async() -> None:
    assert evaluate(ROWS[:1], [recall()]).mean == 0.5
    assert evaluate(ROWS[2:], [recall()]).mean == 1.0


async def test_aevaluate_inside_a_running_loop() -> None:
    report = await aevaluate(ROWS, [recall()], concurrency=3)
    assert report.scores["context_recall"] == 0.75


def test_to_pandas_has_one_row_per_sample() -> None:
    frame = evaluate(ROWS, [recall()]).to_pandas()
    assert list(frame["context_recall"].isna()) == [False, True, False]
    assert list(frame["context_recall_status"]) == ["scored", "unscorable", "scored"]
    assert frame.loc[0, "context_recall_missing"] == ["Dogs fly."]


def test_dataset_forms(tmp_path: Any) -> None:
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n")
    csv = tmp_path / "d.csv"
    pd.DataFrame([{**r, "contexts": json.dumps(r["contexts"])} for r in ROWS]).to_csv(csv)
    frame = pd.DataFrame(ROWS)
    for data in (ROWS, jsonl, str(csv), frame):
        samples = load_samples(data)
        assert [s.reference for s in samples] == [r["ground_truth"] for r in ROWS]
        assert samples[0].retrieved_contexts[0].text == "Cats purr loudly."


def test_column_map() -> None:
    rows = [{"q": "x", "gold": "Cats purr.", "ctx": ["Cats purr."]}]
    samples = load_samples(rows, {"q": "user_input", "gold": "reference", "ctx": "contexts"})
    assert samples[0].reference == "Cats purr." and samples[0].user_input == "x"
    with pytest.raises(SampleError, match="row 0: column_map names missing columns"):
        load_samples(rows, {"nope": "reference"})


def test_bad_rows_name_row_and_field() -> None:
    with pytest.raises(SampleError, match=r"row 1, field 'contexts'"):
        load_samples([ROWS[0], {"reference": "x", "contexts": "one string"}])
    with pytest.raises(SampleError, match=r"row 0, field 'reference'"):
        load_samples([{"reference": 3}])
    with pytest.raises(SampleError, match="row 0: expected a mapping"):
        load_samples([["not", "a", "row"]])


def test_metric_names_must_be_unique() -> None:
    with pytest.raises(ValueError, match="unique"):
        evaluate(ROWS, [recall(), recall()])


def test_evaluate_keeps_each_metrics_own_retries_and_deadline_unless_told() -> None:
    failures = iter(range(4))

    def flaky(messages: Any) -> Any:
        if next(failures, None) is not None:  # four transient failures, then answers
            return TimeoutError("slow judge")
        return keyword_reply(messages)

    def patient() -> ContextRecall:
        metric = ContextRecall(
            ScriptedJudge(reply=flaky), claims="sentences", max_retries=5, timeout=60
        )
        metric.policy = replace(metric.policy, backoff=0.001)
        return metric

    row = {"question": "q", "ground_truth": "Snow is cold.", "contexts": ["Snow is cold, always."]}
    assert patient().policy.timeout == 60
    assert evaluate([row], [patient()]).results["context_recall"][0].score == 1.0
    failures = iter(range(4))
    told = evaluate([row], [patient()], max_retries=2).results["context_recall"][0]
    assert told.status == "unscorable" and "TimeoutError" in told.reason


def test_to_pandas_keeps_the_input_columns_then_the_metrics() -> None:
    rows = [{**r, "answer": "Cats purr.", "retrieved_ids": ["a"]} for r in ROWS]
    frame = evaluate(rows, [recall()]).to_pandas()
    assert list(frame.columns)[:5] == [
        "user_input",
        "reference",
        "retrieved_contexts",
        "response",
        "retrieved_ids",
    ]
    assert list(frame.columns)[5:] == [
        "context_recall",
        "context_recall_status",
        "context_recall_reason",
        "context_recall_missing",
    ]
    assert frame.loc[0, "retrieved_contexts"] == ["Cats purr loudly."]


def test_csv_written_by_pandas_loads_as_written(tmp_path: Any) -> None:
    """pandas (and RAGAS, which uses it) write list cells as Python literals; empty cells are
    absent, a UTF-8 BOM is not part of the first column's name."""
    rows = [
        {
            "user_input": "q1",
            "reference": "Cats purr.",
            "retrieved_contexts": ["Cats purr loudly.", "It's 'quoted'."],
            "reference_contexts": ["Cats purr loudly."],
            "retrieved_ids": ["a", "b"],
            "relevance": {"a": 1.0},
        },
        {"user_input": "q2", "reference": "Dogs bark.", "retrieved_contexts": ["Dogs bark."]},
    ]
    path = tmp_path / "ragas.csv"
    pd.DataFrame(rows).to_csv(path, index=False, encoding="utf-8-sig")
    assert path.read_bytes().startswith(b"\xef\xbb\xbfuser_input")
    first, second = load_samples(path)
    assert [c.text for c in first.retrieved_contexts] == ["Cats purr loudly.", "It's 'quoted'."]
    assert first.reference_contexts == ["Cats purr loudly."]
    assert (first.retrieved_ids, first.relevance) == (["a", "b"], {"a": 1.0})
    assert (second.retrieved_ids, second.reference_contexts, second.relevance) == (None,) * 3
    assert len(evaluate(path, [recall()]).samples) == 2


def test_a_list_cell_that_is_no_list_names_its_row_and_field(tmp_path: Any) -> None:
    path = tmp_path / "bad.csv"
    pd.DataFrame([{"user_input": "q", "retrieved_ids": "[a, b"}]).to_csv(path, index=False)
    with pytest.raises(SampleError, match=r"row 0.*retrieved_ids.*neither JSON nor a Python"):
        load_samples(path)


def test_chunks_with_null_fields_read_as_absent() -> None:
    (sample,) = load_samples(
        [{"user_input": "q", "retrieved_contexts": [{"id": "a", "text": "t", "metadata": None}]}]
    )
    assert sample.retrieved_contexts[0].metadata == {}


async def test_astream_reads_a_one_shot_iterator_once() -> None:
    scored = [s async for s in astream(iter(ROWS), [recall()])]
    assert sorted(s.index for s in scored) == [0, 1, 2]


async def test_astream_skip_may_be_a_coroutine_function() -> None:
    asked: list[str | None] = []

    async def skip(sample: Any) -> bool:  # e.g. a budget kept in another process
        asked.append(sample.user_input)
        return sample.user_input == "q2"

    scored = [s async for s in astream(ROWS, [recall()], skip=skip)]
    assert sorted(s.index for s in scored) == [0, 2]
    assert asked == ["q1", "q2", "q3"]
