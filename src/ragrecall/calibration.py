"""Calibrating the verdicts to people's labels: ``read_labels`` (a labelled review CSV),
``calibrate`` (a ``CalibrationProfile`` fitted to them, with its ``Agreement``), and the
``Decision`` a profile holds (support threshold, lexical weight).
"""

import typing as _typing

from ._lazy import lazy as _lazy

# Each public name and the module it lives in, imported on first use.
_EXPORTS: dict[str, str] = {
    "Agreement": "ragrecall._metrics.decision",
    "CalibrationProfile": "ragrecall._metrics.decision",
    "Label": "ragrecall._calibration.labels",
    "calibrate": "ragrecall._calibration.fit",
    "read_labels": "ragrecall._calibration.labels",
    "Decision": "ragrecall._metrics.decision",
}


__getattr__, __dir__ = _lazy(__name__, _EXPORTS)


if _typing.TYPE_CHECKING:
    from ._calibration.fit import calibrate
    from ._calibration.labels import Label, read_labels
    from ._metrics.decision import Agreement, CalibrationProfile, Decision

__all__ = [
    "Agreement",
    "CalibrationProfile",
    "Decision",
    "Label",
    "calibrate",
    "read_labels",
]
