"""The README's main job, `ragrecall demo`: the bundled example dataset scored on the embedded
judge, offline, every sample scored and every claim's verdict printed with its chunk."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from ragrecall.cli import main
from ragrecall.judges import LocalJudge


@pytest.mark.judge
def test_the_demo_scores_every_example_on_the_embedded_judge(
    local_judge: LocalJudge, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["demo"]) == 0  # 1 would mean an unscorable sample
    out = capsys.readouterr().out
    data = resources.files("ragrecall").joinpath("data/example.jsonl").read_text("utf-8")
    rows = [json.loads(line) for line in data.splitlines()]
    for row in rows:
        assert row["user_input"] in out
    assert out.count("[context_recall = ") == len(rows) and "unscorable" not in out
