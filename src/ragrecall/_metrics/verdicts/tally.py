"""A recall result from a reference's claims and their verdicts: the share supported, its
interval from the judge's P(supported), each verdict's confidence from a calibration profile,
and the claims that may not stand alone marked."""

from __future__ import annotations

from ragrecall._core.schemas import ClaimVerdict, RecallResult, claim_set_hash
from ragrecall._stats.intervals import CLAIM_CORRELATION, correlated_method, share_interval

from ..claims.decontext import needs_context
from ..decision import CalibrationProfile

__all__ = ["tally"]


def tally(
    metric: str,
    claims: list[str],
    verdicts: list[ClaimVerdict],
    note: str,
    profile: CalibrationProfile | None,
) -> RecallResult:
    """``metric``'s scored result: ``claims`` judged by ``verdicts`` (one each), ``note`` its
    reason, ``profile`` (if any) the calibration that scales each verdict's confidence."""
    if profile is not None:
        verdicts = [_scaled(v, profile) for v in verdicts]
    verdicts = [  # a claim that may not stand alone is marked, whatever its verdict
        v.model_copy(update={"unresolved": True}) if needs_context(v.claim) else v for v in verdicts
    ]
    supported = sum(v.attributed for v in verdicts)
    interval = _interval(verdicts)
    return RecallResult(
        metric=metric,
        score=supported / len(claims),
        status="scored",
        reason=note,
        claims=claims,
        claim_set=claim_set_hash(claims),
        verdicts=verdicts,
        missing=[v.claim for v in verdicts if not v.attributed],
        interval=interval,
        interval_method=None if interval is None else correlated_method(),
        calibration=None if profile is None else profile.id,
    )


def _interval(verdicts: list[ClaimVerdict]) -> tuple[float, float] | None:
    """The recall's 90% interval from the claims' P(supported), if the judge gave any, the
    claims correlated (benchmarks/intervals.py: independent claims cover too rarely)."""
    if all(v.confidence is None for v in verdicts):
        return None
    return share_interval([v.p_counted() for v in verdicts], correlation=CLAIM_CORRELATION)


def _scaled(verdict: ClaimVerdict, profile: CalibrationProfile) -> ClaimVerdict:
    """The verdict with its confidence from the profile's scaled P(supported)."""
    if verdict.p_supported is None:
        return verdict
    p = profile.scale(verdict.p_supported)
    return verdict.model_copy(update={"confidence": p if verdict.attributed else 1 - p})
