"""Paired statistics in plain Python (no scipy), public for your own comparisons.

A seeded percentile-bootstrap confidence interval for a mean, a paired sign-flip permutation
test (exact up to 16 non-zero differences, Monte Carlo beyond), and the Wilcoxon signed-rank
test (exact distribution up to 50 non-zero differences, normal approximation with tie
correction beyond). For reading a non-significant comparison: the paired effect size
(Cohen's d_z), the smallest p-value the exact sign-flip test can reach, and the minimum
detectable mean difference (normal approximation). For agreement with people's labels:
balanced accuracy, Cohen's kappa, the expected calibration error of a probability (plain, and
debiased beside what a perfectly calibrated judge would show), the Brier score and log loss,
Platt's fit of a probability to labels (``platt``: what ``calibrate`` scales by), and EM for a
shift in the share of positives (Saerens et al. 2002). For a judge's own uncertainty:
the interval of a share of uncertain items, independent (the Poisson-binomial distribution) or
correlated (one latent factor), and split-conformal intervals from labelled answers. For a judge's
bias: prediction-powered inference (PPI++), a dataset's mean recall, or a paired difference,
corrected by people's labels on a random few answers, with an interval; and Student's t
quantile it uses.
"""

import typing as _typing

from ._core.lazy import lazy as _lazy

# Each public name and the module it lives in, imported on first use.
_EXPORTS: dict[str, str] = {
    "balanced_accuracy": "ragrecall._stats.agreement",
    "cohen_kappa": "ragrecall._stats.agreement",
    "expected_calibration_error": "ragrecall._stats.agreement",
    "ECE_MIN_LABELS": "ragrecall._stats.calibration",
    "PriorShift": "ragrecall._stats.calibration",
    "brier_score": "ragrecall._stats.calibration",
    "calibrated_ece": "ragrecall._stats.calibration",
    "debiased_ece": "ragrecall._stats.calibration",
    "log_loss": "ragrecall._stats.calibration",
    "prior_shift": "ragrecall._stats.calibration",
    "CLAIM_CORRELATION": "ragrecall._stats.intervals",
    "CONFORMAL_MIN_LABELS": "ragrecall._stats.intervals",
    "conformal_interval": "ragrecall._stats.intervals",
    "conformal_radius": "ragrecall._stats.intervals",
    "share_interval": "ragrecall._stats.intervals",
    "minimum_detectable_difference": "ragrecall._stats.power",
    "paired_effect_size": "ragrecall._stats.power",
    "smallest_p_value": "ragrecall._stats.power",
    "platt": "ragrecall._stats.platt",
    "PPI_MIN_LABELS": "ragrecall._stats.ppi",
    "PPIResult": "ragrecall._stats.ppi",
    "ppi_difference": "ragrecall._stats.ppi",
    "ppi_mean": "ragrecall._stats.ppi",
    "t_quantile": "ragrecall._stats.ppi",
    "WilcoxonResult": "ragrecall._stats.tests",
    "bootstrap_ci": "ragrecall._stats.tests",
    "mean": "ragrecall._stats.tests",
    "ranks": "ragrecall._stats.tests",
    "sign_flip_test": "ragrecall._stats.tests",
    "wilcoxon_signed_rank": "ragrecall._stats.tests",
}


__getattr__, __dir__ = _lazy(__name__, _EXPORTS)


if _typing.TYPE_CHECKING:
    from ._stats.agreement import balanced_accuracy, cohen_kappa, expected_calibration_error
    from ._stats.calibration import (
        ECE_MIN_LABELS,
        PriorShift,
        brier_score,
        calibrated_ece,
        debiased_ece,
        log_loss,
        prior_shift,
    )
    from ._stats.intervals import (
        CLAIM_CORRELATION,
        CONFORMAL_MIN_LABELS,
        conformal_interval,
        conformal_radius,
        share_interval,
    )
    from ._stats.platt import platt
    from ._stats.power import minimum_detectable_difference, paired_effect_size, smallest_p_value
    from ._stats.ppi import PPI_MIN_LABELS, PPIResult, ppi_difference, ppi_mean, t_quantile
    from ._stats.tests import (
        WilcoxonResult,
        bootstrap_ci,
        mean,
        ranks,
        sign_flip_test,
        wilcoxon_signed_rank,
    )

__all__ = [
    "CLAIM_CORRELATION",
    "CONFORMAL_MIN_LABELS",
    "ECE_MIN_LABELS",
    "PPI_MIN_LABELS",
    "PPIResult",
    "PriorShift",
    "WilcoxonResult",
    "balanced_accuracy",
    "bootstrap_ci",
    "brier_score",
    "calibrated_ece",
    "cohen_kappa",
    "conformal_interval",
    "conformal_radius",
    "debiased_ece",
    "expected_calibration_error",
    "log_loss",
    "mean",
    "minimum_detectable_difference",
    "paired_effect_size",
    "platt",
    "ppi_difference",
    "ppi_mean",
    "prior_shift",
    "ranks",
    "share_interval",
    "sign_flip_test",
    "smallest_p_value",
    "t_quantile",
    "wilcoxon_signed_rank",
]
