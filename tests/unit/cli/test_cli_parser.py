"""The command line's parser: ``ragrecall --help`` lists every command with the one-line help
its own parser gives (the top level keeps a table of them, to build only the named command's
parser); ``--metric`` names are checked when ``eval`` runs, so that a metric registered by then
is taken; counts and durations that make no sense are usage errors (exit 2) before any import.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from ragrecall import Metric, RecallResult, Sample, Usage
from ragrecall.cli import main
from ragrecall.engines import metric_classes

COMMANDS = ("eval", "claims", "generate", "compare", "review", "calibrate", "demo", "judge")


def output(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """The exit code, stdout and stderr of ``ragrecall ARGV``."""
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # argparse and rich wrap at the terminal width


def test_the_listing_of_commands_is_each_commands_own_help(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--help`` before a command builds that command's parser, whose one-line help then
    stands in the listing: the same page as the table's, for every command."""
    code, listing, _ = output(["--help"], capsys)
    assert code == 0
    assert all(name in listing for name in COMMANDS)
    for name in COMMANDS:
        assert output(["--help", name], capsys) == (0, listing, ""), name


def test_eval_help_lists_the_built_in_metrics(capsys: pytest.CaptureFixture[str]) -> None:
    code, text, _ = output(["eval", "--help"], capsys)
    assert code == 0
    names = [cls.name for cls in metric_classes()]
    assert ", ".join(names) in " ".join(text.split())


def test_an_unknown_metric_is_refused_when_eval_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"question": "q", "reference": "r", "contexts": ["c"]}) + "\n")
    code, _, err = output(["eval", str(data), "--metric", "no_such_metric"], capsys)
    assert code == 2
    assert "unknown metric 'no_such_metric'" in err
    assert "context_recall" in err  # the choices are named


class HasContexts(Metric[RecallResult]):
    """A metric defined outside ragrecall: 1.0 when the sample has retrieved contexts."""

    name = "cli_test_has_contexts"
    result_type = RecallResult
    uses_judge = False

    def _steps(self, sample: Sample, usage: Usage) -> Generator[Any, Any, RecallResult]:
        score = 1.0 if sample.retrieved_contexts else 0.0
        return RecallResult(metric=self.name, score=score, status="scored")
        yield  # a generator that asks the judge nothing


def test_a_metric_registered_at_run_time_is_taken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data.jsonl"
    rows = [{"question": f"q{i}", "reference": f"r{i}", "contexts": ["c"]} for i in range(3)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "results.jsonl"
    argv = ["eval", str(data), "--metric", HasContexts.name, "--out", str(out)]
    code, _, err = output(argv, capsys)
    assert code == 0, err
    scores = [json.loads(line)["results"][HasContexts.name]["score"] for line in out.open()]
    assert scores == [1.0, 1.0, 1.0]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["eval", "data.jsonl", "--max-calls", "-5"], "argument --max-calls: must be 0 or more"),
        (["eval", "data.jsonl", "--max-tokens", "x"], "argument --max-tokens: expected a whole"),
        (["eval", "data.jsonl", "--timeout", "0"], "argument --timeout: must be a number"),
        (["eval", "data.jsonl", "--timeout", "nan"], "argument --timeout: must be a number"),
        (["generate", "docs", "--n", "1", "--out", "o", "--max-calls", "-1"], "--max-calls"),
    ],
)
def test_a_budget_or_timeout_that_makes_no_sense_is_a_usage_error(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = output(argv, capsys)
    assert code == 2
    assert message in err
