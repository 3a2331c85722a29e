"""Issue 43, part 2: data files that used to be misread or refused without a place: an
unbalanced CSV quote, a lone surrogate escape in JSON. Each is named by file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragrecall import SampleError, load_samples
from ragrecall.cli import main

HEADER = b"question,reference,response\n"


def eval_error(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """``ragrecall eval PATH --dry-run``'s stderr; it must exit 2."""
    assert main(["eval", str(path), "--claim-mode", "sentences", "--dry-run"]) == 2
    return capsys.readouterr().err.replace("\n", " ")


@pytest.mark.parametrize(
    ("content", "line"),
    [
        (HEADER + b'"q1,Cats purr.,Cats purr.\nq2,Dogs bark.,Dogs bark.\n', 2),
        (HEADER + b'q1,"Cats purr.,Cats purr.\nq2,Dogs bark.,Dogs bark.\n', 2),
        (HEADER + b'q0,"a\nb",c\nq1,r,"c\n\nq2,r,c\n', 4),  # after a closed multi-line cell
        (b'"question,reference,contexts\nq1,Cats purr.,Cats purr.\n', 1),  # in the header
    ],
)
def test_an_unbalanced_csv_quote_is_named_by_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, line: int
) -> None:
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    err = eval_error(path, capsys)
    assert f"bad.csv:{line}: " in err and "quote" in err and "never closed" in err, err
    with pytest.raises(SampleError, match="never closed"):
        load_samples(path)


def test_balanced_csv_quotes_still_read(tmp_path: Path) -> None:
    path = tmp_path / "ok.csv"
    path.write_bytes(HEADER + b'q1,"Cats ""purr"",\nloudly",x"y\nq2,"r",c\n')
    samples = load_samples(path)
    assert [s.reference for s in samples] == ['Cats "purr",\nloudly', "r"]


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("s.jsonl", '{"reference": "ok"}\n{"reference": "Cats \\ud800 purr."}\n', ":2: "),
        ("s.jsonl", '{"reference": "Cats \\udc00"}\n', ":1: "),  # a low half alone
        ("s.jsonl", '{"reference": "\\ud800\\ud800\\udc00"}\n', ":1: "),  # a pair after one
        ("s.json", '[\n {"reference": "ok"},\n {"reference": "\\uD83D"}\n]', ":3: "),
    ],
)
def test_a_lone_surrogate_is_refused_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, where: str
) -> None:
    path = tmp_path / name
    path.write_text(text, "utf-8")
    err = eval_error(path, capsys)
    assert f"{name}{where}" in err and "surrogate" in err, err


def test_surrogate_pairs_and_escaped_backslashes_still_read(tmp_path: Path) -> None:
    path = tmp_path / "ok.jsonl"
    path.write_text('{"reference": "\\ud83d\\ude00 and \\\\ud800"}\n', "utf-8")
    assert [s.reference for s in load_samples(path)] == ["\U0001f600 and \\ud800"]
