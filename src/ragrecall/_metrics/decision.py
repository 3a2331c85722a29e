"""How a verdict becomes a decision: ``Decision`` (P(supported) mixed with the word check,
against a threshold), ContextRecall's defaults, and the ``CalibrationProfile`` that
``calibrate`` fits to a person's labels and a metric applies. The metrics read these; the
fitting itself (``_calibration``) imports them, never the other way round.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._core.errors import CalibrationError
from .._io.safe import field_errors
from .._stats.platt import logit, sigmoid
from .prompts import PROMPT_VERSION

__all__ = [
    "DEFAULT_DECISION",
    "SCALE_LIMIT",
    "UNCERTAIN_MARGIN",
    "Agreement",
    "CalibrationProfile",
    "Decision",
]


@dataclass(frozen=True)
class Decision:
    """How P(supported) and the word check decide a claim (see the module docstring)."""

    support_threshold: float
    lexical_weight: float

    def counts(self, p_supported: float, overlap: float) -> bool:
        """``(1 - lexical_weight) * P(supported) + lexical_weight * overlap`` reaches
        ``support_threshold``."""
        return self.margin(p_supported, overlap) >= 0

    def margin(self, p_supported: float, overlap: float) -> float:
        """How far the mix of P(supported) and the word check lies above the threshold."""
        w = self.lexical_weight
        return (1 - w) * p_supported + w * overlap - self.support_threshold


# A claim whose mix lies this close to the threshold is marked uncertain: a person should check.
UNCERTAIN_MARGIN = 0.1

# ContextRecall's defaults; a calibration profile moves them only when labels show a gain.
DEFAULT_DECISION = Decision(support_threshold=0.55, lexical_weight=0.3)


class Agreement(BaseModel):
    """How often the judge's verdicts agree with the person's labels."""

    model_config = ConfigDict(strict=True)  # a profile file is checked field by field

    n: int = Field(ge=0, description="Labelled verdicts compared (skips left out).")
    balanced_accuracy: float | None
    balanced_accuracy_ci: tuple[float, float] | None
    kappa: float | None = Field(description="Cohen's kappa.")
    kappa_ci: tuple[float, float] | None
    ece: float | None = Field(
        None,
        description="Calibration error of P(supported): debiased, 10 equal-width bins "
        "(ragrecall.stats.debiased_ece); None below 100 labelled claims. Older profiles "
        "hold the plain ECE here.",
    )
    ece_calibrated: tuple[float, float] | None = Field(
        None,
        description="The debiased ECE a perfectly calibrated judge shows at the same "
        "probabilities (simulated): its mean and 90th percentile, the yardstick for ``ece``.",
    )
    brier: float | None = Field(None, description="Brier score of P(supported) (lower: better).")
    brier_ci: tuple[float, float] | None = None
    log_loss: float | None = Field(None, description="Log loss of P(supported), natural log.")
    log_loss_ci: tuple[float, float] | None = None


# The largest |scale_a| and |scale_b| a profile may hold. Platt's fit (_stats/platt.py) keeps the
# slope near 1 (a ridge of 1e-2 on its distance from 1, and Platt's smoothed targets cap how far
# it is pushed), and |logit P| <= 13.8 (P clipped at 1e-6), so the intercept stays within about
# 13.8 times the slope: the steepest fits found in simulation (100 to 3000 labels split exactly
# at P = 0.5, every P within 0.01 of it) had slopes of 42 to 217, realistic ones lie near (1, 0),
# and a prior shift moves the intercept by at most 27.6. Past 1000 (a P change of 1e-4 near 0.5
# moving the scaled P from 0.45 to 0.55) the file was not written by calibrate; 1e308 would
# make the scaled log-odds overflow to NaN. A slope of exactly 0 is a fit: where the labels run
# against the judge's order, calibrate gives every P the labels' base rate.
SCALE_LIMIT = 1000.0


class CalibrationProfile(BaseModel):
    """What ``calibrate`` fitted, for one judge and prompt version. Every field is checked
    when a profile is read: its type (no number as text, no 0 or 1 as a flag), range and
    finiteness; a missing field is refused."""

    model_config = ConfigDict(strict=True)

    judge: str = Field(description="Metric.judge_id() of the judge the labels were made on.")
    prompt_version: str
    scale_a: float = Field(
        ge=0.0,
        le=SCALE_LIMIT,
        allow_inf_nan=False,
        description="Platt slope on logit(P(supported)); 0: P(supported) says nothing.",
    )
    scale_b: float = Field(
        ge=-SCALE_LIMIT, le=SCALE_LIMIT, allow_inf_nan=False, description="Platt intercept."
    )
    support_threshold: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)
    lexical_weight: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)
    labels: int = Field(ge=0, description="Labelled verdicts (skips left out).")
    moved: bool = Field(description="The decision moved from the defaults.")
    note: str = Field("", description="Why the decision moved or stayed.")
    labels_prior: float | None = Field(
        None, ge=0.0, le=1.0, description="Share of supported claims in the labels fitted on."
    )
    data_prior: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="With a prior-shift correction: the share of supported claims EM found in "
        "the data the profile is for; scale_b then includes logit(data_prior) - "
        "logit(labels_prior).",
    )
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
        return sigmoid(self.scale_a * logit(p) + self.scale_b)

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
        """Read a profile file (UTF-8, a byte order mark allowed); a file that is not one
        raises CalibrationError naming it."""
        try:
            text = Path(path).read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as err:
            raise CalibrationError(f"{path}: cannot read the calibration profile: {err}") from err
        try:
            return cls.model_validate_json(text)
        except ValidationError as err:
            raise CalibrationError(
                f"{path}: not a ragrecall calibration profile: {field_errors(err)}"
            ) from err
