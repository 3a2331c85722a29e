"""Fit the judge to a person's labels: ``calibrate(labels)`` -> ``CalibrationProfile``.

Two things are fitted, each only as far as the labels bear it out:

- a Platt scaling of P(supported), ``sigmoid(a * logit(p) + b)``, so that the confidence a
  verdict reports matches how often such verdicts are right (expected calibration error,
  measured on held-out folds);
- the decision (``support_threshold``, ``lexical_weight``), moved from ContextRecall's defaults
  only when cross-validation shows a gain in balanced accuracy whose bootstrap interval lies
  above zero; otherwise the defaults stay and the profile says why.

Agreement with the person, before and after, is balanced accuracy and Cohen's kappa with
seeded bootstrap intervals. A profile names the judge (``Metric.judge_id()``) and prompt
version it was fitted for; applying it to another is refused (``CalibrationError``).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import random
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ._csv_cells import read_cell
from ._errors import CalibrationError, SampleError
from ._metrics.attribution import DEFAULT_DECISION, Decision
from ._safe_io import lines, loads, regular_file
from .prompts import PROMPT_VERSION
from .stats import balanced_accuracy, cohen_kappa, expected_calibration_error

__all__ = [
    "Agreement",
    "CalibrationError",
    "CalibrationProfile",
    "Label",
    "calibrate",
    "read_labels",
]

MIN_LABELS = 20  # fewer labelled verdicts with P(supported): the defaults stay
_THRESHOLDS = [round(0.05 * i, 2) for i in range(1, 20)]
_WEIGHTS = [round(0.1 * i, 1) for i in range(7)]
_EPS = 1e-6


class Label(BaseModel):
    """A person's label of one verdict (a line of the review page's export, or a CSV row).
    Numbers are range-checked: a probability or overlap outside [0, 1], NaN or infinity is
    refused, so that one bad row cannot move the fit."""

    key: str = Field(description="The sample's key in the results file.")
    occurrence: int = Field(1, ge=0)
    claim: str
    label: Literal["supported", "not_supported", "skip"]
    pick: str = Field("random", description="uncertain, random or unscorable (pick_for_review).")
    attributed: bool | None = Field(None, description="The judge's verdict (None: unscorable).")
    p_supported: float | None = Field(None, ge=0.0, le=1.0, allow_inf_nan=False)
    word_overlap: float | None = Field(None, ge=0.0, le=1.0, allow_inf_nan=False)
    judge: str = ""
    prompt_version: str = PROMPT_VERSION
    sample_id: str | None = None


class Agreement(BaseModel):
    """How often the judge's verdicts agree with the person's labels."""

    model_config = ConfigDict(strict=True)  # a profile file is checked field by field

    n: int = Field(ge=0, description="Labelled verdicts compared (skips left out).")
    balanced_accuracy: float | None
    balanced_accuracy_ci: tuple[float, float] | None
    kappa: float | None = Field(description="Cohen's kappa.")
    kappa_ci: tuple[float, float] | None
    ece: float | None = Field(
        None, description="Expected calibration error of P(supported) (10 equal-width bins)."
    )


class CalibrationProfile(BaseModel):
    """What ``calibrate`` fitted, for one judge and prompt version. Every field is checked
    when a profile is read: its type (no number as text, no 0 or 1 as a flag), range and
    finiteness; a missing field is refused."""

    model_config = ConfigDict(strict=True)

    judge: str = Field(description="Metric.judge_id() of the judge the labels were made on.")
    prompt_version: str
    scale_a: float = Field(
        ge=0.0,
        allow_inf_nan=False,
        description="Platt slope on logit(P(supported)); 0: P(supported) says nothing.",
    )
    scale_b: float = Field(allow_inf_nan=False, description="Platt intercept.")
    support_threshold: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)
    lexical_weight: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)
    labels: int = Field(ge=0, description="Labelled verdicts (skips left out).")
    moved: bool = Field(description="The decision moved from the defaults.")
    note: str = Field("", description="Why the decision moved or stayed.")
    agreement: dict[str, Agreement] = Field(
        default_factory=dict,
        description="before / after over every label (after: held-out folds); before_random / "
        "after_random over the random share only (unbiased picks; after_random applies the "
        "fitted decision to labels it was fitted on).",
    )

    @property
    def id(self) -> str:
        """A digest of the fitted numbers: results record it (``RecallResult.calibration``)."""
        fitted = [self.judge, self.prompt_version, self.scale_a, self.scale_b]
        fitted += [self.support_threshold, self.lexical_weight]
        return hashlib.sha256(json.dumps(fitted).encode()).hexdigest()[:16]

    @property
    def decision(self) -> Decision:
        return Decision(self.support_threshold, self.lexical_weight)

    def scale(self, p: float) -> float:
        """P(supported) calibrated."""
        return _sigmoid(self.scale_a * _logit(p) + self.scale_b)

    def check(self, judge: str, prompt_version: str = PROMPT_VERSION) -> None:
        """Raise CalibrationError unless the profile was made for this judge and prompts."""
        if judge != self.judge:
            raise CalibrationError(
                f"the calibration profile was fitted for judge {self.judge!r}, not {judge!r}; "
                "label this judge's verdicts (ragrecall review) and calibrate again"
            )
        if prompt_version != self.prompt_version:
            raise CalibrationError(
                f"the calibration profile was fitted for prompt version {self.prompt_version!r}, "
                f"not {prompt_version!r}; label and calibrate again"
            )

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> CalibrationProfile:
        """Read a profile file; a file that is not one raises CalibrationError naming it."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise CalibrationError(f"{path}: cannot read the calibration profile: {err}") from err
        try:
            return cls.model_validate_json(text)
        except ValidationError as err:
            raise CalibrationError(
                f"{path}: not a ragrecall calibration profile: {field_errors(err)}"
            ) from err


def read_labels(path: str | Path) -> list[Label]:
    """Labels from the review page's JSONL export or the review CSV (its ``label`` column:
    supported, not_supported, skip; blank is skip). Bad rows raise SampleError naming the file,
    line and field."""
    path = Path(path)
    regular_file(path, "labels file")
    with path.open("rb") as f:
        rows = _csv_labels(f, path) if path.suffix.lower() == ".csv" else _jsonl_labels(f, path)
        labels: list[Label] = []
        for n, row in rows:
            try:
                labels.append(Label.model_validate(row))
            except ValidationError as err:
                message = f"not a label: {field_errors(err)}"
                raise SampleError(message, file=str(path), line=n) from err
    return labels


def _jsonl_labels(f: IO[bytes], path: Path) -> Iterator[tuple[int, Any]]:
    for n, raw in lines(f, path):
        try:
            if raw.strip():
                yield n, loads(raw.decode("utf-8-sig" if n == 1 else "utf-8"))
        except json.JSONDecodeError as err:
            raise SampleError(f"not JSON: {err.msg}", file=str(path), line=n) from err
        except UnicodeDecodeError as err:
            raise SampleError(f"not UTF-8: {err.reason}", file=str(path), line=n) from err


def _csv_labels(f: IO[bytes], path: Path) -> Iterator[tuple[int, Any]]:
    reader = csv.DictReader(io.TextIOWrapper(f, encoding="utf-8-sig", newline=""))
    try:
        for row in reader:
            yield reader.line_num, _csv_row(row)
    except csv.Error as err:
        raise SampleError(f"unreadable CSV: {err}", file=str(path), line=reader.line_num) from err
    except UnicodeDecodeError as err:
        raise SampleError(f"not UTF-8: {err.reason}", file=str(path), line=reader.line_num) from err


def field_errors(err: ValidationError) -> str:
    """Pydantic's errors, one clause each: ``field 'scale_a': Input should be greater than 0``
    (a missing field: ``field 'scale_b': Field required``)."""
    return "; ".join(
        f"field {'.'.join(str(part) for part in e['loc']) or '(whole)'!r}: {e['msg']}"
        + ("" if e["type"] == "missing" else f" (got {_shown(e.get('input'))})")
        for e in err.errors()
    )


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _csv_row(row: dict[str, str]) -> dict[str, Any]:
    value: dict[str, Any] = {
        k: read_cell(v) for k, v in row.items() if k is not None and isinstance(v, str) and v
    }
    label = (row.get("label") or "skip").strip().lower().replace(" ", "_")
    value["label"] = {"yes": "supported", "y": "supported", "no": "not_supported"}.get(
        label, {"n": "not_supported"}.get(label, label)
    )
    if "attributed" in value:
        value["attributed"] = value["attributed"].strip().lower() == "true"
    return value


def calibrate(
    labels: str | Path | Sequence[Label],
    *,
    folds: int = 5,
    seed: int = 0,
    resamples: int = 2000,
) -> CalibrationProfile:
    """Fit a calibration profile to a person's labels (a labels file or ``Label`` list).

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

    def agreement(
        pred: Sequence[bool], true: Sequence[bool], p: Sequence[float] | None
    ) -> Agreement:
        return _agreement(pred, true, p, resamples, seed)

    before_p = [x.p_supported or 0.0 for x, _ in fit]
    fit_truth = [y for _, y in fit]
    agreement_before = agreement(
        [bool(x.attributed) for x in said], said_truth, before_p if fit else None
    )
    a, b = 1.0, 0.0
    after_p: list[float] | None = None
    moved, note = False, ""
    decision = DEFAULT_DECISION
    if len(fit) < MIN_LABELS or len(set(fit_truth)) < 2:
        note = (
            f"kept the defaults: {len(fit)} labelled verdicts with P(supported) "
            f"(at least {MIN_LABELS} of both labels are needed)"
        )
    else:
        a, b = _platt([p for p in before_p], fit_truth)
        after_p = _out_of_fold(fold_of, folds, lambda train: _platt_predict(fit, train))
        moved, decision, note = _decide(fit, fold_of, folds, resamples, seed)
    if moved:
        tuned = _out_of_fold(fold_of, folds, lambda train: _tuned_predict(fit, train))
        agreement_after = agreement([t > 0.5 for t in tuned], fit_truth, after_p)
    else:
        ece = expected_calibration_error(after_p, fit_truth) if after_p else None
        agreement_after = agreement_before.model_copy(
            update={"ece": ece if after_p else agreement_before.ece}
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
        agreement={"before": agreement_before, "after": agreement_after},
    )
    randoms = [x for x in said if x.pick == "random"]
    if randoms:
        true = [x.label == "supported" for x in randoms]
        profile.agreement["before_random"] = agreement(
            [bool(x.attributed) for x in randoms], true, None
        )
        counted = [
            profile.decision.counts(x.p_supported, x.word_overlap or 0.0)
            if x.p_supported is not None
            else bool(x.attributed)
            for x in randoms
        ]
        profile.agreement["after_random"] = agreement(counted, true, None)
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
    a, b = _platt([fit[i][0].p_supported or 0.0 for i in train], [fit[i][1] for i in train])
    return lambda i: _sigmoid(a * _logit(fit[i][0].p_supported or 0.0) + b)


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
    low, high = _bootstrap(gain, len(fit), resamples, seed) or (0.0, 0.0)
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
    p: Sequence[float] | None,
    resamples: int,
    seed: int,
) -> Agreement:
    Stat = Callable[[Sequence[bool], Sequence[bool]], float | None]

    def on(stat: Stat) -> Callable[[Sequence[int]], float | None]:
        return lambda idx: stat([true[i] for i in idx], [pred[i] for i in idx])

    return Agreement(
        n=len(pred),
        balanced_accuracy=balanced_accuracy(true, pred),
        balanced_accuracy_ci=_bootstrap(on(balanced_accuracy), len(pred), resamples, seed),
        kappa=cohen_kappa(true, pred),
        kappa_ci=_bootstrap(on(cohen_kappa), len(pred), resamples, seed),
        ece=expected_calibration_error(p, true) if p is not None and len(p) == len(true) else None,
    )


def _bootstrap(
    stat: Callable[[Sequence[int]], float | None], n: int, resamples: int, seed: int
) -> tuple[float, float] | None:
    """Seeded percentile 95% interval of ``stat`` over resampled item indices."""
    if n < 2:
        return None
    rng = random.Random(seed)
    values = sorted(
        v for v in (stat(rng.choices(range(n), k=n)) for _ in range(resamples)) if v is not None
    )
    if len(values) < resamples // 2:
        return None
    return values[int(0.025 * (len(values) - 1))], values[int(0.975 * (len(values) - 1))]


def _logit(p: float) -> float:
    p = min(max(p, _EPS), 1 - _EPS)
    return math.log(p / (1 - p))


def _sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))


def _platt(p: Sequence[float], true: Sequence[bool]) -> tuple[float, float]:
    """Platt's fit of ``sigmoid(a * logit(p) + b)`` (his smoothed targets), by damped Newton
    steps, with a small ridge on the slope's distance from 1. The slope is never negative: where
    the best fit would reverse the judge's order, the slope is 0 and every verdict gets the base
    rate (P(supported) carries no information about these labels)."""
    positives = sum(true)
    negatives = len(true) - positives
    hi, lo = (positives + 1) / (positives + 2), 1 / (negatives + 2)
    xs = [_logit(v) for v in p]
    ys = [hi if t else lo for t in true]
    ridge = 1e-2

    def loss(a: float, b: float) -> float:
        total = ridge * (a - 1) ** 2 / 2
        for x, y in zip(xs, ys, strict=True):
            z = a * x + b
            # log(1 + e^z) - y z, computed stably
            total += max(z, 0) + math.log1p(math.exp(-abs(z))) - y * z
        return total

    a, b = 1.0, 0.0
    current = loss(a, b)
    for _ in range(100):
        ga, gb = ridge * (a - 1), 0.0
        haa, hab, hbb = ridge, 0.0, 1e-9
        for x, y in zip(xs, ys, strict=True):
            q = _sigmoid(a * x + b)
            ga += (q - y) * x
            gb += q - y
            w = q * (1 - q)
            haa += w * x * x
            hab += w * x
            hbb += w
        det = haa * hbb - hab * hab
        if det <= 0:
            break
        da = (hbb * ga - hab * gb) / det
        db = (haa * gb - hab * ga) / det
        step = 1.0
        while step > 1e-6 and loss(a - step * da, b - step * db) > current:
            step /= 2
        a, b = a - step * da, b - step * db
        previous, current = current, loss(a, b)
        if previous - current < 1e-12:
            break
    if a < 0:  # never reverse the judge's order: P(supported) then says nothing (the base rate)
        mean = sum(ys) / len(ys)
        return 0.0, math.log(mean / (1 - mean))
    return a, b
