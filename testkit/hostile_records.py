"""Results records whose every text is hostile HTML, for the report tests (unit, and the
headless browser's in the system tier)."""

from __future__ import annotations

from ragrecall import ClaimVerdict, RecallResult, Sample
from ragrecall.calibration import AnswerLabel, CorrectedMean
from ragrecall.engines import Record

HOSTILE = '<script>alert(1)</script> "quoted" & <img src=x onerror=alert(2)>'


def hostile_record(index: int = 0, score: float = 0.5) -> Record:
    sample = Sample(
        user_input=f"Which <b>tag</b>? {index}",
        reference="Cats purr. Dogs fly.",
        retrieved_contexts=[{"id": "c<1>", "text": f"Cats purr loudly. {HOSTILE}"}],
    )
    verdicts = [
        ClaimVerdict(
            claim="Cats purr.",
            attributed=True,
            chunk_ids=["c<1>"],
            evidence="cats  PURR",
            evidence_verified=True,
            reason="supported",
        ),
        ClaimVerdict(
            claim=f"Dogs fly. {HOSTILE}", attributed=False, reason="the judge found no support"
        ),
    ]
    result = RecallResult(
        score=score,
        status="scored",
        claims=[v.claim for v in verdicts],
        verdicts=verdicts,
        missing=[verdicts[1].claim],
    )
    return Record(sample.key(), index, sample, {"context_recall": result})


def corrected(records: list[Record]) -> CorrectedMean:
    """The first ten records labelled: people find one of their two claims supported."""
    from ragrecall._analysis.corrected import corrected_mean

    answers = [
        AnswerLabel("context_recall", r.key, r.occurrence, r.content, None, None, 1, 2, f"x:{i}")
        for i, r in enumerate(records[:10])
    ]
    return corrected_mean(records, answers)
