"""Calibrating the judge to a person: the verdicts picked for review and the labelling page
(``review``), the labels read back (``labels``), and the profile fitted to them (``fit``; the
profile itself, which the metrics apply, lives in ``_metrics.decision``)."""

from .._metrics.decision import Agreement, CalibrationProfile
from .fit import calibrate
from .labels import Label, read_labels

__all__ = ["Agreement", "CalibrationProfile", "Label", "calibrate", "read_labels"]
