"""Two results files side by side: paired differences B - A on the samples both scored,
matched by task (``task_identity``: the sample id, or the question and reference, whichever
retriever answered, as users read them: ``1.0`` is the id ``1``, surrounding whitespace does
not count), tested with ``ragrecall.stats``, and the claims B recovers and loses."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .._core.errors import SampleError
from .._core.schemas import _TASK_FIELDS as TASK_FIELDS
from .._core.schemas import Sample
from .._running.store import Record
from .._stats.power import minimum_detectable_difference, paired_effect_size, smallest_p_value
from .._stats.tests import (
    WilcoxonResult,
    bootstrap_ci,
    mean,
    sign_flip_test,
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
    identical: bool = False  # every sample paired, with equal results: the same run twice?


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
        empty = " and ".join(name for name, run in (("A", a), ("B", b)) if not run)
        raise SampleError(f"{empty} holds no record: both results files need at least one")
    metric = metric or _shared_metric(a, b)
    for name, records in (("A", a), ("B", b)):
        lacking = [r for r in records if metric not in r.results]
        if len(lacking) == len(records):
            raise SampleError(f"{name} holds no {metric!r} results")
        if lacking:
            raise SampleError(
                f"{name} holds no {metric!r} result for {len(lacking)} of its samples (first: "
                f"row {lacking[0].index}, {lacking[0].sample.user_input!r}); score them again"
            )
        repeated = [r for r in records if r.occurrence > 1]
        if repeated:
            raise SampleError(
                f"{name} repeats the task of {len(repeated)} samples (first: row "
                f"{repeated[0].index}, {repeated[0].sample.user_input!r}); pairing would be "
                "ambiguous: give each row a sample_id (--id-column) and score again"
            )
    shared = _pair(a, b)
    if len(shared) < min_shared * max(len(a), len(b)):
        raise SampleError(
            f"only {len(shared)} samples pair (A {len(a)}, B {len(b)}): fewer than "
            f"{min_shared:.0%}; were both runs made on the same questions and references? "
            f"Samples pair by sample_id, else by question and reference ({SAME}). "
            f"{_unpaired(a, b, shared)}(--min-shared lowers the bar)"
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
    comparison.identical = (
        not comparison.only_a
        and not comparison.only_b
        and all(ra.results[metric] == rb.results[metric] for ra, rb in shared)
    )
    _test(comparison, resamples, seed)
    if comparison.identical and comparison.pairs:
        comparison.verdict = "no significant difference"  # not "too few": nothing differs
    return comparison


SAME = (
    "ids and texts are compared as users read them: surrounding whitespace and runs of spaces "
    "do not count, and an id written 1.0 (a number column with a gap, as pandas stores it) is 1"
)


def task_identity(sample: Sample) -> str:
    """What a user would call the same task: the sample id (``1.0`` is ``1``, surrounding
    whitespace dropped), else the task's fields with their whitespace squeezed."""
    if sample.sample_id is not None:
        return "id:" + same_id(sample.sample_id)
    task = sample.model_dump(mode="json", include=TASK_FIELDS)
    if sample.reference is not None:
        task.pop("reference_claims", None)
    return "task:" + json.dumps(_squeezed(task), sort_keys=True)


def same_id(value: str) -> str:
    """``value`` as users read an id: stripped, an integral number's ``.0`` dropped."""
    text = value.strip()
    return _INTEGRAL.sub(r"\1", text)


_INTEGRAL = re.compile(r"^([+-]?\d+)\.0*$")


def _squeezed(value: Any) -> Any:
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, list):
        return [_squeezed(v) for v in value]
    if isinstance(value, dict):
        return {_squeezed(k): _squeezed(v) for k, v in value.items()}
    return value


def _pair(a: Sequence[Record], b: Sequence[Record]) -> list[tuple[Record, Record]]:
    """Pairs by task identity (``task_identity``); by the exact key where the identity would
    merge two samples of one run."""
    ids_a = [task_identity(r.sample) for r in a]
    ids_b = [task_identity(r.sample) for r in b]
    if len(set(ids_a)) < len(ids_a) or len(set(ids_b)) < len(ids_b):
        ids_a, ids_b = [r.key for r in a], [r.key for r in b]
    by_id = dict(zip(ids_a, a, strict=True))
    return [(by_id[i], r) for i, r in zip(ids_b, b, strict=True) if i in by_id]


def _unpaired(
    a: Sequence[Record], b: Sequence[Record], shared: Sequence[tuple[Record, Record]]
) -> str:
    """The first unpaired sample of each run, so that a near miss shows."""
    paired_a = {id(ra) for ra, _ in shared}
    paired_b = {id(rb) for _, rb in shared}
    shown = []
    for name, records, paired in (("A", a, paired_a), ("B", b, paired_b)):
        first = next((r for r in records if id(r) not in paired), None)
        if first is not None:
            shown.append(f"first unpaired in {name}: {_described(first.sample)}")
    return "; ".join(shown) + ". " if shown else ""


def _described(sample: Sample) -> str:
    if sample.sample_id is not None:
        return f"sample_id {_clipped(sample.sample_id)}"
    return f"question {_clipped(sample.user_input)}, reference {_clipped(sample.reference)}"


def _clipped(text: str | None) -> str:
    shown = repr(text)
    return shown if len(shown) <= 60 else shown[:57] + "..."


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
