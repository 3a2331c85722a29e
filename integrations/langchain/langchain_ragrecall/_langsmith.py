"""A LangSmith evaluator: context recall of the documents a traced run retrieved.

``langsmith.evaluate(target, data=..., evaluators=[RecallEvaluator()])``: the contexts are the
documents of the run's retriever child runs (outermost ones: a retriever inside a retriever,
as in ``RecallRetriever``, is not counted twice), the question comes from the example's inputs
and the reference from its outputs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from langchain_core.documents import Document
from langsmith.schemas import Example, Run

from ragrecall import ContextRecall, Metric, RecallResult, Sample

from ._documents import documents_to_chunks, to_document

__all__ = ["RecallEvaluator"]

_QUESTION_KEYS = ("question", "query", "input", "user_input")
_REFERENCE_KEYS = ("reference", "answer", "ground_truth", "output", "expected")


class RecallEvaluator:
    """``(run, example) -> {"key", "score", "comment"}`` for ``langsmith.evaluate``.

    Args:
        metric: default ``ContextRecall()`` (the embedded judge).
        question_key: the example input holding the question; default the first of
            question/query/input/user_input, or the only string input.
        reference_key: the example output holding the reference; default the first of
            reference/answer/ground_truth/output/expected, or the only string output.
        key: the feedback key; default the metric's name.

    The comment lists the missing claims; an unscorable result has score None and its reason
    as the comment.
    """

    def __init__(
        self,
        metric: Metric[RecallResult] | None = None,
        *,
        question_key: str | None = None,
        reference_key: str | None = None,
        key: str | None = None,
    ):
        self.metric = metric or ContextRecall()
        self.question_key = question_key
        self.reference_key = reference_key
        self.key = key or self.metric.name
        self.__name__ = self.key  # langsmith names the evaluator after it

    def __call__(self, run: Run, example: Example | None = None) -> dict[str, Any]:
        result = self.metric.score(self.sample(run, example))
        return self._feedback(result)

    async def acall(self, run: Run, example: Example | None = None) -> dict[str, Any]:
        """Async ``__call__`` (for ``langsmith.aevaluate``)."""
        return self._feedback(await self.metric.ascore(self.sample(run, example)))

    def sample(self, run: Run, example: Example | None) -> Sample:
        """The sample this evaluator scores for ``run`` and ``example``."""
        retrievals = list(retriever_runs(run))
        question = _pick(example.inputs if example else None, self.question_key, _QUESTION_KEYS)
        if question is None and retrievals:
            question = _text((retrievals[0].inputs or {}).get("query"))
        reference = _pick(example.outputs if example else None, self.reference_key, _REFERENCE_KEYS)
        documents = [doc for r in retrievals for doc in _documents(r)]
        return Sample(
            user_input=question,
            reference=reference,
            retrieved_contexts=documents_to_chunks(documents),
        )

    def _feedback(self, result: RecallResult) -> dict[str, Any]:
        if result.status == "unscorable":
            return {"key": self.key, "score": None, "comment": result.reason}
        if result.missing:
            comment = "missing: " + json.dumps(result.missing, ensure_ascii=False)
        else:
            comment = f"all {len(result.claims)} claims supported"
        return {"key": self.key, "score": result.score, "comment": comment}


def retriever_runs(run: Run) -> Iterator[Run]:
    """The outermost retriever runs in ``run``'s tree (``run`` itself included), in order."""
    if run.run_type == "retriever":
        yield run
        return
    for child in sorted(run.child_runs or [], key=lambda r: (r.start_time, r.dotted_order or "")):
        yield from retriever_runs(child)


def _documents(run: Run) -> list[Document]:
    outputs = run.outputs or {}
    docs = outputs.get("documents", outputs.get("output", []))
    if not isinstance(docs, Sequence) or isinstance(docs, (str, bytes)):
        return []
    return [to_document(d) for d in docs if isinstance(d, (Document, Mapping))]


def _pick(values: Mapping[str, Any] | None, key: str | None, keys: Sequence[str]) -> str | None:
    if not values:
        return None
    if key is not None:
        return _text(values.get(key))
    for name in keys:
        if name in values:
            return _text(values[name])
    strings = [v for v in values.values() if isinstance(v, str)]
    return strings[0] if len(strings) == 1 else None


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    content = getattr(value, "content", None)  # a message
    return content if isinstance(content, str) else str(value)
