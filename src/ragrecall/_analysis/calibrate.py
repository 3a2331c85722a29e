"""Fit the judge to a person's labels: ``calibrate(labels)`` -> ``CalibrationProfile``.

Two things are fitted, each only as far as the labels bear it out:

- a Platt scaling of P(supported), ``sigmoid(a * logit(p) + b)``, so that the confidence a
  verdict reports matches how often such verdicts are right, kept only when it lowers the
  Brier score on held-out folds with a bootstrap interval above zero (otherwise P stays raw);
- the decision (``support_threshold``, ``lexical_weight``), moved from ContextRecall's defaults
  only when cross-validation shows a gain in balanced accuracy whose bootstrap interval lies
  above zero; otherwise the defaults stay and the profile says why.

Agreement with the person, before and after, is balanced accuracy and Cohen's kappa with
seeded bootstrap intervals; the probabilities are scored by the Brier score and log loss (with
bootstrap intervals) and, from 100 labelled claims up, by the debiased calibration error beside
the one a perfectly calibrated judge would show at the same n. Given the judge's P(supported) on
the data the profile is for (``prior_shift``), the Platt intercept is moved by EM to that data's
share of supported claims (Saerens, Latinne, Decaestecker 2002).

One concern over 300 lines: the fit and the held-out checks that decide what of it is kept.

A profile names the judge (``Metric.judge_id()``) and prompt version it was fitted for;
applying it to another is refused (``CalibrationError``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path

from .._core.errors import CalibrationError
from .._metrics.decision import (
    DEFAULT_DECISION,
    SCALE_LIMIT,
    Agreement,
    CalibrationProfile,
    Decision,
)
from .._stats.agreement import balanced_accuracy, cohen_kappa
from .._stats.calibration import (
    ECE_MIN_LABELS,
    brier_score,
    calibrated_ece,
    debiased_ece,
    log_loss,
    prior_shift,
)
from .._stats.platt import logit, platt, sigmoid
from .._stats.tests import bootstrap_interval
from .labels import Label, read_labels

__all__ = ["MIN_LABELS", "calibrate"]

MIN_LABELS = 20  # fewer labelled verdicts with P(supported): the defaults stay
_THRESHOLDS = [round(0.05 * i, 2) for i in range(1, 20)]
_WEIGHTS = [round(0.1 * i, 1) for i in range(7)]


def calibrate(
    labels: str | Path | Sequence[Label],
    *,
    folds: int = 5,
    seed: int = 0,
    resamples: int = 2000,
    prior_shift_to: Sequence[float] | None = None,
) -> CalibrationProfile:
    """Fit a calibration profile to a person's labels (a labels file or ``Label`` list).

    ``prior_shift_to``: the judge's raw P(supported) on the claims of the data the profile will
    be applied to, when their share of supported claims may differ from the labels' (say, the
    labels came from another retriever): EM estimates that share and the Platt intercept moves
    by logit(data share) - logit(labels share). Only from 20 labels with both kinds and when
    the Platt scaling was kept (EM needs calibrated P: on a judge's raw P it goes astray);
    otherwise the note says it was not applied.

    Raises CalibrationError when the labels mix judges or prompt versions, or none is usable.
    """
    rows = read_labels(labels) if isinstance(labels, (str, Path)) else list(labels)
    source = f"{labels}: " if isinstance(labels, (str, Path)) else ""
    judges = {(x.judge, x.prompt_version) for x in rows}
    if len(judges) > 1:
        raise CalibrationError(f"{source}the labels mix judges / prompt versions: {sorted(judges)}")
    used = [x for x in rows if x.label != "skip"]
    if not used:
        raise CalibrationError(f"{source}no labels to calibrate on (every row is skipped or empty)")
    judge, prompt_version = judges.pop()
    truth = [x.label == "supported" for x in used]
    said = [x for x, y in zip(used, truth, strict=True) if x.attributed is not None]
    said_truth = [y for x, y in zip(used, truth, strict=True) if x.attributed is not None]
    fit = [(x, y) for x, y in zip(used, truth, strict=True) if x.p_supported is not None]
    rng = random.Random(seed)
    fold_of = [i % folds for i in range(len(fit))]
    rng.shuffle(fold_of)

    def agreement(pred: Sequence[bool], true: Sequence[bool]) -> Agreement:
        return _agreement(pred, true, resamples, seed)

    before_p = [x.p_supported or 0.0 for x, _ in fit]
    fit_truth = [y for _, y in fit]
    agreement_before = agreement([bool(x.attributed) for x in said], said_truth)
    a, b = 1.0, 0.0
    after_p: list[float] | None = None
    moved, scaled, note = False, False, ""
    decision = DEFAULT_DECISION
    fitted = len(fit) >= MIN_LABELS and len(set(fit_truth)) == 2
    if not fitted:
        note = (
            f"kept the defaults: {len(fit)} labelled verdicts with P(supported) "
            f"(at least {MIN_LABELS} of both labels are needed)"
        )
    else:
        held_out = _out_of_fold(fold_of, folds, lambda train: _platt_predict(fit, train))
        scaled, why = _scaling_pays(before_p, held_out, fit_truth, resamples, seed)
        if scaled:
            a, b = platt(before_p, fit_truth)
            after_p = held_out
        if scaled and max(a, abs(b)) > SCALE_LIMIT - 30:  # 30: room for a prior shift
            scaled, a, b, after_p = False, 1.0, 0.0, None
            why = f"kept P(supported) unscaled: the Platt fit ran past {SCALE_LIMIT:g} ({why})"
        moved, decision, note = _decide(fit, fold_of, folds, resamples, seed)
        note = f"{why}; {note}"
    if moved:
        tuned = _out_of_fold(fold_of, folds, lambda train: _tuned_predict(fit, train))
        agreement_after = agreement([t > 0.5 for t in tuned], fit_truth)
    else:
        agreement_after = agreement_before.model_copy()
    agreement_before = agreement_before.model_copy(
        update=_probability_scores(before_p, fit_truth, resamples, seed)
    )
    agreement_after = agreement_after.model_copy(
        update=_probability_scores(after_p if after_p else before_p, fit_truth, resamples, seed)
    )
    labels_prior = sum(fit_truth) / len(fit_truth) if fit_truth else None
    data_prior = None
    if prior_shift_to is not None:
        if not fitted or labels_prior is None or not prior_shift_to:
            note += (
                f"; no prior shift: it needs {MIN_LABELS} labels of both kinds and the "
                "data's P(supported)"
            )
        elif not scaled:  # EM trusts P; on a judge's raw, miscalibrated P it goes astray
            note += "; no prior shift: it needs calibrated P, and P stays raw here"
        else:
            shift = prior_shift([sigmoid(a * logit(p) + b) for p in prior_shift_to], labels_prior)
            b += shift.logit_shift
            data_prior = shift.prior
            note += (
                f"; prior shift: {labels_prior:.3f} of the labels supported, EM finds "
                f"{shift.prior:.3f} in the {len(prior_shift_to)} claims of the data"
            )
    profile = CalibrationProfile(
        judge=judge,
        prompt_version=prompt_version,
        scale_a=a,
        scale_b=b,
        support_threshold=decision.support_threshold,
        lexical_weight=decision.lexical_weight,
        labels=len(used),
        moved=moved,
        note=note,
        labels_prior=labels_prior,
        data_prior=data_prior,
        agreement={"before": agreement_before, "after": agreement_after},
    )
    randoms = [x for x in said if x.pick == "random"]
    if randoms:
        true = [x.label == "supported" for x in randoms]
        profile.agreement["before_random"] = agreement([bool(x.attributed) for x in randoms], true)
        counted = [
            profile.decision.counts(x.p_supported, x.word_overlap or 0.0)
            if x.p_supported is not None
            else bool(x.attributed)
            for x in randoms
        ]
        profile.agreement["after_random"] = agreement(counted, true)
    return profile


def _out_of_fold(
    fold_of: Sequence[int], folds: int, predict: Callable[[list[int]], Callable[[int], float]]
) -> list[float]:
    out = [0.0] * len(fold_of)
    for k in range(folds):
        train = [i for i, f in enumerate(fold_of) if f != k]
        model = predict(train)
        for i, f in enumerate(fold_of):
            if f == k:
                out[i] = model(i)
    return out


Fit = Sequence[tuple[Label, bool]]


def _platt_predict(fit: Fit, train: list[int]) -> Callable[[int], float]:
    a, b = platt([fit[i][0].p_supported or 0.0 for i in train], [fit[i][1] for i in train])
    return lambda i: sigmoid(a * logit(fit[i][0].p_supported or 0.0) + b)


def _tuned_predict(fit: Fit, train: list[int]) -> Callable[[int], float]:
    best = _best_decision([fit[i] for i in train])
    return lambda i: float(_counts(best, fit[i][0]))


def _counts(decision: Decision, x: Label) -> bool:
    return decision.counts(x.p_supported or 0.0, x.word_overlap or 0.0)


def _best_decision(fit: Fit) -> Decision:
    """The grid point with the best balanced accuracy; ties go to the one nearest the
    defaults."""
    truth = [y for _, y in fit]

    def rank(d: Decision) -> tuple[float, float]:
        ba = balanced_accuracy(truth, [_counts(d, x) for x, _ in fit]) or 0.0
        distance = abs(d.support_threshold - DEFAULT_DECISION.support_threshold)
        distance += abs(d.lexical_weight - DEFAULT_DECISION.lexical_weight)
        return ba, -distance

    return max((Decision(t, w) for t in _THRESHOLDS for w in _WEIGHTS), key=rank)


def _scaling_pays(
    raw: Sequence[float],
    held_out: Sequence[float],
    truth: Sequence[bool],
    resamples: int,
    seed: int,
) -> tuple[bool, str]:
    """Scale P(supported) only when the cross-validated Brier score gain (raw minus scaled, on
    held-out folds) has a bootstrap interval above 0: a judge already about as calibrated as a
    few labels can tell keeps its P (a fit on 40 labels otherwise adds its own noise)."""
    gains = [(r - y) ** 2 - (h - y) ** 2 for r, h, y in zip(raw, held_out, truth, strict=True)]

    def mean_gain(idx: Sequence[int]) -> float:
        return sum(gains[i] for i in idx) / len(idx)

    observed = mean_gain(range(len(gains)))
    low, high = bootstrap_interval(mean_gain, len(gains), resamples, seed) or (0.0, 0.0)
    shown = f"cross-validated Brier gain {observed:+.4f} (95% CI [{low:+.4f}, {high:+.4f}])"
    if low > 0:
        return True, f"scaled P(supported): {shown}"
    return False, f"kept P(supported) unscaled: {shown} does not lie above 0"


def _decide(
    fit: Fit, fold_of: Sequence[int], folds: int, resamples: int, seed: int
) -> tuple[bool, Decision, str]:
    tuned = [t > 0.5 for t in _out_of_fold(fold_of, folds, lambda tr: _tuned_predict(fit, tr))]
    default = [_counts(DEFAULT_DECISION, x) for x, _ in fit]
    truth = [y for _, y in fit]

    def gain(idx: Sequence[int]) -> float | None:
        t = [truth[i] for i in idx]
        a = balanced_accuracy(t, [tuned[i] for i in idx])
        b = balanced_accuracy(t, [default[i] for i in idx])
        return None if a is None or b is None else a - b

    observed = gain(range(len(fit))) or 0.0
    low, high = bootstrap_interval(gain, len(fit), resamples, seed) or (0.0, 0.0)
    shown = (
        f"cross-validated balanced accuracy gain {observed:+.3f} (95% CI [{low:+.3f}, {high:+.3f}])"
    )
    if high < 0:
        why = f"{shown} lies below 0: the tuned decision does worse than the defaults"
        return False, DEFAULT_DECISION, f"kept the default decision: {why}"
    if low <= 0:
        return False, DEFAULT_DECISION, f"kept the default decision: {shown} does not exclude 0"
    best = _best_decision(fit)
    return True, best, f"moved the decision: {shown}"


def _agreement(
    pred: Sequence[bool],
    true: Sequence[bool],
    resamples: int,
    seed: int,
) -> Agreement:
    Stat = Callable[[Sequence[bool], Sequence[bool]], float | None]

    def on(stat: Stat) -> Callable[[Sequence[int]], float | None]:
        return lambda idx: stat([true[i] for i in idx], [pred[i] for i in idx])

    return Agreement(
        n=len(pred),
        balanced_accuracy=balanced_accuracy(true, pred),
        balanced_accuracy_ci=bootstrap_interval(on(balanced_accuracy), len(pred), resamples, seed),
        kappa=cohen_kappa(true, pred),
        kappa_ci=bootstrap_interval(on(cohen_kappa), len(pred), resamples, seed),
    )


def _probability_scores(
    p: Sequence[float], true: Sequence[bool], resamples: int, seed: int
) -> dict[str, object]:
    """Brier score and log loss with 95% bootstrap intervals; the debiased ECE and its
    perfectly calibrated yardstick from ``ECE_MIN_LABELS`` labelled claims up."""
    if not p:
        return {}

    def on(
        score: Callable[[Sequence[float], Sequence[bool]], float],
    ) -> Callable[[Sequence[int]], float]:
        return lambda idx: score([p[i] for i in idx], [true[i] for i in idx])

    enough = len(p) >= ECE_MIN_LABELS
    return {
        "brier": brier_score(p, true),
        "brier_ci": bootstrap_interval(on(brier_score), len(p), resamples, seed),
        "log_loss": log_loss(p, true),
        "log_loss_ci": bootstrap_interval(on(log_loss), len(p), resamples, seed),
        "ece": debiased_ece(p, true) if enough else None,
        "ece_calibrated": calibrated_ece(p, seed=seed) if enough else None,
    }
