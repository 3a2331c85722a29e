"""A data file that is one endless line (/dev/zero): refused at the bound, not read whole
(issue 32, item 6; it reads 256 MiB first)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragrecall.cli import main


def test_an_endless_line_is_refused_at_the_bound_not_read_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "zero.jsonl"
    data.symlink_to("/dev/zero")  # no newline, ever: 2.9 GB were read before the bound
    assert main(["eval", str(data), "--judge-factory", "fakes:ScriptedJudge"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "zero.jsonl:1:" in err and "a line longer than 256 MiB" in err
