"""Labels of whole answers (``ragrecall review --answers``), read back as answers.

Every claim of a picked answer carries ``pick: "answer"``, its place in the answer
(``claim_index``) and the answer's claim count (``answer_claims``). An answer is complete when
each of its claims is labelled supported or not_supported; its human recall is then the
supported share. An incomplete answer (a claim skipped or missing) is refused, naming the file
and line of its first label: leaving out the answers people found hard would make the labelled
ones no longer a random sample, and the correction biased. (``calibrate`` reads every claim
label, complete answer or not.) Labels of single claims (the uncertain and random picks) are
counted and left to ``calibrate``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .._core.errors import SampleError
from .corrected import AnswerLabel
from .labels import Label, read_label_rows

__all__ = ["LabelSource", "answer_labels", "read_answer_labels"]

LabelSource = str | Path | Label


def read_answer_labels(sources: Sequence[LabelSource]) -> tuple[list[AnswerLabel], int]:
    """The whole answers labelled in ``sources`` (labels files, or ``Label`` objects), and
    how many other labels (single claims) they hold. SampleError naming the file and line
    (``labels[i]`` for objects) of a bad row, of an incomplete answer, or of two labels of one
    claim that disagree."""
    rows: list[tuple[str, Label]] = []
    for n, source in enumerate(sources):
        if isinstance(source, Label):
            rows.append((f"labels[{n}]", source))
        else:
            rows += [(f"{source}:{line}", label) for line, label in read_label_rows(source)]
    return answer_labels(rows)


def answer_labels(rows: Sequence[tuple[str, Label]]) -> tuple[list[AnswerLabel], int]:
    """Whole answers from ``(where, label)`` rows; see ``read_answer_labels``."""
    groups: dict[tuple[str, str, int, str], list[tuple[str, Label]]] = {}
    other = 0
    for where, label in rows:
        if label.pick != "answer":
            other += 1
            continue
        missing = [
            name
            for name in ("content", "claim_index", "answer_claims")
            if getattr(label, name) is None
        ]
        if missing:
            raise SampleError(
                f"{where}: a label of a whole answer (pick 'answer') needs field "
                f"{missing[0]!r}: export the labels from a page of ragrecall review --answers"
            )
        ident = (label.metric, label.key, label.occurrence, label.content or "")
        groups.setdefault(ident, []).append((where, label))
    return [_answer(ident, group) for ident, group in groups.items()], other


def _answer(ident: tuple[str, str, int, str], group: list[tuple[str, Label]]) -> AnswerLabel:
    first_where, first = group[0]
    size = first.answer_claims or 0
    said: dict[int, tuple[str, str]] = {}
    for where, label in group:
        index = label.claim_index if label.claim_index is not None else -1
        if label.answer_claims != size or label.claim_set != first.claim_set:
            raise SampleError(
                f"{where}: this label's answer has {label.answer_claims} claims (claim set "
                f"{label.claim_set}), but {first_where} says {size} ({first.claim_set}): "
                "labels of two versions of one answer"
            )
        if index >= size:
            raise SampleError(
                f"{where}: field 'claim_index' is {index}, but the answer has {size} claims"
            )
        if index in said and said[index][1] != label.label:
            raise SampleError(
                f"{where}: claim {index} of this answer is labelled {label.label}, but "
                f"{said[index][0]} labels it {said[index][1]}"
            )
        said[index] = (where, label.label)
    decided = [v for _, v in said.values() if v != "skip"]
    if len(decided) < size:
        skipped = len(said) - len(decided)
        raise SampleError(
            f"{first_where}: an incomplete answer (sample key {first.key}, claim "
            f"{first.claim!r}): {len(decided)} of its {size} claims labelled ({skipped} "
            f"skipped, {size - len(said)} missing); label every claim of a picked answer: "
            "answers left out for being hard would bias the correction"
        )
    supported = sum(v == "supported" for v in decided)
    for where, label in group:
        if label.human_recall is not None and abs(label.human_recall - supported / size) > 1e-9:
            raise SampleError(
                f"{where}: field 'human_recall' is {label.human_recall}, but the answer's "
                f"labels give {supported}/{size}"
            )
    metric, key, occurrence, content = ident
    return AnswerLabel(
        metric=metric,
        key=key,
        occurrence=occurrence,
        content=content,
        task=first.task,
        claim_set=first.claim_set,
        supported=supported,
        claims=size,
        where=first_where,
    )
