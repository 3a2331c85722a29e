"""Issue 43, part 2: the exit code and message of each way a command cannot go on (a judge
that answers no call, outputs that cannot be written, links and pipes where files belong)."""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from fakes import ScriptedJudge, keyword_reply
from langchain_core.messages import BaseMessage

from ragrecall.cli import main

KEYWORD = ["--judge-factory", "fakes:ScriptedJudge", "--claim-mode", "sentences"]


def data(tmp_path: Path, n: int = 3) -> Path:
    path = tmp_path / "d.jsonl"
    rows = [
        {"question": f"q{i}", "reference": f"Cats purr {i}. Dogs bark.", "contexts": ["Cats purr."]}
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture
def failing(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A module ``cli43_judges``: ``down`` fails every call, ``flaky`` every other sample."""
    module = types.ModuleType("cli43_judges")

    def down(messages: Sequence[BaseMessage]) -> Any:
        raise RuntimeError("connection refused")

    def flaky(messages: Sequence[BaseMessage]) -> Any:
        if "purr 1" in str(messages[-1].content):
            raise RuntimeError("connection refused")
        return keyword_reply(messages)

    module.down = lambda: ScriptedJudge(reply=down)  # type: ignore[attr-defined]
    module.flaky = lambda: ScriptedJudge(reply=flaky)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cli43_judges", module)
    yield "cli43_judges"


def test_a_judge_that_fails_every_call_exits_4_not_as_a_failed_gate(
    tmp_path: Path, failing: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["eval", str(data(tmp_path)), "--claim-mode", "sentences", "--no-progress"]
    assert main([*argv, "--judge-factory", f"{failing}:down"]) == 4
    err = capsys.readouterr().err
    assert "every judge call failed" in err and "connection refused" in err
    assert main([*argv, "--judge-factory", f"{failing}:flaky"]) == 1  # some failed: a gate
    assert "unscorable exceeds --max-unscorable" in capsys.readouterr().out


def test_compare_prints_its_errors_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.jsonl"
    assert main(["compare", str(missing), str(tmp_path / "other.jsonl")]) == 2
    captured = capsys.readouterr()
    assert "error:" in captured.err and "missing.jsonl" in captured.err
    assert "error" not in captured.out


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_claims_on_a_full_disk_exits_6_as_eval_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["claims", str(data(tmp_path)), *KEYWORD, "--out", "/dev/full"]
    assert main(argv) == 6
    err = capsys.readouterr().err
    assert "/dev/full could not be written (No space left on device)" in err
    assert "Errno" not in err


def test_claims_refuses_data_with_no_reference_as_eval_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "noref.jsonl"
    path.write_text(json.dumps({"question": "q", "contexts": ["Cats purr."]}) + "\n")
    assert main(["eval", str(path), *KEYWORD]) == 2
    refused = capsys.readouterr().err
    assert "no row has reference" in refused
    assert main(["claims", str(path), *KEYWORD, "--out", str(tmp_path / "c.jsonl")]) == 2
    assert capsys.readouterr().err == refused
    assert not (tmp_path / "c.jsonl").exists()


def test_a_link_planted_at_the_results_lock_is_a_usage_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "X.jsonl"
    lock = tmp_path / "X.jsonl.lock"
    lock.symlink_to(tmp_path / "elsewhere.txt")
    assert main(["eval", str(data(tmp_path)), *KEYWORD, "--out", str(out)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{lock}" in err and "internal error" not in err, err
    assert not (tmp_path / "elsewhere.txt").exists()


@pytest.mark.parametrize("flag", ["--out", "--report", "--summary-json"])
def test_an_output_that_is_a_link_is_refused_not_written_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    target = tmp_path / "target.txt"
    target.write_text("keep me")
    link = tmp_path / "link.out"
    link.symlink_to(target)
    assert main(["eval", str(data(tmp_path)), *KEYWORD, flag, str(link)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{flag} {link}" in err and "symbolic link" in err, err
    assert target.read_text() == "keep me"


def test_claims_and_compare_refuse_a_link_as_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "target.txt"
    target.write_text("keep me")
    link = tmp_path / "link.out"
    link.symlink_to(target)
    assert main(["claims", str(data(tmp_path)), *KEYWORD, "--out", str(link)]) == 2
    assert "symbolic link" in capsys.readouterr().err
    run = tmp_path / "r.jsonl"
    assert main(["eval", str(data(tmp_path)), *KEYWORD, "--out", str(run)]) == 0
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(run.read_bytes())
    assert main(["compare", str(run), str(copy), "--report", str(link)]) == 2
    assert "symbolic link" in capsys.readouterr().err
    assert target.read_text() == "keep me"


def test_an_interrupt_that_python_wrapped_in_another_error_still_exits_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C while a module builds a class: Python 3.11 wraps the interrupt, raised in a
    ``__set_name__``, in a RuntimeError ("Error calling __set_name__ ..."), which a run under
    load once reported as an internal error, exit 5."""

    class Named:
        def __set_name__(self, owner: type, name: str) -> None:
            raise KeyboardInterrupt

    def importing() -> ScriptedJudge:
        type("Built", (), {"field": Named()})
        return ScriptedJudge()

    module = types.ModuleType("cli43_interrupted")
    module.importing = importing  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cli43_interrupted", module)
    argv = ["eval", str(data(tmp_path)), "--claim-mode", "sentences", "--no-progress"]
    assert main([*argv, "--judge-factory", "cli43_interrupted:importing"]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "internal error" not in err
