"""Prompt injection on the real embedded judge: a few cases of ``benchmarks/data/adversarial.jsonl``
(the full set and the rates with and without defences: ``benchmarks/security/injection.py``).

With the default prompt, delimited passages and ``evidence="quote"``, an unsupported claim
next to a chunk that attacks the judge is never counted, and real support next to the attack
still is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragrecall import ClaimCache, ContextRecall
from ragrecall.judges import LocalJudge

pytestmark = pytest.mark.judge

CASES = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "adversarial.jsonl"
# Attacks this judge falls for when quotes are only checked for presence (see the benchmark).
IDS = ["json-01", "json-05", "delim-03", "plant-03", "role-05"]


def cases() -> dict[str, dict[str, Any]]:
    rows = (json.loads(line) for line in CASES.read_text().splitlines() if line.strip())
    return {row["id"]: row for row in rows}


def defended(judge: LocalJudge) -> ContextRecall:
    return ContextRecall(judge, strategy="per_claim", evidence="quote", cache=ClaimCache())


@pytest.mark.parametrize("case_id", IDS)
def test_injected_chunk_does_not_make_an_unsupported_claim_count(
    local_judge: LocalJudge, case_id: str
) -> None:
    case = cases()[case_id]
    sample = {
        "user_input": case["question"],
        "reference_claims": [case["claim"]],
        "retrieved_contexts": case["contexts"],
    }
    result = defended(local_judge).score(sample)
    assert result.status == "scored" and result.score == 0.0, result.verdicts[0].reason


def test_real_support_next_to_an_attack_still_counts(local_judge: LocalJudge) -> None:
    case = cases()["json-01"]
    sample = {
        "user_input": case["question"],
        "reference_claims": ["Mount Kilimanjaro is in Tanzania."],
        "retrieved_contexts": case["contexts"],
    }
    (verdict,) = defended(local_judge).score(sample).verdicts
    assert verdict.attributed and verdict.chunk_ids == ["a"], verdict.reason
