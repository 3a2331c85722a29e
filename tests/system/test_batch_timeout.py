"""Batch mode when the provider answers a create call after the client's timeout (it waits the
timeouts out: about 6 s)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from batch_samples import chat, metric, rows
from batchserver import BatchServer

from ragrecall import evaluate
from ragrecall.engines import BatchEngine


def test_a_create_call_that_timed_out_is_found_not_made_twice(tmp_path: Path) -> None:
    """The provider created the batch but answered after the client's timeout: the batch is
    found in the provider's list (by its intent's tag) instead of being created again."""
    data = rows(12)
    with BatchServer(create_delay=4.0) as server:
        report = evaluate(
            data,
            [metric],
            out=tmp_path / "out.jsonl",
            engine=BatchEngine(chat(server.url), poll_interval=0),
            timeout=1.5,
            show_progress=False,
        )
        assert len(server.batches) == 2  # one a round, none twice
        executed = Counter(a.key for a in server.log)
    assert max(executed.values()) == 1
    assert {r.status for r in report.results["context_recall"]} == {"scored"}
