"""People's labels of whole answers applied to one run, as ``evaluate(labels=)`` and
``ragrecall eval --labels`` both apply them: read and checked before any judge call, the
labelled records and the judge's scores kept as the records come (memory bounded by the
labels, not the run), each labelled metric's mean corrected when the run ends."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .._running.engines.base import Identity
from .._running.store import Record
from .answers import LabelSource, read_answer_labels
from .corrected import CorrectedMean, check_answers, corrected_mean
from .labels import Label

__all__ = ["Correction"]


class Correction:
    """``labels`` (a labels file, a ``Label``, or a list of them) for the run of ``samples``
    (each sample's identity); ``metrics``: the metrics' names when known before the run (a
    label of another metric is then refused at once). SampleError for labels that cannot
    correct this run. ``add`` listens to the run's records; ``means`` corrects after it."""

    def __init__(
        self,
        labels: LabelSource | Sequence[LabelSource],
        samples: Sequence[Identity],
        metrics: Sequence[str] | None = None,
    ):
        sources = [labels] if isinstance(labels, (str, Path, Label)) else list(labels)
        self.answers, self.other_labels = read_answer_labels(sources)
        self.samples = list(samples)
        check_answers(self.answers, self.samples, metrics, self.other_labels)
        self._present = set(self.samples)
        self._wanted = {(x.key, x.occurrence, x.content) for x in self.answers}
        self.labelled: list[Record] = []  # the records of labelled answers
        self.scores: dict[str, list[float]] = {}  # per metric, every scored answer's score

    def add(self, record: Record) -> None:
        """Keep the judge's scores of ``record`` (one of the run's samples), and the record
        itself when people labelled its answer."""
        if (record.id, record.content) not in self._present:
            return
        for name in record.results:
            score = record.score(name)
            if score is not None:
                self.scores.setdefault(name, []).append(score)
        if (record.key, record.occurrence, record.content) in self._wanted:
            self.labelled.append(record)

    def means(self, metrics: Sequence[str]) -> dict[str, CorrectedMean]:
        """Each labelled metric of ``metrics`` (the run's) with its mean corrected by the
        labels. SampleError when no label is of these metrics, or an answer was labelled
        against other claims than the run scored."""
        labelled = [n for n in metrics if any(x.metric == n for x in self.answers)]
        if not labelled:
            check_answers(self.answers, self.samples, metrics)
        return {
            name: corrected_mean(
                self.labelled,
                self.answers,
                name,
                judge_all=self.scores.get(name, []),
                other_labels=self.other_labels,
            )
            for name in labelled
        }
