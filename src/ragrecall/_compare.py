"""Two results files side by side: paired differences B - A on the samples both scored
(matched by ``Sample.key()``), tested with the statistics of ``_stats``, and the claims B
recovers and loses."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ._errors import SampleError
from ._results_file import Record
from .stats import WilcoxonResult, bootstrap_ci, mean, sign_flip_test, wilcoxon_signed_rank

__all__ = ["ClaimChange", "Comparison", "Pair", "compare_records"]

Verdict = Literal["better", "worse", "no significant difference"]

@dataclass(frozen=True)
class Pair:
    key: str
    question: str
    a: float
    b: float

    @property
    def diff(self) -> float:
        return self.b - self.a


@dataclass(frozen=True)
class ClaimChange:
    """Claims of one shared sample that B supports and A did not (recovered), and the reverse
    (lost); only claims with the same text in both runs are compared."""

    key: str
    question: str
    recovered: list[str]
    lost: list[str]


@dataclass
class Comparison:
    metric: str
    n_a: int
    n_b: int
    n_shared: int
    pairs: list[Pair]
    mean_a: float | None
    mean_b: float | None
    mean_diff: float | None
    ci: tuple[float, float] | None
    confidence: float
    p_value: float | None
    wilcoxon: WilcoxonResult | None
    alpha: float
    verdict: Verdict
    changes: list[ClaimChange] = field(default_factory=list)
    unscorable_a: int = 0
    unscorable_b: int = 0


def compare_records(
    a: Sequence[Record],
    b: Sequence[Record],
    *,
    metric: str | None = None,
    alpha: float = 0.05,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> Comparison:
    """Pair the samples of ``a`` and ``b`` by key and test whether B's scores differ."""
    if not a or not b:
        raise SampleError("both results files need at least one record")
    if metric is None:
        shared_metrics = [m for m in a[0].results if m in b[0].results]
        if not shared_metrics:
            raise SampleError(
                f"no metric in common: A has {list(a[0].results)}, B has {list(b[0].results)}"
            )
        metric = shared_metrics[0]
    for name, records in (("A", a), ("B", b)):
        if metric not in records[0].results:
            raise SampleError(f"{name} holds no {metric!r} results")
    by_key = {r.key: r for r in a}
    shared = [(by_key[r.key], r) for r in b if r.key in by_key]
    pairs: list[Pair] = []
    changes: list[ClaimChange] = []
    unscorable_a = unscorable_b = 0
    for ra, rb in shared:
        sa, sb = ra.score(metric), rb.score(metric)
        unscorable_a += sa is None
        unscorable_b += sb is None
        question = rb.sample.user_input or ""
        if sa is not None and sb is not None:
            pairs.append(Pair(rb.key, question, sa, sb))
        change = _claim_change(ra, rb, metric)
        if change.recovered or change.lost:
            changes.append(change)
    diffs = [p.diff for p in pairs]
    if not diffs:
        return Comparison(
            metric,
            len(a),
            len(b),
            len(shared),
            pairs,
            None,
            None,
            None,
            None,
            confidence,
            None,
            None,
            alpha,
            "no significant difference",
            changes,
            unscorable_a,
            unscorable_b,
        )
    mean_diff = mean(diffs)
    p_value = sign_flip_test(diffs, resamples=resamples, seed=seed)
    verdict: Verdict = "no significant difference"
    if p_value < alpha and mean_diff != 0:
        verdict = "better" if mean_diff > 0 else "worse"
    return Comparison(
        metric=metric,
        n_a=len(a),
        n_b=len(b),
        n_shared=len(shared),
        pairs=pairs,
        mean_a=mean([p.a for p in pairs]),
        mean_b=mean([p.b for p in pairs]),
        mean_diff=mean_diff,
        ci=bootstrap_ci(diffs, resamples=resamples, confidence=confidence, seed=seed),
        confidence=confidence,
        p_value=p_value,
        wilcoxon=wilcoxon_signed_rank(diffs),
        alpha=alpha,
        verdict=verdict,
        changes=changes,
        unscorable_a=unscorable_a,
        unscorable_b=unscorable_b,
    )


def _claim_change(a: Record, b: Record, metric: str) -> ClaimChange:
    ra, rb = a.results[metric], b.results[metric]
    both = set(ra.claims) & set(rb.claims)
    missing_a, missing_b = set(ra.missing), set(rb.missing)
    recovered = [c for c in rb.claims if c in both and c in missing_a and c not in missing_b]
    lost = [c for c in rb.claims if c in both and c in missing_b and c not in missing_a]
    return ClaimChange(b.key, b.sample.user_input or "", recovered, lost)
