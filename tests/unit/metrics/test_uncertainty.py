"""The judge's uncertainty in every score: claims near the decision are marked, a sample's
recall carries an interval from its claims' P(supported), and a run's mean an interval that
adds the judge's uncertainty to the spread between samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import LogprobJudge, ScriptedJudge

from ragrecall import ClaimCache, ContextRecall
from ragrecall.cli import main
from ragrecall.stats import CLAIM_CORRELATION, share_interval


def test_share_interval_is_the_poisson_binomial_one() -> None:
    assert share_interval([1.0, 1.0, 0.0, 0.0]) == (0.5, 0.5)  # certain claims: no width
    assert share_interval([0.5] * 10) == (0.2, 0.8)  # Binomial(10, 0.5): 5% tails at 2 and 8
    assert share_interval([0.5] * 10, level=0.5) == (0.4, 0.6)
    with pytest.raises(ValueError, match="at least one"):
        share_interval([])


def recall() -> ContextRecall:
    return ContextRecall(
        LogprobJudge(), claims="sentences", strategy="per_claim", cache=ClaimCache()
    )


SAMPLE = {
    "user_input": "What do cats do?",
    "reference": "Cats purr 3. Cats purr 8.",
    "retrieved_contexts": ["Cats purr 3 and cats purr 8 at night."],
}


def test_a_claim_near_the_decision_is_marked_and_the_recall_has_an_interval() -> None:
    result = recall().score(SAMPLE)
    near, far = result.verdicts  # P(supported) 0.35 and 0.85, every word in the chunk
    assert near.uncertain and not far.uncertain
    assert result.interval is not None
    low, high = result.interval
    assert low <= result.score <= high and high - low > 0
    p = [v.p_counted() for v in result.verdicts]
    assert result.interval == share_interval(p, correlation=CLAIM_CORRELATION)
    method = f"correlated claims (one factor, correlation {CLAIM_CORRELATION})"
    assert result.interval_method == method


def test_no_logprobs_no_interval() -> None:
    plain = ContextRecall(ScriptedJudge(), claims="sentences", cache=ClaimCache())
    result = plain.score(SAMPLE)
    assert result.interval is None and not any(v.uncertain for v in result.verdicts)


def test_the_run_reports_the_mean_with_the_judges_uncertainty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    rows = [
        {**SAMPLE, "reference": f"Cats purr {i}. Cats purr {i + 5}.", "question": f"q{i}"}
        for i in range(6)
    ]
    # The reference's words in one sentence: not stated word for word, so the judge is asked.
    rows = [{**r, "retrieved_contexts": [r["reference"].replace(". ", ", ")]} for r in rows]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = tmp_path / "r.html"
    argv = ["eval", str(data), "--judge-factory", "fakes:LogprobJudge", "--strategy", "per_claim"]
    assert main([*argv, "--claim-mode", "sentences", "--report", str(report)]) == 0
    out = capsys.readouterr().out
    assert "95% CI with judge uncertainty" in out
    html = report.read_text()
    assert "95% CI with judge uncertainty" in html and "uncertain: check" in html
    assert "from the judge" in html
