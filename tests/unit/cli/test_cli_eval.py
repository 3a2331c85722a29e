"""`ragrecall eval`: exit codes, resume, budgets, dry-run estimates, repeats, inputs.

The judge is a fake chosen with ``--judge-factory MODULE:CALLABLE``: ``fakes:ScriptedJudge``
(the keyword judge of ragrecall.testing), or factories of a module this file puts in sys.modules.
"""

from __future__ import annotations

import csv
import json
import random
import re
import sys
import types
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from fakes import ScriptedJudge, keyword_reply
from faultserver import FaultServer
from langchain_core.messages import BaseMessage

import ragrecall
from ragrecall import (
    ClaimCache,
    ContextRecall,
    RecallResult,
    Sample,
    Sufficiency,
    SufficiencyResult,
    evaluate,
)
from ragrecall.cli import main
from ragrecall.engines import Record, read_records
from ragrecall.prompts import STANDALONE_PROMPT

KEYWORD: list[str | Path] = ["--judge-factory", "fakes:ScriptedJudge"]


def rows(n: int, nonce: str | None = None) -> list[dict[str, Any]]:
    """Sample i: 3 claims; chunks support "Cats purr" always, "Dogs bark" unless i % 3 == 0."""
    tag = nonce or uuid.uuid4().hex[:8]
    out = []
    for i in range(n):
        chunks = [f"Cats purr {tag} {i} loudly."]
        if i % 3:
            chunks.append(f"Dogs bark {tag} {i} at night.")
        out.append(
            {
                "question": f"What do animals do ({i})?",
                "ground_truth": f"Cats purr {tag} {i}. Dogs bark {tag} {i}. Birds sing {tag} {i}.",
                "contexts": chunks,
                "answer": f"Cats purr {tag} {i}.",
            }
        )
    return out


def write_jsonl(path: Path, data: Sequence[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in data))
    return path


def run(*argv: str | Path) -> int:
    return main(["eval", *map(str, argv)])


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps tables at the terminal width


@pytest.fixture
def judges(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A module ``cli_test_judges`` with a noisy judge (seeded coin flips for claims)."""
    module = types.ModuleType("cli_test_judges")
    rng = random.Random(0)

    def noisy_reply(messages: Sequence[BaseMessage]) -> Any:
        reply = keyword_reply(messages)
        if "verdicts" in reply:
            for v in reply["verdicts"]:
                if rng.random() < 0.5:
                    v.update(supported=False, passage=0, quote="")
        return reply

    module.noisy = lambda: ScriptedJudge(reply=noisy_reply)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cli_test_judges", module)
    yield "cli_test_judges"


def test_a_column_map_renames_the_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nonce = uuid.uuid4().hex[:8]
    data = write_jsonl(tmp_path / "d.jsonl", rows(3, nonce))
    mine = [
        {"q": r["question"], "gold": r["ground_truth"], "ctx": r["contexts"]}
        for r in rows(3, nonce)
    ]
    renamed = write_jsonl(tmp_path / "renamed.jsonl", mine)
    assert run(data, *KEYWORD, "--dry-run") == 0  # no map: the columns as they are
    plain = capsys.readouterr().out
    for given in (
        "q=user_input,gold=reference, ctx = retrieved_contexts",
        '{"q": "user_input", "gold": "reference", "ctx": "retrieved_contexts"}',
    ):
        assert run(renamed, *KEYWORD, "--dry-run", "--column-map", given) == 0
        assert capsys.readouterr().out == plain
    assert run(renamed, *KEYWORD, "--dry-run", "--column-map", "gold") == 2
    assert "column=field" in capsys.readouterr().err


def test_passes_saves_every_sample_and_resumes_without_judging_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", rows(6))
    out = tmp_path / "r.jsonl"
    assert run(data, *KEYWORD, "--claim-mode", "sentences", "--out", out, "--min-score", "0.5") == 0
    records = read_records(out)
    assert sorted(r.index for r in records) == list(range(6))
    assert [r.score("context_recall") for r in sorted(records, key=lambda r: r.index)] == [
        pytest.approx(x) for x in [1 / 3, 2 / 3, 2 / 3] * 2
    ]
    assert "PASS" in capsys.readouterr().out
    assert run(data, *KEYWORD, "--claim-mode", "sentences", "--out", out) == 0
    captured = capsys.readouterr()
    assert "resuming: 6 samples already" in captured.err
    assert "judge calls 0" in captured.out
    assert "6 of 6 samples" in captured.out and "0.556" in captured.out  # read back from --out
    assert len(out.read_text().splitlines()) == 6


def test_the_summary_keeps_only_the_lowest_records_unscorable_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def record(i: int, score: float | None) -> Record:
        result = RecallResult(
            metric="context_recall",
            score=score,
            status="scored" if score is not None else "unscorable",
            reason="" if score is not None else "judge failed",
        )
        sample = Sample(user_input=f"q{i}", reference=f"r{i}.", retrieved_contexts=["c"])
        return Record(sample.key(), i, sample, {"context_recall": result})

    scores = [0.5, 1.0, None, 0.2, 0.5, 0.9, 0.2]
    records = [record(i, score) for i, score in enumerate(scores)]
    out, summary = tmp_path / "r.jsonl", tmp_path / "summary.json"
    out.write_text("".join(r.to_json() + "\n" for r in records), encoding="utf-8")
    data = write_jsonl(
        tmp_path / "d.jsonl", [r.sample.model_dump(mode="json", exclude_none=True) for r in records]
    )
    args: list[str | Path] = ["--out", out, "--summary-json", summary, "--show-worst", "4"]
    assert run(data, *KEYWORD, *args, "--max-unscorable", "1") == 0  # read back: no judge call
    printed = capsys.readouterr().out
    assert "judge calls 0" in printed
    assert re.findall(r"#(\d+) q\1\b", printed.split("lowest context_recall", 1)[1]) == [
        "2",
        "3",
        "6",
        "0",
    ]
    written = json.loads(summary.read_text())
    assert written["samples"] == 7
    metric = written["metrics"]["context_recall"]
    assert (metric["scored"] + metric["unscorable"], metric["unscorable"], metric["scored"]) == (
        7,
        1,
        6,
    )
    assert metric["mean"] == pytest.approx(sum(s for s in scores if s is not None) / 6)


def test_exit_1_below_min_score_prints_the_lowest_samples_with_missing_claims(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", rows(3, "t1"))
    assert run(data, *KEYWORD, "--claim-mode", "sentences", "--min-score", "0.9") == 1
    out = capsys.readouterr().out
    assert "FAIL context_recall mean 0.556 is below --min-score 0.9" in out
    assert "missing Birds sing t1 0." in out and "the judge found no support" in out


def test_fail_under_and_threshold_are_deprecated_aliases_of_min_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", rows(3, "t1"))
    assert run(data, *KEYWORD, "--claim-mode", "sentences", "--threshold", "0.9") == 1
    captured = capsys.readouterr()
    assert "--threshold is deprecated; use --min-score" in captured.err
    assert "is below --min-score 0.9" in captured.out
    assert run(data, *KEYWORD, "--claim-mode", "sentences", "--fail-under", "0.9") == 1
    assert "--fail-under is deprecated; use --min-score" in capsys.readouterr().err


def test_a_flag_the_engine_does_not_take_is_refused_naming_the_engine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", rows(2))
    for flags, engine in (
        (["--rpm", "60"], "local"),
        (["--workers", "2"], "local"),
        (["--poll", "1"], "local"),
        (["--engine", "batch", "--concurrency", "4"], "batch"),
        (["--engine", "batch", "--address", "x"], "batch"),
    ):
        assert run(data, *KEYWORD, *flags) == 2
        err = capsys.readouterr().err
        assert f"{flags[-2]} is not taken by the {engine} engine" in err, err
    assert run(data, *KEYWORD, "--concurrency", "0") == 2
    assert "--concurrency must be at least 1" in capsys.readouterr().err


def test_exit_1_when_too_many_samples_are_unscorable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", [*rows(3), {"question": "q", "ground_truth": ""}])
    assert run(data, *KEYWORD, "--claim-mode", "sentences") == 1
    out = capsys.readouterr().out
    assert "25.0% unscorable exceeds --max-unscorable 5.0%" in out
    assert "reference is empty" in out
    assert run(data, *KEYWORD, "--claim-mode", "sentences", "--max-unscorable", "0.3") == 0


@pytest.mark.parametrize(
    ("extra", "rows_", "message"),
    [
        ((), [{"question": "q", "contexts": "one string"}], "row 0, field 'contexts'"),
        (("--column-map", "gold"), rows(1), "column=field"),
        (("--column-map", "gold=reference"), rows(1), "column_map names missing columns"),
        (("--repeats", "0"), rows(1), "--repeats must be at least 1"),
        (("--judge-factory", "no_such_module:x"), rows(1), "No module named"),
    ],
)
def test_exit_2_on_bad_data_or_options(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: tuple[str, ...],
    rows_: list[dict[str, Any]],
    message: str,
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", rows_)
    factory = () if "--judge-factory" in extra else KEYWORD
    assert run(data, *factory, *extra) == 2
    assert message in capsys.readouterr().err.replace("\n", " ")


def test_exit_2_names_the_file_of_a_bad_row_in_a_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_jsonl(tmp_path / "a.jsonl", rows(2))
    write_jsonl(tmp_path / "b.jsonl", [{"question": "q", "contexts": "one string"}])
    assert run(tmp_path, *KEYWORD) == 2
    assert "b.jsonl:1: row 0, field 'contexts'" in capsys.readouterr().err.replace("\n", " ")
    assert run(tmp_path / "nothing.jsonl", *KEYWORD) == 2


def test_a_directory_of_jsonl_and_csv_with_limit_and_column_map(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    first, second = rows(2), rows(2)
    write_jsonl(
        data / "a.jsonl",
        [{"gold" if k == "ground_truth" else k: v for k, v in r.items()} for r in first],
    )
    with (data / "b.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, ["question", "gold", "contexts"])
        writer.writeheader()
        for r in second:
            writer.writerow(
                {
                    "question": r["question"],
                    "gold": r["ground_truth"],
                    "contexts": json.dumps(r["contexts"]),
                }
            )
    out = tmp_path / "r.jsonl"
    args: list[str | Path] = [
        data,
        *KEYWORD,
        "--claim-mode",
        "sentences",
        "--column-map",
        "gold=reference",
    ]
    assert run(*args, "--out", out, "--limit", "3", "--max-unscorable", "1") == 0
    records = read_records(out)
    assert sorted(r.index for r in records) == [0, 1, 2]
    assert all(r.results["context_recall"].status == "scored" for r in records)


def test_budget_stops_submitting_keeps_what_finished_and_resume_completes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", rows(8))
    out = tmp_path / "r.jsonl"
    common = [data, *KEYWORD, "--claim-mode", "sentences", "--out", out, "--concurrency", "1"]
    assert run(*common, "--max-calls", "3") == 3
    assert "stopped at the budget" in capsys.readouterr().out
    assert len(read_records(out)) == 3  # one batched call per sample, nothing in flight
    assert run(*common) == 0
    keys = [r.key for r in read_records(out)]
    assert len(keys) == 8 == len(set(keys))


def test_a_budget_holds_at_the_default_concurrency(tmp_path: Path) -> None:
    """Each sample's estimated calls are reserved before it starts: with exact estimates
    (sentences, batched: one call a sample) not one call goes past --max-calls."""
    data = write_jsonl(tmp_path / "d.jsonl", rows(30))
    out = tmp_path / "r.jsonl"
    assert run(data, *KEYWORD, "--claim-mode", "sentences", "--out", out, "--max-calls", "10") == 3
    assert calls_in(out) == 10 == len(read_records(out))


def test_a_budget_counts_retries_and_says_how_far_it_went_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every sample's first request is rate-limited: each spends two calls where one was
    estimated, so the run goes over by at most one call per sample in flight, and says so."""
    data = [{**r, "contexts": [c + " fault=rate_limit" for c in r["contexts"]]} for r in rows(20)]
    out = tmp_path / "r.jsonl"
    with FaultServer(retry_after=0.05, lifetime=60) as server:
        code = run(
            write_jsonl(tmp_path / "d.jsonl", data),
            "--judge-url",
            server.url,
            "--claim-mode",
            "sentences",
            "--strategy",
            "batched",
            "--out",
            out,
            "--max-calls",
            "10",
            "--concurrency",
            "4",
        )
        requests = len(server.log)
    assert code == 3
    assert calls_in(out) == requests  # every attempt counted, retries included
    assert 10 < requests <= 10 + 4
    text = capsys.readouterr().out.replace("\n", " ")
    assert f"{requests - 10} calls over: samples in flight spent more than estimated" in text
    assert f"({requests // 2} retries)" in text


def test_repeated_rows_are_separate_samples_and_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", rows(2, "dup") * 2 + rows(1, "one"))
    out = tmp_path / "r.jsonl"
    assert run(data, *KEYWORD, "--claim-mode", "sentences", "--out", out) == 0
    captured = capsys.readouterr()
    assert "2 rows repeat the question and reference of an earlier row (first: rows 0, 2)" in (
        captured.err
    )
    assert "3 of 5 samples" not in captured.out and "5 of 5 samples" in captured.out
    records = read_records(out)
    assert sorted((r.index, r.occurrence) for r in records) == [
        (0, 1),
        (1, 1),
        (2, 2),
        (3, 2),
        (4, 1),
    ]
    assert (
        len(
            evaluate(
                str(data), [ContextRecall(ScriptedJudge(reply=keyword_reply), claims="sentences")]
            ).samples
        )
        == 5
    )


def test_rows_with_one_sample_id_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", [{**r, "qid": "same"} for r in rows(2, "ids")])
    assert run(data, *KEYWORD, "--id-column", "qid") == 2
    assert "1 sample ids appear on more than one row (first: 'same' on rows 0, 1)" in (
        capsys.readouterr().err
    )


def calls_in(out: Path) -> int:
    return sum(r.usage.calls for rec in read_records(out) for r in rec.results.values())


def dry_run_calls(text: str) -> tuple[str, int]:
    found = re.search(r"judge calls\s*│\s*(~?)(\d+)", text)
    assert found, text
    return found.group(1), int(found.group(2))


@pytest.mark.parametrize(
    ("claims", "strategy", "metrics", "exact"),
    [
        ("sentences", "batched", ["context_recall"], True),
        ("sentences", "per_claim", ["context_recall"], True),
        ("sentences", "per_claim", ["context_recall", "response_recall"], True),
        ("atomic", "batched", ["context_recall", "response_recall"], False),
        ("atomic", "per_claim", ["context_recall"], False),
    ],
)
def test_dry_run_estimate_matches_the_real_call_count(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    claims: str,
    strategy: str,
    metrics: list[str],
    exact: bool,
) -> None:
    nonce = uuid.uuid4().hex[:8]
    data = [*rows(7, nonce), {"question": "q", "ground_truth": f"None {nonce}.", "contexts": []}]
    path = write_jsonl(tmp_path / "d.jsonl", data)
    args: list[str | Path] = [
        path,
        *KEYWORD,
        "--claim-mode",
        claims,
        "--strategy",
        strategy,
        "--max-unscorable",
        "1",
    ]
    for m in metrics:
        args += ["--metric", m]
    assert run(*args, "--dry-run") == 0
    text = capsys.readouterr().out
    qualifier, estimate = dry_run_calls(text)
    assert (qualifier == "") == exact
    assert ("an estimate" in text) == (not exact)
    out = tmp_path / "r.jsonl"
    assert run(*args, "--out", out) == 0
    # The keyword judge splits like the sentence splitter, so even atomic estimates are exact.
    assert estimate == calls_in(out)


def dry_run_row(text: str, name: str) -> str:
    found = re.search(rf"{name}\s*│\s*(.*?)\s*│", text)
    assert found, text
    return found.group(1)


def test_dry_run_counts_the_call_that_makes_a_conversations_question_stand_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In a conversation Sufficiency first has the judge make the question stand alone (one
    call, the conversation in its prompt): the estimate counts it as the judge receives it."""
    turn = {"question": "Where is the Eiffel Tower?", "answer": "In Paris.", "contexts": ["Paris"]}
    row = {
        "user_input": "When was it completed?",
        "contexts": ["The Eiffel Tower was completed in 1889."],
    }
    talk = {**row, "history": [turn]}
    estimated = {}
    for name, data in (("alone", row), ("talk", talk)):
        path = write_jsonl(tmp_path / f"{name}.jsonl", [data])
        assert run(path, *KEYWORD, "--metric", "sufficiency", "--dry-run") == 0
        text = capsys.readouterr().out
        tokens = int(dry_run_row(text, "prompt tokens").lstrip("~"))
        estimated[name] = (dry_run_calls(text)[1], tokens)
    judge = ScriptedJudge()
    result = Sufficiency(judge, cache=ClaimCache()).score(talk)
    assert isinstance(result, SufficiencyResult) and result.standalone_question
    assert estimated["talk"][0] == len(judge.calls) == estimated["alone"][0] + 1 == 3
    shown = "Turn 1\nUser: Where is the Eiffel Tower?\nAssistant: In Paris."
    asked = STANDALONE_PROMPT.format_messages(history=shown, question=row["user_input"])
    standalone = sum(len(str(m.content)) for m in asked) // 4  # tokens, at least
    assert estimated["talk"][1] - estimated["alone"][1] >= standalone


def test_dry_run_prices_known_models_and_given_prices(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", rows(2))
    args = ["--claim-mode", "sentences", "--price-in", "1000", "--price-out", "2000"]
    assert run(data, *KEYWORD, "--dry-run", *args) == 0
    text = capsys.readouterr().out
    assert dry_run_calls(text) == ("", 2) and "calls are exact" in text
    prompt = int(dry_run_row(text, "prompt tokens").lstrip("~"))
    completion = int(dry_run_row(text, "completion tokens").lstrip("~"))
    assert prompt > 0
    price = (prompt * 1000 + completion * 2000) / 1e6  # 3 decimals: shown whole at 4
    assert dry_run_row(text, r"price \(USD\)") == f"~{price:.4f} at 1000.0/2000.0 per M tokens"
    assert run(data, "--judge", "openai:gpt-4o-mini", "--dry-run") == 0
    assert "at 0.15/0.6 per M tokens" in capsys.readouterr().out
    assert run(data, *KEYWORD, "--dry-run", "--price-in", "3", "--price-out", "15") == 0
    assert "at 3.0/15.0 per M tokens" in capsys.readouterr().out


def test_dry_run_counts_one_reply_token_per_claim_in_token_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The embedded judge (the default, not started by a dry run) decides by the verdict
    token; a judge of the JSON verdict writes 15 reply tokens a claim."""
    data = write_jsonl(tmp_path / "d.jsonl", rows(2))
    args = ["--dry-run", "--claim-mode", "sentences", "--strategy", "per_claim"]
    estimates = {}
    for verdict, judge in (("json", KEYWORD), ("token", [])):
        assert run(data, *judge, *args) == 0
        text = capsys.readouterr().out
        assert (
            dry_run_row(text, "strategy / evidence / verdict") == f"per_claim / align / {verdict}"
        )
        estimates[verdict] = (
            dry_run_calls(text),
            int(dry_run_row(text, "prompt tokens").lstrip("~")),
            int(dry_run_row(text, "completion tokens").lstrip("~")),
        )
    ((_, claims), json_prompt, json_completion) = estimates["json"]
    ((_, token_calls), token_prompt, token_completion) = estimates["token"]
    assert claims == token_calls > 0
    assert (json_completion, token_completion) == (15 * claims, claims)
    assert token_prompt > json_prompt  # the reply's given start


def test_repeats_record_every_run_and_report_the_spread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], judges: str
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", rows(6))
    out = tmp_path / "r.jsonl"
    args: list[str | Path] = [
        data,
        "--judge-factory",
        f"{judges}:noisy",
        "--claim-mode",
        "sentences",
        "--out",
        out,
    ]
    assert run(*args, "--repeats", "4") == 0
    text = capsys.readouterr().out
    assert "noisiest samples across repeats" in text and "judge noise" in text
    records = read_records(out)
    assert all(len(r.results["context_recall"].runs) == 4 for r in records)
    assert any(len(set(r.results["context_recall"].runs)) > 1 for r in records)
    for r in records:
        runs = r.results["context_recall"].runs
        assert r.score("context_recall") == pytest.approx(sum(runs) / 4)  # type: ignore[arg-type]
        assert r.results["context_recall"].usage.calls == 4
    assert run(*args) == 2  # resuming with other repeats is refused


def test_html_report_and_progress_bar(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", rows(3))
    report = tmp_path / "report.html"
    assert run(data, *KEYWORD, "--claim-mode", "sentences", "--report", report, "--progress") == 0
    assert "scoring" in capsys.readouterr().err
    html = report.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html and "<mark>" in html
    # With --out the report reads the records back from the file: the same report.
    out, again = tmp_path / "r.jsonl", tmp_path / "again.html"
    assert run(data, *KEYWORD, "--claim-mode", "sentences", "--out", out, "--report", again) == 0
    assert again.read_text().count('href="#s-') == html.count('href="#s-') == 3


def test_a_misspelt_column_is_named_and_an_empty_input_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows_ = [{"user_input": "q", "reference": "Cats purr.", "retrieved_context": ["Cats purr."]}]
    data = write_jsonl(tmp_path / "d.jsonl", rows_)
    run(data, *KEYWORD, "--claim-mode", "sentences")
    err = capsys.readouterr().err
    assert "columns not read: retrieved_context (did you mean retrieved_contexts?)" in err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert run(empty, *KEYWORD) == 2
    assert "no samples to score" in capsys.readouterr().err


def test_any_openai_compatible_server_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--judge-url: a local server is local (per-claim strategy) however it is named; a missing
    key is one line and exit 2."""
    data = write_jsonl(tmp_path / "d.jsonl", rows(1, "url"))
    args = [data, "--judge-url", "http://127.0.0.1:9/v1", "--judge", "qwen", "--dry-run"]
    assert run(*args) == 0
    assert "per_claim / align / json" in capsys.readouterr().out
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert run(data, "--judge", "openai:qwen", "--dry-run") == 0
    assert "per_claim / align / json" in capsys.readouterr().out  # as with OPENAI_API_BASE
    monkeypatch.delenv("OPENAI_API_KEY")
    assert run(data, "--judge", "openai:gpt-4o-mini", "--claim-mode", "sentences") == 2
    err = capsys.readouterr().err
    assert "judge 'openai:gpt-4o-mini'" in err and "Traceback" not in err
    assert run(*args[:-1], "--judge-key-env", "NO_SUCH_KEY") == 2
    assert "$NO_SUCH_KEY is not set" in capsys.readouterr().err


def test_version_and_help_read_as_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"ragrecall {ragrecall.__version__}"
    for argv in (["--help"], ["eval", "--help"], ["claims", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        assert "``" not in capsys.readouterr().out


def test_control_characters_in_the_data_never_reach_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Escape sequences (clear screen, window title, OSC-8 link), carriage returns and bidi
    overrides in questions, claims and file names are stripped from everything printed."""
    hostile = "\x1b[2J\x1b]0;owned\x07\x1b]8;;http://x.test\x1b\\link\x1b]8;;\x1b\\\r\u202e"
    data = [
        {
            "question": f"What do cats do{hostile}?",
            "reference": f"Cats purr{hostile}. Dogs bark.",
            "contexts": ["Cats purr."],
        }
    ]
    path = write_jsonl(tmp_path / f"d{hostile[:4]}.jsonl", data)
    assert run(path, *KEYWORD, "--claim-mode", "sentences", "--report", tmp_path / "r.html") == 0
    bad = write_jsonl(tmp_path / f"bad{hostile[:4]}.jsonl", [{"question": "q", "contexts": 5}])
    assert run(bad, *KEYWORD) == 2
    captured = capsys.readouterr()
    for text in (captured.out, captured.err):
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]", text), repr(text)
    assert "What do cats do[2J]0;owned]8;;http://x.test\\link]8;;\\?" in captured.out
