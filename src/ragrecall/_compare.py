"""Two results files side by side: paired differences B - A on the samples both scored,
matched by task (``Sample.key()``: the sample id, or the question and reference, whichever
retriever answered), tested with ``ragrecall.stats``, and the claims B recovers and loses."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ._errors import SampleError
from ._results_file import Record
from .stats import (
    WilcoxonResult,
    bootstrap_ci,
    mean,
    minimum_detectable_difference,
    paired_effect_size,
    sign_flip_test,
    smallest_p_value,
    wilcoxon_signed_rank,
)

__all__ = ["ClaimChange", "Comparison", "Pair", "compare_records"]

Verdict = Literal["better", "worse", "no significant difference", "too few pairs"]


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
    """The paired comparison of one metric. ``paired``: samples both runs scored; the tests,
    means and effect size are over them. ``mdd``: the smallest mean difference this many pairs
    detect with 80 % power at ``alpha`` (inf when the test cannot reach ``alpha`` at all)."""

    metric: str
    n_a: int
    n_b: int
    n_shared: int
    only_a: int
    only_b: int
    alpha: float
    confidence: float
    verdict: Verdict
    pairs: list[Pair] = field(default_factory=list)
    mean_a: float | None = None
    mean_b: float | None = None
    mean_diff: float | None = None
    ci: tuple[float, float] | None = None
    p_value: float | None = None
    wilcoxon: WilcoxonResult | None = None
    effect_size: float | None = None
    mdd: float | None = None
    changes: list[ClaimChange] = field(default_factory=list)
    claim_sets_differ: int = 0
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
    min_shared: float = 0.9,
    allow_other_claims: bool = False,
) -> Comparison:
    """Pair the samples of ``a`` and ``b`` by task and test whether B's scores differ.

    Refused (SampleError) when a run repeats a task (pairing would be ambiguous), when fewer
    than ``min_shared`` of the larger run's samples pair, or when paired samples were scored
    against different claim sets (their claims cannot be compared) unless
    ``allow_other_claims``, which then compares scores and leaves those samples' claims out.
    """
    if not a or not b:
        raise SampleError("both results files need at least one record")
    metric = metric or _shared_metric(a, b)
    for name, records in (("A", a), ("B", b)):
        if metric not in records[0].results:
            raise SampleError(f"{name} holds no {metric!r} results")
        repeated = [r for r in records if r.occurrence > 1]
        if repeated:
            raise SampleError(
                f"{name} repeats the task of {len(repeated)} samples (first: row "
                f"{repeated[0].index}, {repeated[0].sample.user_input!r}); pairing would be "
                "ambiguous: give each row a sample_id (--id-column) and score again"
            )
    by_key = {r.key: r for r in a}
    shared = [(by_key[r.key], r) for r in b if r.key in by_key]
    if len(shared) < min_shared * max(len(a), len(b)):
        raise SampleError(
            f"only {len(shared)} samples pair (A {len(a)}, B {len(b)}): fewer than "
            f"{min_shared:.0%}; were both runs made on the same questions and references? "
            "(--min-shared lowers the bar)"
        )
    differ = [(ra, rb) for ra, rb in shared if _claim_set(ra, metric) != _claim_set(rb, metric)]
    if differ and not allow_other_claims:
        ra, _ = differ[0]
        raise SampleError(
            f"{len(differ)} paired samples were scored against different claims (first: "
            f"{ra.sample.user_input!r}), so their claims cannot be compared; lock them with "
            "`ragrecall claims` and `eval --claims`, or pass --allow-other-claims"
        )
    comparison = Comparison(
        metric=metric,
        n_a=len(a),
        n_b=len(b),
        n_shared=len(shared),
        only_a=len(a) - len(shared),
        only_b=len(b) - len(shared),
        alpha=alpha,
        confidence=confidence,
        verdict="no significant difference",
        claim_sets_differ=len(differ),
    )
    for ra, rb in shared:
        sa, sb = ra.score(metric), rb.score(metric)
        comparison.unscorable_a += sa is None
        comparison.unscorable_b += sb is None
        question = rb.sample.user_input or ""
        if sa is not None and sb is not None:
            comparison.pairs.append(Pair(rb.key, question, sa, sb))
        if _claim_set(ra, metric) == _claim_set(rb, metric):
            change = _claim_change(ra, rb, metric)
            if change.recovered or change.lost:
                comparison.changes.append(change)
    _test(comparison, resamples, seed)
    return comparison


def _shared_metric(a: Sequence[Record], b: Sequence[Record]) -> str:
    shared = [m for m in a[0].results if m in b[0].results]
    if not shared:
        raise SampleError(
            f"no metric in common: A has {list(a[0].results)}, B has {list(b[0].results)}"
        )
    return shared[0]


def _claim_set(record: Record, metric: str) -> str | None:
    return record.results[metric].claim_set


def _test(c: Comparison, resamples: int, seed: int) -> None:
    """Means, interval, tests, effect size, detectable difference and the verdict."""
    diffs = [p.diff for p in c.pairs]
    if not diffs:
        c.verdict = "too few pairs"
        return
    c.mean_a, c.mean_b = mean([p.a for p in c.pairs]), mean([p.b for p in c.pairs])
    c.mean_diff = mean(diffs)
    c.ci = bootstrap_ci(diffs, resamples=resamples, confidence=c.confidence, seed=seed)
    c.p_value = sign_flip_test(diffs, resamples=resamples, seed=seed)
    c.wilcoxon = wilcoxon_signed_rank(diffs)
    c.effect_size = paired_effect_size(diffs)
    c.mdd = minimum_detectable_difference(diffs, alpha=c.alpha)
    if c.p_value < c.alpha and c.mean_diff != 0:
        c.verdict = "better" if c.mean_diff > 0 else "worse"
    elif smallest_p_value(sum(d != 0 for d in diffs)) > c.alpha:
        c.verdict = "too few pairs"


def _claim_change(a: Record, b: Record, metric: str) -> ClaimChange:
    ra, rb = a.results[metric], b.results[metric]
    missing_a, missing_b = set(ra.missing), set(rb.missing)
    recovered = [c for c in rb.claims if c in missing_a and c not in missing_b]
    lost = [c for c in rb.claims if c in missing_b and c not in missing_a]
    return ClaimChange(b.key, b.sample.user_input or "", recovered, lost)
