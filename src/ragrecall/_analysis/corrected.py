"""A run's mean, and two runs' difference, corrected by people's labels of whole answers.

People label every claim of a few answers picked at random (``ragrecall review --answers``);
an answer's human recall is its supported claims over its claims. ``corrected_mean`` joins
those answers to a run's records and hands the judge's scores and people's to ``ppi_mean``;
``corrected_difference`` does the same for two runs paired by task (``ppi_difference``).

An answer label joins a record by its sample (``key``, ``occurrence``) and its ``content``
digest (what was retrieved: a label of another retrieval is another answer). Labels that join
no record, and records the run could not score, are counted, never dropped silently; a label
whose claims differ from the record's (``claim_set``) is refused: its human recall is of
other claims.

One concern over 300 lines: the label correction of a mean and of a difference, with the join
and checks they share.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .._core.errors import SampleError
from .._core.schemas import RecallResult
from .._running.store import Record
from .._stats.intervals import CONFORMAL_MIN_LABELS, conformal_method, conformal_radius
from .._stats.ppi import PPIResult, ppi_difference, ppi_mean, t_quantile
from .compare import _pair

__all__ = [
    "AnswerLabel",
    "CorrectedDifference",
    "CorrectedMean",
    "check_answers",
    "corrected_difference",
    "corrected_mean",
]


@dataclass(frozen=True)
class AnswerLabel:
    """People's recall of one whole answer: every claim of it labelled.

    ``key``, ``occurrence``: the sample in its results file; ``content``: its content digest
    (which retrieval); ``task``: the task identity ``compare`` pairs by (a digest);
    ``claim_set``: the claims labelled; ``supported`` of ``claims`` supported;
    ``where``: the file and line of its first label (for messages)."""

    metric: str
    key: str
    occurrence: int
    content: str
    task: str | None
    claim_set: str | None
    supported: int
    claims: int
    where: str

    @property
    def recall(self) -> float:
        return self.supported / self.claims


@dataclass(frozen=True)
class CorrectedMean:
    """A run's mean ``metric`` corrected by people's labels of whole answers.

    ``ppi``: ``ppi_mean``'s result (``estimate``, ``low``, ``high``: the corrected mean and
    its interval; ``judge_mean``: the judge's mean over every scored answer; ``labels``:
    labelled answers used). ``bias``: the judge's mean minus people's on the labelled
    answers (positive: generous), ``bias_interval`` its interval (Student's t, the
    finite-population correction; None below 2 labelled answers). ``unmatched``: answer
    labels that match no sample of the run; ``unscorable``: labelled answers the run could not
    score; ``other_labels``: labels of single claims (review's uncertain and random picks),
    for ``calibrate`` only. ``answer_radius``: from ``CONFORMAL_MIN_LABELS`` labelled answers
    up, the split-conformal half-width of each answer's interval at ``confidence`` (people's
    recall of an answer lies within it of the judge's); else None."""

    metric: str
    ppi: PPIResult
    bias_interval: tuple[float, float] | None
    unmatched: int = 0
    unscorable: int = 0
    other_labels: int = 0
    answer_radius: float | None = None

    def answer_interval(self, result: RecallResult) -> RecallResult:
        """``result`` with its interval replaced by the split-conformal one (when there is an
        ``answer_radius`` and the result is scored); otherwise ``result`` unchanged."""
        if self.answer_radius is None or result.score is None:
            return result
        low, high = result.score - self.answer_radius, result.score + self.answer_radius
        return result.model_copy(
            update={
                "interval": (max(0.0, low), min(1.0, high)),
                "interval_method": conformal_method(self.ppi.labels),
            }
        )

    @property
    def estimate(self) -> float:
        return self.ppi.estimate

    @property
    def interval(self) -> tuple[float, float]:
        return (self.ppi.low, self.ppi.high)

    @property
    def judge_mean(self) -> float:
        return self.ppi.judge_mean

    @property
    def bias(self) -> float:
        return self.ppi.judge_bias

    @property
    def labels(self) -> int:
        return self.ppi.labels

    def to_dict(self) -> dict[str, object]:
        """The figures as JSON-ready data (the eval summary's ``corrected`` entry)."""
        p = self.ppi
        return {
            "judge_mean": p.judge_mean,
            "corrected_mean": p.estimate,
            "interval": [p.low, p.high],
            "confidence": p.confidence,
            "method": p.method,
            "labelled_answers": p.labels,
            "answers": p.total,
            "judge_bias": p.judge_bias,
            "judge_bias_interval": None if self.bias_interval is None else list(self.bias_interval),
            "labels_only_interval": list(p.labels_only),
            "lambda": p.lambda_,
            "rho": p.rho,
            "unmatched_labels": self.unmatched,
            "unscorable_labelled": self.unscorable,
            "claim_labels_not_used": self.other_labels,
            "answer_interval_radius": self.answer_radius,
        }


@dataclass(frozen=True)
class CorrectedDifference:
    """The mean difference B - A of ``metric`` corrected by people's labels, over the tasks
    both runs scored.

    A task counts as labelled when people labelled both its answers, A's and B's (one label
    serves both where the two runs retrieved the same). ``ppi``: ``ppi_difference``'s result
    on (B, A) per task (``estimate``, ``low``, ``high``; ``judge_mean``: the judge's mean
    difference; ``judge_bias``: its bias on B minus its bias on A). ``verdict``: ``worse``
    when the interval lies below 0, ``better`` above it, else ``no significant difference``.
    ``one_side``: tasks labelled for one run only (not used); ``unmatched``: answer labels
    that match no answer of either run; ``unscorable``: labelled answers of tasks not scored
    by both runs; ``other_labels``: labels of single claims."""

    metric: str
    ppi: PPIResult
    verdict: str
    one_side: int = 0
    unmatched: int = 0
    unscorable: int = 0
    other_labels: int = 0


def check_answers(
    answers: Sequence[AnswerLabel],
    samples: Iterable[tuple[tuple[str, int], str]],
    metrics: Sequence[str] | None,
    other_labels: int = 0,
) -> None:
    """Refuse (SampleError) labels that cannot correct this run, before it is scored: no
    whole answer among them, a metric the run does not score, or no labelled answer among
    ``samples`` (each ``((key, occurrence), content)``)."""
    if not answers:
        raise SampleError(
            f"the labels hold no whole answer ({other_labels} labels of single claims, which "
            "calibrate reads): label whole answers picked at random (ragrecall review RESULTS "
            "--answers 40)"
        )
    if metrics is not None:
        other = next((x for x in answers if x.metric not in metrics), None)
        if other is not None:
            raise SampleError(
                f"{other.where}: a label of metric {other.metric!r}, which this run does not "
                f"score ({', '.join(metrics)})"
            )
    present = {(key, occurrence, content) for (key, occurrence), content in samples}
    if not any((x.key, x.occurrence, x.content) in present for x in answers):
        raise SampleError(
            f"none of the {len(answers)} labelled answers is among the samples here (first: "
            f"{answers[0].where}): label answers of these results (the same rows, retrieving "
            "the same chunks)"
        )


def corrected_mean(
    records: Sequence[Record],
    answers: Sequence[AnswerLabel],
    metric: str = "context_recall",
    *,
    judge_all: Sequence[float] | None = None,
    confidence: float = 0.9,
    other_labels: int = 0,
) -> CorrectedMean:
    """``ppi_mean`` over the scored answers of ``records`` (for ``metric``) and the labelled
    ones among them. ``judge_all``: the judge's score of every scored answer, when
    ``records`` holds only the labelled ones (a run summarised in bounded memory). SampleError
    when a label's claims differ from its record's, or when no label matches a scored answer.
    """
    answers = [x for x in answers if x.metric == metric]
    by_answer = {(r.key, r.occurrence, r.content): r for r in records}
    if judge_all is None:
        judge_all = [s for s in (r.score(metric) for r in records) if s is not None]
    judge: list[float] = []
    human: list[float] = []
    unmatched = unscorable = 0
    for answer in answers:
        record = by_answer.get((answer.key, answer.occurrence, answer.content))
        if record is None or metric not in record.results:
            unmatched += 1
            continue
        _check_claims(answer, record, metric)
        score = record.score(metric)
        if score is None:
            unscorable += 1
            continue
        judge.append(score)
        human.append(answer.recall)
    if not human:
        raise SampleError(
            f"no labelled answer matches a scored {metric!r} sample of this run ({unmatched} "
            f"match none, {unscorable} unscorable here): label answers of this run's results "
            "(ragrecall review RESULTS --answers 40)"
        )
    ppi = ppi_mean(judge_all, judge, human, confidence=confidence)
    bias = _bias_interval([j - h for j, h in zip(judge, human, strict=True)], len(judge_all), ppi)
    pairs = list(zip(judge, human, strict=True))
    radius = conformal_radius(pairs, confidence) if len(pairs) >= CONFORMAL_MIN_LABELS else None
    return CorrectedMean(metric, ppi, bias, unmatched, unscorable, other_labels, radius)


def corrected_difference(
    a: Sequence[Record],
    b: Sequence[Record],
    answers: Sequence[AnswerLabel],
    metric: str,
    *,
    confidence: float = 0.95,
    other_labels: int = 0,
) -> CorrectedDifference:
    """``ppi_difference`` of B - A over the tasks both runs scored (paired as ``compare``
    pairs them), labelled where people labelled both answers of a task. SampleError when a
    label's claims differ from its answer's, or when no task is labelled on both sides."""
    answers = [x for x in answers if x.metric == metric]
    found = {(x.key, x.occurrence, x.content): x for x in answers}
    used: set[tuple[str, int, str]] = set()
    judge_all: list[tuple[float, float]] = []
    judge: list[tuple[float, float]] = []
    human: list[tuple[float, float]] = []
    one_side = unscorable = 0
    for ra, rb in _pair(a, b):
        la = found.get((ra.key, ra.occurrence, ra.content))
        lb = found.get((rb.key, rb.occurrence, rb.content))
        for label, record in ((la, ra), (lb, rb)):
            if label is not None:
                _check_claims(label, record, metric)
                used.add((label.key, label.occurrence, label.content))
        sa, sb = ra.score(metric), rb.score(metric)
        if sa is None or sb is None:
            unscorable += (la is not None) + (lb is not None and lb is not la)
            continue
        judge_all.append((sb, sa))
        if la is not None and lb is not None:
            judge.append((sb, sa))
            human.append((lb.recall, la.recall))
        elif la is not None or lb is not None:
            one_side += 1
    unmatched = len(found) - len(used)
    if not human:
        raise SampleError(
            f"no task has labels for both runs' answers ({one_side} labelled on one side only, "
            f"{unmatched} labels match neither run): review both results files with --answers "
            "and the same --seed, label both pages, and pass both exports with --labels"
        )
    ppi = ppi_difference(judge_all, judge, human, confidence=confidence)
    verdict = "no significant difference"
    if ppi.high < 0:
        verdict = "worse"
    elif ppi.low > 0:
        verdict = "better"
    return CorrectedDifference(metric, ppi, verdict, one_side, unmatched, unscorable, other_labels)


def _check_claims(answer: AnswerLabel, record: Record, metric: str) -> None:
    result = record.results[metric]
    if answer.claim_set != result.claim_set or answer.claims != len(result.claims):
        raise SampleError(
            f"{answer.where}: this answer was labelled against other claims than the run "
            f"scored (claim set {answer.claim_set}, {answer.claims} claims; the run's "
            f"{result.claim_set}, {len(result.claims)} claims): lock the claims "
            "(ragrecall claims, eval --claims) or label this run's answers again"
        )


def _bias_interval(
    differences: Sequence[float], total: int, ppi: PPIResult
) -> tuple[float, float] | None:
    """The interval of the judge's mean bias from a simple random sample of answers."""
    n = len(differences)
    if n < 2:
        return None
    mean = math.fsum(differences) / n
    variance = math.fsum((d - mean) ** 2 for d in differences) / (n - 1)
    half = t_quantile((1 + ppi.confidence) / 2, n - 1) * math.sqrt((1 - n / total) * variance / n)
    return (max(mean - half, -1.0), min(mean + half, 1.0))
