"""Every file ragrecall reads, damaged at random (property-based, Hypothesis): the harness of
tests/unit/io/test_fuzz_files.py (a few dozen inputs of each kind) and
tests/system/test_fuzz_files_at_scale.py (1,250 of each, 10,000 in all).

A valid file of each kind is the seed (``make_seeds``); ``fuzz`` changes it by structure and by
bytes and runs each generated file through the command that reads it (``check``)."""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragrecall.cli import main

KINDS = [
    "data.jsonl",
    "data.json",
    "data.csv",
    "data.parquet",
    "traces",
    "claims",
    "labels",
    "profile",
    "results",
]
SEEN: Counter[str] = Counter()  # outcome per kind, for the report
# A place inside the file: file:LINE, a row, a field, a span, a run, a request.
PLACE = re.compile(r"\.\w+:\d+|\brows? \d|\bfield '|spans\[|\brun \d|request \d|resourceSpans")

JUDGE = ["--judge-factory", "fakes:ScriptedJudge", "--claim-mode", "sentences"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["", " ", "1.0", "NaN", "=1+1", "\u202e", "\x00", "supported", "true"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)


def mutate(draw: Callable[[Any], Any], value: Any) -> Any:
    """``value`` with one change somewhere inside it."""
    action = draw(st.integers(0, 9))
    if isinstance(value, dict) and value and action < 7:
        key = draw(st.sampled_from(sorted(value)))
        how = draw(st.sampled_from(["inside", "inside", "drop", "replace", "rename"]))
        out = dict(value)
        if how == "inside":
            out[key] = mutate(draw, value[key])
        elif how == "drop":
            del out[key]
        elif how == "rename":
            out[key + draw(st.sampled_from(["_", " ", "s"]))] = out.pop(key)
        else:
            out[key] = draw(json_values)
        return out
    if isinstance(value, list) and value and action < 7:
        i = draw(st.integers(0, len(value) - 1))
        how = draw(st.sampled_from(["inside", "inside", "drop", "replace", "double"]))
        out = list(value)
        if how == "inside":
            out[i] = mutate(draw, value[i])
        elif how == "drop":
            del out[i]
        elif how == "double":
            out.insert(i, value[i])
        else:
            out[i] = draw(json_values)
        return out
    if action == 9:
        return Deep(draw(st.sampled_from([50, 900, 5000])), value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and action == 8:
        return str(value)
    return draw(json_values)


class Deep:
    """``value`` inside ``depth`` lists: written as JSON without recursion."""

    def __init__(self, depth: int, value: Any):
        self.depth, self.value = depth, value


def dumps(value: Any) -> str:
    if isinstance(value, Deep):
        return "[" * value.depth + dumps(value.value) + "]" * value.depth
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dumps(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def damage_bytes(draw: Callable[[Any], Any], text: str) -> bytes:
    """``text`` as UTF-8, maybe cut short or with lines doubled, joined or broken."""
    data = text.encode("utf-8")
    how = draw(st.sampled_from(["none", "none", "none", "cut", "bytes", "lines", "control"]))
    if how == "cut" and data:
        return data[: draw(st.integers(0, len(data) - 1))]
    if how == "bytes":
        at = draw(st.integers(0, len(data)))
        junk = draw(
            st.sampled_from([b"\xff\xfe", b"\xc3", b"\x00", b"\r", b"\n\n", b"\xef\xbb\xbf"])
        )
        return data[:at] + junk + data[at:]
    if how == "control":
        at = draw(st.integers(0, len(data)))
        return (
            data[:at]
            + draw(st.sampled_from(["\u2028", "\x1b[2J", "\x0b", "\x1c"])).encode()
            + data[at:]
        )
    if how == "lines":
        lines = data.split(b"\n")
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["double", "join", "blank"]))
        if op == "double":
            lines.insert(i, lines[i])
        elif op == "join" and i + 1 < len(lines):
            lines[i : i + 2] = [lines[i] + lines[i + 1]]
        else:
            lines.insert(i, b"   ")
        return b"\n".join(lines)
    return data


# --- the seeds: one valid file of each kind ----------------------------------------------


def rows(n: int = 3) -> list[dict[str, Any]]:
    return [
        {
            "sample_id": f"s{i}",
            "question": f"What do cats do ({i})?",
            "reference": f"Cats purr {i}. Dogs bark {i}.",
            "contexts": [f"Cats purr {i} loudly.", {"id": "d2", "text": "Dogs bark."}],
            "reference_ids": ["d2"],
        }
        for i in range(n)
    ]


def jsonl(values: list[Any]) -> str:
    return "".join(dumps(v) + "\n" for v in values)


def otlp(question: str) -> dict[str, Any]:
    def attr(key: str, value: Any) -> dict[str, Any]:
        kind = "intValue" if isinstance(value, int) else "stringValue"
        return {"key": key, "value": {kind: str(value) if kind == "intValue" else value}}

    span = {
        "traceId": "t1",
        "spanId": "s1",
        "startTimeUnixNano": "1",
        "attributes": [
            attr("openinference.span.kind", "RETRIEVER"),
            attr("input.value", question),
            attr("retrieval.documents.0.document.id", "d1"),
            attr("retrieval.documents.0.document.content", "Cats purr 0."),
            attr("retrieval.documents.0.document.score", 3),
            {"key": "metadata", "value": {"kvlistValue": {"values": [attr("sample_id", "s0")]}}},
        ],
    }
    root = {"traceId": "t1", "spanId": "r", "startTimeUnixNano": "0", "attributes": []}
    span["parentSpanId"] = "r"
    return {"resourceSpans": [{"scopeSpans": [{"spans": [root, span]}]}]}


def langsmith(question: str) -> dict[str, Any]:
    return {
        "runs": [
            {
                "id": "r1",
                "run_type": "chain",
                "inputs": {"question": question},
                "outputs": {"output": "Cats purr."},
                "child_runs": [
                    {
                        "id": "r2",
                        "run_type": "retriever",
                        "inputs": {"query": question},
                        "outputs": {"documents": [{"page_content": "Cats purr 0.", "id": "d1"}]},
                        "extra": {"metadata": {"sample_id": "s0"}},
                    }
                ],
            }
        ]
    }


def make_seeds(folder: Path) -> dict[str, Any]:
    """Valid files of each kind in ``folder``, made by ragrecall itself where it writes them."""
    data = folder / "data.jsonl"
    data.write_text(jsonl(rows()))
    results = folder / "results.jsonl"
    assert main(["eval", str(data), *JUDGE, "--out", str(results)]) == 0
    claims = folder / "claims.jsonl"
    assert main(["claims", str(data), *JUDGE, "--out", str(claims)]) == 0
    assert main(["review", str(results), "--out", str(folder / "review")]) == 0
    labels = [{**r, "label": "supported"} for r in _csv_rows(folder / "review" / "review.csv")]
    profile = {
        "judge": "scripted:scripted",
        "prompt_version": "x",
        "scale_a": 1.0,
        "scale_b": 0.0,
        "support_threshold": 0.55,
        "lexical_weight": 0.3,
        "labels": 40,
        "moved": False,
        "note": "",
        "agreement": {},
    }
    return {
        "data": data,
        "rows": rows(),
        "results": [json.loads(line) for line in results.read_text().splitlines()],
        "claims": [json.loads(line) for line in claims.read_text().splitlines()],
        "labels": labels,
        "profile": profile,
        "traces": [otlp("What do cats do (0)?"), langsmith("What do cats do (0)?")],
    }


def _csv_rows(path: Path) -> list[dict[str, Any]]:
    import csv

    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# --- one generated input, through the command that reads it ------------------------------


def build(
    draw: Callable[[Any], Any], kind: str, seeds: dict[str, Any], folder: Path
) -> tuple[Path, list[str]]:
    """A damaged file of ``kind`` in ``folder``, and the command line that reads it."""
    data = str(seeds["data"])
    if kind.startswith("data."):
        suffix = kind.split(".")[1]
        seed = seeds["rows"]
        if suffix == "parquet":  # Arrow needs one type a column: the chunks as text
            seed = [
                {**r, "contexts": [f"Cats purr {i}.", "Dogs bark."]} for i, r in enumerate(seed)
            ]
        value = mutate(draw, seed)
        path = folder / f"input.{suffix}"
        if suffix == "jsonl":
            text = jsonl(value) if isinstance(value, list) else dumps(value)
            path.write_bytes(damage_bytes(draw, text))
        elif suffix == "json":
            path.write_bytes(damage_bytes(draw, dumps(value)))
        elif suffix == "csv":
            path.write_bytes(damage_bytes(draw, _as_csv(value)))
        else:
            if not _write_parquet(path, value):
                path.write_bytes(damage_bytes(draw, dumps(value)))  # not Parquet at all
        return path, ["eval", str(path), *JUDGE, "--dry-run", "--metric", "context_recall"]
    if kind == "traces":
        seed = draw(st.sampled_from(seeds["traces"]))
        value = mutate(draw, mutate(draw, seed))
        path = folder / "input-spans.json"
        text = (
            dumps(value)
            if draw(st.booleans())
            else jsonl(value if isinstance(value, list) else [value])
        )
        path.write_bytes(damage_bytes(draw, text))
        return path, ["eval", data, "--from-traces", str(path), *JUDGE, "--dry-run"]
    if kind == "claims":
        path = folder / "input-claims.jsonl"
        value = mutate(draw, seeds["claims"])
        path.write_bytes(
            damage_bytes(draw, jsonl(value) if isinstance(value, list) else dumps(value))
        )
        return path, ["eval", data, *JUDGE, "--claims", str(path), "--dry-run"]
    if kind == "labels":
        value = mutate(draw, seeds["labels"])
        if draw(st.booleans()):
            path = folder / "input-labels.csv"
            path.write_bytes(damage_bytes(draw, _as_csv(value)))
        else:
            path = folder / "input-labels.jsonl"
            text = jsonl(value) if isinstance(value, list) else dumps(value)
            path.write_bytes(damage_bytes(draw, text))
        return path, ["calibrate", str(path), "--out", str(folder / "c.json")]
    if kind == "profile":
        path = folder / "input-profile.json"
        path.write_bytes(damage_bytes(draw, dumps(mutate(draw, seeds["profile"]))))
        return path, ["eval", data, *JUDGE, "--calibration", str(path), "--dry-run"]
    path = folder / "input-results.jsonl"
    value = mutate(draw, seeds["results"])
    path.write_bytes(damage_bytes(draw, jsonl(value) if isinstance(value, list) else dumps(value)))
    if draw(st.booleans()):
        return path, ["review", str(path), "--out", str(folder / "review")]
    other = path.with_name("other.jsonl")
    other.write_text(jsonl(seeds["results"]))
    return path, ["compare", str(other), str(path)]


def _as_csv(value: Any) -> str:
    import csv

    items = value if isinstance(value, list) else [value]
    dicts = [v for v in items if isinstance(v, dict)]
    columns = list(dict.fromkeys(str(k) for d in dicts for k in d)) or ["x"]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(columns)
    for item in items:
        if isinstance(item, dict):
            writer.writerow([_cell(item.get(c)) for c in columns])
        else:
            writer.writerow([_cell(item)])
    return out.getvalue()


def _cell(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else dumps(value)


def _write_parquet(path: Path, value: Any) -> bool:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pa.Table.from_pylist([v for v in value if isinstance(v, dict)])
        pq.write_table(table, path)
    except Exception:  # a mix Arrow cannot type: written as something else
        return False
    return True


def run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit:  # argparse
            code = int(exit.code or 0)
    return code, out.getvalue() + err.getvalue()


def check(kind: str, path: Path, argv: list[str]) -> None:
    code, said = run(argv)
    SEEN[f"{kind}: exit {code}"] += 1
    assert code != 5, said
    assert "Traceback" not in said and "internal error" not in said, said
    if code == 2:
        flat = "".join(said.split())
        assert path.name in flat, said
        placed = PLACE.search(" ".join(said.split()))
        # the others refuse the file as a whole (not Parquet, no samples, no row has a column)
        SEEN[f"{kind}: refusals naming a place (line, row, field, span, run)"] += bool(placed)


def fuzz(kind: str, examples: int, seeds: dict[str, Any], folder: Path) -> None:
    counter = [0]

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,  # the same inputs every run: CI reproducible, a failure re-runnable
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def one(data: st.DataObject) -> None:
        counter[0] += 1
        place = folder / f"{kind}-{counter[0]}"
        place.mkdir()
        path, argv = build(data.draw, kind, seeds, place)
        check(kind, path, argv)

    one()
