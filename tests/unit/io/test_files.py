"""Reading dataset files: every read error names the file and the line (or the row); a
directory run says which entries it did not read. Through ``load_samples`` and ``ragrecall
eval`` (exit 2, the message on stderr)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ragrecall import SampleError, load_samples
from ragrecall.cli import main

ROW = {"user_input": "What do cats do?", "reference": "Cats purr.", "contexts": ["Cats purr."]}
LINE = json.dumps(ROW)
NOT_UTF8 = "Caf\u00e9".encode("latin-1")  # b"Caf\xe9": an é in Latin-1


def eval_error(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """``ragrecall eval PATH --dry-run``'s stderr; it must exit 2."""
    assert main(["eval", str(path), "--claim-mode", "sentences", "--dry-run"]) == 2
    return capsys.readouterr().err.replace("\n", " ")


@pytest.mark.parametrize(
    ("name", "content", "where", "what"),
    [
        (
            "bad.jsonl",
            f"{LINE}\n{LINE}\n".encode() + b'{"reference": "' + NOT_UTF8 + b'"}\n',
            ":3: ",
            "not UTF-8 (byte 0xe9",
        ),
        (
            "bad.csv",
            b"user_input,reference\nq,r\nq2,\n" + b"q3," + NOT_UTF8 + b"\n",
            ":4: ",
            "not UTF-8 (byte 0xe9",
        ),
        (
            "bad.json",
            b'[\n {"reference": "r"},\n {"reference": "' + NOT_UTF8 + b'"}\n]',
            ":3: ",
            "not UTF-8 (byte 0xe9",
        ),
        ("empty.json", b"", ":1: ", "empty file"),
        ("blank.json", b"  \n", ":1: ", "empty file"),
        ("bad.jsonl", f"{LINE}\n\n{LINE[:-1]}\n".encode(), ":3: ", "invalid JSON"),
        ("bad.json", b'[\n {"reference": "r"},\n {"reference": }\n]', ":3: ", "invalid JSON"),
        ("bad.csv", b"user_input,reference\nq,r\nq2,r2,extra\n", ":3: ", "3 cells but"),
        ("bad.csv", b"user_input,reference\nq,r\nq," + b"x" * 200_000, ":3: ", "field limit"),
        ("bad.jsonl", f"{LINE}\n[1, 2]\n".encode(), ":2: row 1: ", "expected a mapping"),
        ("bad.csv", b"user_input,retrieved_ids\nq,[a\n", ":2: row 0, field ", "not a list"),
        ("bad.json", b"[1]", ": row 0: ", "expected a mapping"),
        ("bad.parquet", b"not parquet", ": ", "unreadable Parquet"),
    ],
)
def test_a_read_error_names_the_file_and_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    content: bytes,
    where: str,
    what: str,
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(SampleError) as raised:
        load_samples(path)
    assert str(raised.value).startswith(f"{path}{where}"), raised.value
    assert what in str(raised.value)
    assert (raised.value.file, raised.value.line) == (str(path), raised.value.line)
    error = eval_error(path, capsys)
    assert f"{path}{where}" in error and what in error


def test_an_empty_jsonl_file_has_no_samples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    assert load_samples(path) == []
    assert f"{path}: no samples to score" in eval_error(path, capsys)


def test_a_bom_starts_a_jsonl_or_json_file_unharmed(tmp_path: Path) -> None:
    for name, text in [("a.jsonl", f"{LINE}\n{LINE}\n"), ("a.json", f"[{LINE}, {LINE}]")]:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8-sig")
        assert len(load_samples(path)) == 2


def test_a_bad_row_in_a_directory_is_named_by_its_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.jsonl").write_text(f"{LINE}\n{LINE}\n")
    (tmp_path / "b.csv").write_text("user_input,reference\nq,r\nq2,r2,extra\n")
    assert f"{tmp_path / 'b.csv'}:3: " in eval_error(tmp_path, capsys)
    (tmp_path / "b.csv").write_text("user_input,retrieved_ids\nq,[a\n")
    assert f"{tmp_path / 'b.csv'}:2: row 0, field 'retrieved_ids'" in eval_error(tmp_path, capsys)


def test_a_directory_run_names_what_it_did_not_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.jsonl").write_text(f"{LINE}\n")
    (tmp_path / "notes.txt").write_text("not data")
    (tmp_path / "README.md").write_text("# not data")
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "b.jsonl").write_text(f"{LINE}\n")
    note = f"{tmp_path}: not read (not a data file, or a folder): README.md, more/, notes.txt"
    args = ["eval", str(tmp_path), "--claim-mode", "sentences", "--dry-run"]
    assert main(args) == 0
    assert f"note: {note}" in capsys.readouterr().err.replace("\n", " ")
    with pytest.warns(UserWarning) as warned:
        assert len(load_samples(tmp_path)) == 1
    assert [str(w.message) for w in warned] == [note]
    (tmp_path / "a.jsonl").unlink()
    error = eval_error(tmp_path, capsys)
    assert "no .jsonl, .json, .csv, .parquet files" in error
    assert "README.md, more/, notes.txt" in error


def test_load_samples_reads_a_directory_as_eval_does(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(f"{LINE}\n{LINE}\n")
    (tmp_path / "b.csv").write_text("user_input,reference\nq,r\n")
    samples = load_samples(tmp_path)
    assert [s.user_input for s in samples] == ["What do cats do?"] * 2 + ["q"]
    (tmp_path / "c.json").write_text("[1]")
    with pytest.raises(SampleError, match=r"c\.json: row 0: expected a mapping"):
        load_samples(tmp_path)


def test_a_missing_path_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "missing.jsonl"
    with pytest.raises(FileNotFoundError, match=r"missing\.jsonl"):
        load_samples(path)
    assert f"no such file or directory: '{path}'" in eval_error(path, capsys)


def test_a_directory_of_data_files_only_has_no_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.jsonl").write_text(f"{LINE}\n")
    assert main(["eval", str(tmp_path), "--claim-mode", "sentences", "--dry-run"]) == 0
    assert "not read" not in capsys.readouterr().err


def test_parquet_without_pyarrow_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "data.parquet"
    path.write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # as if pyarrow were absent
    assert main(["eval", str(path), "--judge-factory", "fakes:ScriptedJudge"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{path}: reading Parquet needs pyarrow: pip install 'ragrecall[parquet]'" in err
