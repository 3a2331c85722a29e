"""Production traffic sampled by a hash of its query (or run id): the same queries every run,
the share stated."""

from __future__ import annotations

import pytest
from fakes import ScriptedJudge

from ragrecall import ClaimCache, ContextRecall, RecallLogger
from ragrecall.adapters import check_rate, sampled
from ragrecall.engines import Record
from ragrecall.sinks import CallableSink


def test_sampling_is_deterministic_and_keeps_about_its_share() -> None:
    keys = [f"query {i}" for i in range(10_000)]
    kept = [k for k in keys if sampled(k, 0.1)]
    assert kept == [k for k in keys if sampled(k, 0.1)]  # the same queries, every time
    assert 900 < len(kept) < 1100
    assert set(kept) <= {k for k in keys if sampled(k, 0.5)}  # a larger share keeps them
    assert all(sampled(k, 1.0) for k in keys[:100])
    assert not any(sampled(k, 0.0) for k in keys[:100])
    with pytest.raises(ValueError, match="sample_rate"):
        check_rate(1.5)


@pytest.mark.parametrize("key", ["query", "run_id"])
def test_logger_scores_the_sampled_share_and_says_so(key: str) -> None:
    seen: list[Record] = []
    metric = ContextRecall(ScriptedJudge(), claims="sentences", cache=ClaimCache())
    samples = [
        {"question": f"q{i}", "reference": f"Cats purr {i}.", "contexts": [f"Cats purr {i}."]}
        for i in range(200)
    ]
    with RecallLogger(
        [metric], [CallableSink(seen.append)], inline=True, sample_rate=0.25, sample_key=key
    ) as logger:
        for i, sample in enumerate(samples):
            logger.submit(sample, run_id=f"run-{i}")
    chosen = [i for i in range(200) if sampled(f"q{i}" if key == "query" else f"run-{i}", 0.25)]
    assert sorted(int(r.query[1:]) for r in seen if r.query) == chosen
    assert logger.stats.sampled_out == 200 - len(chosen)
    assert {r.extra["sample_rate"] for r in seen} == {0.25}
    assert logger.stats.scored_share == f"25% sampled: {len(chosen)} of 200 submitted"
