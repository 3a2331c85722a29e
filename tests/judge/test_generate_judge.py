"""`ragrecall.generate` with the embedded judge: two items, each checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragrecall import generate


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_embedded_judge_generates_two_checked_items(tmp_path: Path, local_judge: Any) -> None:
    path = write_jsonl(
        tmp_path / "c.jsonl",
        [
            {"id": "eiffel", "text": "The Eiffel Tower in Paris was completed in 1889. It is "
             "330 metres tall and was designed by the company of Gustave Eiffel."},
            {"id": "colosseum", "text": "The Colosseum in Rome was finished in the year 80 "
             "under the emperor Titus. It could hold about 50,000 spectators."},
        ],
    )  # fmt: skip
    report = generate(path, 2, judge=local_judge, mix={"single": 1}, max_attempts=8)
    assert len(report.items) == 2, report.rejected
    for item in report.items:
        assert item["user_input"].endswith("?")
        assert item["reference_claims"]
        assert item["overlap"] <= 0.5  # of its word trigrams, in all the chunks it was given
