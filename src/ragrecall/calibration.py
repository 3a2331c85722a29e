"""Calibrating the verdicts to people's labels: ``read_labels`` (a labelled review CSV), the
``CalibrationProfile`` that ``ragrecall.calibrate`` fits to them, with its ``Agreement``, and the
``Decision`` a profile holds (support threshold, lexical weight). People's labels of whole
answers (``read_answer_labels``, each an ``AnswerLabel``) correct a run's mean
(``CorrectedMean``, ``evaluate(..., labels=...)``) and two runs' difference
(``CorrectedDifference``, ``ragrecall compare --labels``).
"""

import typing as _typing

from ._core.lazy import lazy as _lazy

# Each public name and the module it lives in, imported on first use.
_EXPORTS: dict[str, str] = {
    "Agreement": "ragrecall._metrics.decision",
    "AnswerLabel": "ragrecall._analysis.corrected",
    "CorrectedDifference": "ragrecall._analysis.corrected",
    "CorrectedMean": "ragrecall._analysis.corrected",
    "read_answer_labels": "ragrecall._analysis.answers",
    "CalibrationProfile": "ragrecall._metrics.decision",
    "Label": "ragrecall._analysis.labels",
    "read_labels": "ragrecall._analysis.labels",
    "Decision": "ragrecall._metrics.decision",
}


# calibrate's one public home is the top level (ragrecall.calibrate).
__getattr__, __dir__ = _lazy(__name__, _EXPORTS, moved={"calibrate": "ragrecall"})


if _typing.TYPE_CHECKING:
    from ._analysis.answers import read_answer_labels
    from ._analysis.corrected import AnswerLabel, CorrectedDifference, CorrectedMean
    from ._analysis.labels import Label, read_labels
    from ._metrics.decision import Agreement, CalibrationProfile, Decision

__all__ = [
    "Agreement",
    "AnswerLabel",
    "CalibrationProfile",
    "CorrectedDifference",
    "CorrectedMean",
    "Decision",
    "Label",
    "read_answer_labels",
    "read_labels",
]
