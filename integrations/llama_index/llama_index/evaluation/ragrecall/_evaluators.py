"""ragrecall metrics as LlamaIndex evaluators.

``RecallEvaluator(metric)`` turns any ragrecall ``Metric`` into a ``BaseEvaluator``; the named
classes (``ContextRecallEvaluator``, ...) build their metric from a judge, one for each metric
of ragrecall's list that takes one (``ragrecall.engines.metric_classes``).
``evaluate_response`` keeps the node ids, scores and metadata of ``response.source_nodes``;
``aevaluate`` also takes plain context strings, so ``BatchEvalRunner`` works unchanged. An
unscorable sample is a value: ``invalid_result=True`` and ``invalid_reason``, never an
exception.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
from llama_index.core.prompts.mixin import PromptDictType
from pydantic import Field, SerializeAsAny, ValidationError

from ragrecall import Chunk, Metric, RecallResult, Sample
from ragrecall.engines import metric_classes

from ._judge import EvaluatorJudge, as_judge
from ._nodes import chunks_from_nodes, response_text, source_nodes

__all__ = [
    "ChunkRecallEvaluator",
    "ContextPrecisionEvaluator",
    "ContextRecallEvaluator",
    "QuestionRecallEvaluator",
    "RecallEvaluationResult",
    "RecallEvaluator",
    "RecallPrecisionEvaluator",
    "ResponseRecallEvaluator",
    "SufficiencyEvaluator",
]

# Keyword arguments of ``evaluate``/``aevaluate`` that become Sample fields; others are ignored,
# as LlamaIndex evaluators ignore what they do not use.
_SAMPLE_KWARGS = ("reference", "reference_claims", "retrieved_ids", "reference_ids")


class RecallEvaluationResult(EvaluationResult):
    """An ``EvaluationResult`` that also carries ragrecall's full result."""

    recall: SerializeAsAny[RecallResult] | None = Field(
        default=None,
        description="ragrecall's result: claims, per-claim verdicts with chunk ids and quotes.",
    )


class RecallEvaluator(BaseEvaluator):
    """Any ragrecall metric as a LlamaIndex evaluator.

    Args:
        metric: a ragrecall metric, e.g. ``ContextRecall(judge=...)``.
        min_score: ``passing`` is ``score >= min_score`` (the one name of the minimum score
            everywhere; ``passing_score`` and ``threshold`` are its deprecated names).

    The reference answer comes as ``reference=`` (as for ``CorrectnessEvaluator``); known
    claims as ``reference_claims=``, and ids as ``retrieved_ids=`` / ``reference_ids=``.
    """

    def __init__(
        self,
        metric: Metric[RecallResult],
        *,
        min_score: float = 0.5,
        passing_score: float | None = None,
        threshold: float | None = None,
    ) -> None:
        for old, value in (("passing_score", passing_score), ("threshold", threshold)):
            if value is not None:
                warnings.warn(
                    f"{old}= is deprecated and will be removed in 0.3; use min_score=",
                    DeprecationWarning,
                    stacklevel=2,
                )
                min_score = value
        if not 0.0 <= min_score <= 1.0:
            raise ValueError(f"min_score must be in [0, 1], not {min_score}")
        self._metric = metric
        self.min_score = min_score

    @property
    def passing_score(self) -> float:
        """Deprecated: ``min_score``."""
        return self.min_score

    @property
    def metric(self) -> Metric[RecallResult]:
        return self._metric

    def _get_prompts(self) -> PromptDictType:
        """ragrecall's prompts are LangChain templates set on the metric, not here."""
        return {}

    def _update_prompts(self, prompts_dict: PromptDictType) -> None:
        if prompts_dict:
            raise ValueError(
                f"{type(self).__name__} has no LlamaIndex prompts; pass ragrecall prompts to the "
                "metric, e.g. ContextRecall(decompose_prompt=..., attribution_prompt=...)"
            )

    def evaluate(
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Sequence[str | Chunk] | None = None,
        **kwargs: Any,
    ) -> RecallEvaluationResult:
        """Score one sample; ``contexts`` are strings or ragrecall Chunks, best first."""
        sample = self._sample(query, response, contexts, kwargs)
        if isinstance(sample, RecallEvaluationResult):
            return sample
        return self._result(sample, self._metric.score(sample))

    async def aevaluate(
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Sequence[str | Chunk] | None = None,
        **kwargs: Any,
    ) -> RecallEvaluationResult:
        """Async ``evaluate``.

        The metric runs its blocking path in a worker thread: LlamaIndex runs each sync call on
        a fresh event loop (``asyncio_run``), and a judge's async HTTP client must not outlive
        the loop it was first used on.
        """
        sample = self._sample(query, response, contexts, kwargs)
        if isinstance(sample, RecallEvaluationResult):
            return sample
        return self._result(sample, await asyncio.to_thread(self._metric.score, sample))

    def evaluate_response(
        self, query: str | None = None, response: Any = None, **kwargs: Any
    ) -> RecallEvaluationResult:
        """Score a query engine's ``Response``: its text and its ``source_nodes``."""
        return self.evaluate(query, response_text(response), _node_chunks(response), **kwargs)

    async def aevaluate_response(
        self, query: str | None = None, response: Any = None, **kwargs: Any
    ) -> RecallEvaluationResult:
        """Async ``evaluate_response``."""
        return await self.aevaluate(
            query, response_text(response), _node_chunks(response), **kwargs
        )

    def _sample(
        self,
        query: str | None,
        response: str | None,
        contexts: Sequence[str | Chunk] | None,
        kwargs: Mapping[str, Any],
    ) -> Sample | RecallEvaluationResult:
        """The Sample, or an invalid result saying which input is wrong."""
        fields: dict[str, Any] = {k: kwargs[k] for k in _SAMPLE_KWARGS if k in kwargs}
        fields.update(user_input=query, response=response)
        if contexts is not None:
            fields["retrieved_contexts"] = list(contexts)
            if "retrieved_ids" not in fields and all(isinstance(c, Chunk) for c in contexts):
                fields["retrieved_ids"] = [c.id for c in contexts if isinstance(c, Chunk)]
        try:
            return Sample.model_validate(fields)
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            return RecallEvaluationResult(
                query=query,
                response=response,
                contexts=[c.text if isinstance(c, Chunk) else str(c) for c in contexts or []],
                invalid_result=True,
                invalid_reason=f"invalid input: {where}: {first['msg']}",
            )

    def _result(self, sample: Sample, result: RecallResult) -> RecallEvaluationResult:
        common: dict[str, Any] = {
            "query": sample.user_input,
            "response": sample.response,
            "contexts": [c.text for c in sample.retrieved_contexts],
            "recall": result,
        }
        if result.score is None:
            return RecallEvaluationResult(
                **common, invalid_result=True, invalid_reason=result.reason, feedback=result.reason
            )
        return RecallEvaluationResult(
            **common,
            score=result.score,
            passing=result.score >= self.min_score,
            feedback=feedback(result),
        )


def feedback(result: RecallResult) -> str:
    """A short report: the score (claims supported, where the metric has claims), a note,
    then what is missing."""
    if result.claims:
        supported = len(result.claims) - len(result.missing)
        lines = [f"{supported}/{len(result.claims)} claims supported."]
    else:
        lines = [f"Score {result.score:.2f}."]
    if result.reason:
        lines.append(f"Note: {result.reason}.")
    if result.missing:
        lines.append("Missing:")
        lines.extend(f"- {item}" for item in result.missing)
    return "\n".join(lines)


def _node_chunks(response: Any) -> list[Chunk] | None:
    nodes = source_nodes(response)
    return chunks_from_nodes(nodes) if nodes is not None else None


class _NamedEvaluator(RecallEvaluator):
    """An evaluator for the ragrecall metric ``metric_class``, built from a judge.

    Args:
        judge: a LangChain chat model, a LlamaIndex LLM (e.g. ``Settings.llm``), a
            ``"provider:model"`` string, or None for the embedded local judge.
        min_score: ``passing`` is ``score >= min_score``.
        **metric_kwargs: passed to the metric's constructor.
    """

    metric_class: ClassVar[type[Metric[RecallResult]]]

    def __init__(
        self,
        judge: EvaluatorJudge = None,
        *,
        min_score: float = 0.5,
        passing_score: float | None = None,
        threshold: float | None = None,
        **metric_kwargs: Any,
    ) -> None:
        metric = self.metric_class(judge=as_judge(judge), **metric_kwargs)
        super().__init__(
            metric, min_score=min_score, passing_score=passing_score, threshold=threshold
        )


def _named(metric: type[Metric[RecallResult]]) -> type[_NamedEvaluator]:
    """The evaluator class of ``metric``, named ``<Metric>Evaluator``."""
    name = f"{metric.__name__}Evaluator"
    summary = (metric.__doc__ or "").strip().split("\n", 1)[0]
    doc = f"ragrecall's ``{metric.__name__}`` as a LlamaIndex evaluator. {summary}".strip()
    body = {"metric_class": metric, "__doc__": doc, "__module__": __name__, "__qualname__": name}
    return type(name, (_NamedEvaluator,), body)


# An evaluator for each of ragrecall's built-in metrics that takes a judge, made from its list
# of metrics: a metric added there has its evaluator here, by class name.
EVALUATORS: dict[str, type[_NamedEvaluator]] = {
    evaluator.__name__: evaluator
    for evaluator in (_named(cls) for cls in metric_classes() if cls.uses_judge)
}

if TYPE_CHECKING:  # the evaluators this package names in __all__, for type checkers

    class ChunkRecallEvaluator(_NamedEvaluator): ...

    class ContextPrecisionEvaluator(_NamedEvaluator): ...

    class ContextRecallEvaluator(_NamedEvaluator): ...

    class QuestionRecallEvaluator(_NamedEvaluator): ...

    class RecallPrecisionEvaluator(_NamedEvaluator): ...

    class ResponseRecallEvaluator(_NamedEvaluator): ...

    class SufficiencyEvaluator(_NamedEvaluator): ...


def __getattr__(name: str) -> type[_NamedEvaluator]:
    try:
        return EVALUATORS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
