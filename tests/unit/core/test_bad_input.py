"""Bad input never escapes as anything but one clear SampleError (property-based).

Rows with empty, whitespace-only, very long, non-Latin, control-character or None fields,
duplicate chunks, thousands of chunks, values of the wrong type and wrong column names: each
row either scores, is unscorable with a reason, or raises SampleError at load time naming the
row (and, for a bad value, the field). Checked through ``evaluate`` and through ``score``,
with a keyword fake judge.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from fakes import ScriptedJudge, keyword_reply
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from langchain_core.messages import BaseMessage

from ragrecall import ClaimCache, ContextRecall, RecallResult, SampleError, evaluate, load_samples

TRIED: list[str] = []  # one entry per generated input, for the report

NON_LATIN = [
    "東京は日本の首都です。",
    "Москва — столица России.",
    "القاهرة هي عاصمة مصر.",
    "नई दिल्ली भारत की राजधानी है।",
    "🙂🙃 🐈 purrs.",
    "\uff23\uff41\uff54\uff53\u3000\uff50\uff55\uff52\uff52\uff0e",  # full-width
    "e\u0301te\u0301 cafe\u0301",  # combining accents
    "\u202eright-to-left override",
]
CONTROL = st.text(alphabet=st.characters(codec="utf-8", categories=["Cc", "Cf", "Zl", "Zp"]))

texts = st.one_of(
    st.none(),
    st.just(""),
    st.text(alphabet=" \t\n\r\x0b\x0c\u00a0\u2003\u3000", min_size=1, max_size=20),
    st.text(max_size=60),
    st.sampled_from(NON_LATIN),
    CONTROL,
    st.builds(lambda n: "Cats purr loudly. " * n, st.integers(300, 1500)),  # 5k to 27k chars
    st.sampled_from(["Cats purr.", "Cats purr. Dogs bark.", "Birds sing at dawn."]),
)
wrong_types = st.one_of(
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.binary(max_size=10),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    st.lists(st.integers(), max_size=3),
)
not_text = wrong_types.filter(lambda v: not isinstance(v, bytes))  # UTF-8 bytes read as text
values = st.one_of(texts, wrong_types)
chunk_items = st.one_of(
    texts,
    wrong_types,
    st.fixed_dictionaries({"text": texts}, optional={"id": st.one_of(st.text(max_size=3), values)}),
    st.fixed_dictionaries({"page_content": texts, "metadata": values}),
)
contexts = st.one_of(
    st.none(),
    values,
    st.lists(chunk_items, max_size=6),
    st.builds(lambda t, n: [t] * n, texts, st.integers(2, 4)),  # duplicate chunks
    st.builds(lambda n: [f"Cats purr {i}." for i in range(n)], st.integers(1000, 2000)),
    st.builds(
        lambda n: [{"id": "same", "text": f"t{i}"} for i in range(n)], st.integers(2, 3)
    ),  # duplicate ids
)
claims = st.one_of(st.none(), values, st.lists(st.one_of(texts, wrong_types), max_size=4))

# Our names, their aliases, and names a user might wrongly use.
TEXT_KEYS = ["user_input", "question", "query", "reference", "ground_truth", "response", "answer"]
WRONG_KEYS = ["q", "gt", "ctx", "Question", "context", "golden", "passages", ""]
THOUSANDS = [f"Cats purr {i}." for i in range(3000)]
LIST_KEYS = ["contexts", "retrieved_contexts", "reference_claims", "retrieved_ids"]


@st.composite
def rows(draw: st.DrawFn) -> dict[Any, Any]:
    """A plausible row with one to three hostile changes."""
    row: dict[Any, Any] = {
        "question": "What do cats do?",
        "reference": draw(st.sampled_from(["Cats purr.", "Cats purr. Dogs bark.", "Cats fly."])),
        "contexts": ["Cats purr loudly.", "Dogs bark at night."],
    }
    for _ in range(draw(st.integers(1, 3))):
        change = draw(st.sampled_from(["text", "type", "contexts", "claims", "rename", "drop"]))
        if change == "text":
            row[draw(st.sampled_from(TEXT_KEYS))] = draw(texts)
        elif change == "type":
            row[draw(st.sampled_from(TEXT_KEYS + LIST_KEYS))] = draw(wrong_types)
        elif change == "contexts":
            row[draw(st.sampled_from(["contexts", "retrieved_contexts"]))] = draw(contexts)
        elif change == "claims":
            row["reference_claims"] = draw(claims)
        elif row:
            key = draw(st.sampled_from(sorted(row, key=str)))
            value = row.pop(key)
            if change == "rename":
                row[draw(st.sampled_from(WRONG_KEYS))] = value
    return row


metrics = st.sampled_from(
    [
        {"claims": "atomic", "strategy": "per_claim", "evidence": "align"},
        {"claims": "atomic", "strategy": "batched"},
        {"claims": "sentences", "strategy": "per_claim", "evidence": "quote"},
        {"claims": "sentences", "strategy": "batched"},
    ]
)


def lenient_reply(messages: Sequence[BaseMessage]) -> Any:
    """The keyword judge; where the prompt defeats its parsing, a non-JSON reply."""
    try:
        return keyword_reply(messages)
    except (IndexError, ValueError, StopIteration):
        return "I cannot read that."


def recall(options: dict[str, Any]) -> ContextRecall:
    return ContextRecall(ScriptedJudge(reply=lenient_reply), cache=ClaimCache(), **options)


def check_result(result: RecallResult) -> None:
    assert result.status in ("scored", "unscorable")
    if result.status == "unscorable":
        assert result.score is None and result.reason
    else:
        assert result.score is not None and 0.0 <= result.score <= 1.0
        assert len(result.verdicts) == len(result.claims)


def check_sample_error(err: SampleError, row: int, where: str = "") -> None:
    """``where``: the file and line a file's error names first."""
    assert err.row == row, err
    assert str(err).startswith(f"{where}row {row}")


def features(row: Any) -> list[str]:
    """What makes a row hostile, for hypothesis' statistics (--hypothesis-show-statistics)."""
    if not isinstance(row, dict):
        return ["not a mapping"]
    found = []
    for key, value in row.items():
        items = value if isinstance(value, list) else [value]
        if isinstance(value, list) and len(value) >= 1000:
            found.append("thousands of chunks")
        unique = {json.dumps(v, default=str) for v in items}
        if isinstance(value, list) and len(unique) < len(value):
            found.append("duplicate items")
        for item in items:
            text = item.get("text") if isinstance(item, dict) else item
            if item is None:
                found.append("None")
            elif isinstance(text, str) and len(text) > 5000:
                found.append("very long text")
            elif isinstance(text, str) and not text.strip():
                found.append("empty or whitespace")
            elif isinstance(text, str) and any(ord(c) < 32 or 127 <= ord(c) < 160 for c in text):
                found.append("control characters")
            elif isinstance(text, str) and any(ord(c) > 0x2FF for c in text):
                found.append("non-Latin")
            elif not isinstance(text, str):
                found.append("wrong type")
        if key in WRONG_KEYS:
            found.append("wrong column name")
    return sorted(set(found))


def describe(row: Any) -> str:
    if not isinstance(row, dict):
        return f"row:{type(row).__name__}"
    return ",".join(f"{k}:{type(v).__name__}" for k, v in sorted(row.items()))


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(row=rows(), options=metrics)
@example(  # thousands of chunks, a reference of 27k characters
    row={"question": "q", "reference": "Cats purr 7. " * 2000, "contexts": THOUSANDS},
    options={"claims": "sentences", "strategy": "batched"},
)
@example(row={"reference": "Cats purr.", "contexts": THOUSANDS}, options={"claims": "atomic"})
@example(  # duplicate chunks, control characters, non-Latin text
    row={"question": "\x00\x07\u202e", "reference": "東京 purr.", "contexts": ["東京 purr."] * 3},
    options={"claims": "sentences", "strategy": "per_claim", "evidence": "quote"},
)
@example(row={"q": "What?", "reference": " \n\t", "ctx": ["a"]}, options={"claims": "atomic"})
@example(  # a pandas empty cell: score() reads it as evaluate() does
    row={"reference": "Cats purr.", "contexts": ["a"], "reference_claims": math.nan},
    options={"claims": "atomic"},
)
def test_every_row_scores_is_unscorable_or_raises_one_sample_error(
    row: Any, options: dict[str, Any]
) -> None:
    TRIED.append(describe(row))
    for feature in features(row):
        event(feature)
    metric = recall(options)
    try:
        load_samples([row])
    except SampleError as err:
        event("outcome: SampleError")
        check_sample_error(err, 0)
        with pytest.raises(SampleError) as raised:
            evaluate([row], [metric])
        check_sample_error(raised.value, 0)
        assert metric.judge.calls == []  # type: ignore[attr-defined]  # nothing was judged
        if isinstance(row, dict):
            with pytest.raises(SampleError):
                metric.score(row)
        return
    report = evaluate([row], [metric])
    (result,) = report.results["context_recall"]
    event(f"outcome: {result.status}")
    check_result(result)
    direct = metric.score(row)
    check_result(direct)
    assert (direct.status, direct.score) == (result.status, result.score)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    good=st.lists(
        st.fixed_dictionaries({"question": st.just("q"), "ground_truth": texts}), max_size=5
    ),
    bad=st.one_of(
        wrong_types,
        st.fixed_dictionaries({"question": not_text}),
        st.fixed_dictionaries({"contexts": st.just("one string, not a list")}),
        st.fixed_dictionaries({"reference_claims": st.lists(not_text, min_size=1)}),
    ),
    position=st.integers(0, 5),
)
def test_a_bad_row_anywhere_is_named_before_any_judge_call(
    good: list[dict[str, Any]], bad: Any, position: int
) -> None:
    TRIED.append("dataset:" + describe(bad))
    position = min(position, len(good))
    data = [*good[:position], bad, *good[position:]]
    metric = recall({"claims": "sentences"})
    with pytest.raises(SampleError) as raised:
        evaluate(data, [metric])
    check_sample_error(raised.value, position)
    if isinstance(bad, dict):  # a bad value is named by its field; unknown columns are listed
        assert raised.value.field is not None or "no sample field" in str(raised.value)
    assert metric.judge.calls == []  # type: ignore[attr-defined]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(row=rows())
def test_jsonl_files_behave_like_lists(tmp_path_factory: Any, row: dict[str, Any]) -> None:
    try:
        line = json.dumps(row, allow_nan=False)
    except (TypeError, ValueError):  # bytes, NaN: not JSON
        return
    TRIED.append("jsonl:" + describe(row))
    path: Path = tmp_path_factory.mktemp("data") / "rows.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    metric = recall({"claims": "sentences"})
    try:
        expected = load_samples([json.loads(line)])
    except SampleError:
        with pytest.raises(SampleError) as raised:
            evaluate(path, [metric])
        check_sample_error(raised.value, 0, f"{path}:1: ")
        return
    assert load_samples(path) == expected
    check_result(evaluate(path, [metric]).results["context_recall"][0])


def test_wrong_column_names_are_named() -> None:
    with pytest.raises(SampleError, match=r"row 0: .*'gold'"):
        load_samples([{"q": "What?", "gold": "Cats purr.", "ctx": ["Cats purr."]}])


def test_nan_cells_are_empty_not_errors() -> None:
    (sample,) = load_samples([{"question": math.nan, "reference": "Cats purr.", "contexts": []}])
    assert sample.user_input is None


def test_report_inputs_tried() -> None:
    """Runs last in this module: prints how many inputs hypothesis tried (pytest -s)."""
    print(f"\nhypothesis tried {len(TRIED)} inputs, {len(set(TRIED))} distinct shapes")
