"""Run a dataset's questions through a query engine and score what it retrieved."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.base.base_query_engine import BaseQueryEngine

import ragrecall
from ragrecall import ContextRecall, EvaluationReport, Metric, RecallResult, Sample, Usage
from ragrecall.adapters import blocking

from ._judge import EvaluatorJudge, as_judge
from ._nodes import chunks_from_nodes, response_text, source_nodes

__all__ = ["aevaluate_query_engine", "evaluate_query_engine"]

DEFAULT_QUERY_CONCURRENCY = 4


async def aevaluate_query_engine(
    query_engine: BaseQueryEngine,
    dataset: Any,
    metrics: Sequence[Metric[RecallResult]] | None = None,
    *,
    judge: EvaluatorJudge = None,
    concurrency: int | None = None,
    column_map: Mapping[str, str] | None = None,
    max_retries: int | None = None,
    timeout: float | None = None,
    show_progress: bool | None = None,
) -> EvaluationReport:
    """Ask the engine each question and score its source nodes.

    ``dataset``: anything ``ragrecall.load_samples`` reads (dicts with ``query``/``user_input``
    and ``reference``, Samples, a DataFrame, a file path). Each sample gets the engine's
    answer as ``response`` and its source nodes, best first, as chunks carrying node id,
    score, rank and metadata. ``metrics`` default to ``[ContextRecall(judge=judge)]``, where
    ``judge`` is what an evaluator's ``judge=`` takes (a LlamaIndex LLM such as
    ``Settings.llm``, a LangChain chat model, ``"provider:model"``, or None for the embedded
    judge); metrics you give carry their own judges, so ``judge`` with ``metrics`` is refused.
    ``concurrency``
    bounds both the queries (default 4) and the scoring (default: ragrecall's). A question
    the engine fails on is unscorable in every metric, with the error as its reason.
    ``max_retries`` and ``timeout`` override the metrics' own when given.
    ``evaluate_query_engine`` is the blocking twin (it works inside notebooks too).
    """
    if metrics and judge is not None:
        raise ValueError(
            "evaluate_query_engine: give judge= or metrics=, not both (a metric carries its "
            "own judge: metrics=[ContextRecall(judge=...)])"
        )
    start = time.perf_counter()
    samples = ragrecall.load_samples(dataset, column_map)
    metrics = list(metrics) if metrics else [ContextRecall(judge=as_judge(judge))]
    answered = await _answer(query_engine, samples, concurrency)
    ok = [a for a in answered if isinstance(a, Sample)]
    report = None
    if ok:
        report = await ragrecall.aevaluate(
            ok,
            metrics,
            concurrency=concurrency,
            max_retries=max_retries,
            timeout=timeout,
            show_progress=show_progress,
        )
    return _merge(samples, answered, metrics, report, start)


evaluate_query_engine = blocking(aevaluate_query_engine)
evaluate_query_engine.__name__ = evaluate_query_engine.__qualname__ = "evaluate_query_engine"


async def _answer(
    query_engine: BaseQueryEngine, samples: Sequence[Sample], concurrency: int | None
) -> list[Sample | str]:
    """Each sample with the engine's answer and source nodes, or why there are none."""
    limit = asyncio.Semaphore(concurrency or DEFAULT_QUERY_CONCURRENCY)

    async def ask(sample: Sample) -> Sample | str:
        if not sample.user_input:
            return "the sample has no question"
        async with limit:
            try:
                response = await query_engine.aquery(sample.user_input)
            except Exception as exc:
                return f"query failed: {type(exc).__name__}: {exc}"
        chunks = chunks_from_nodes(source_nodes(response) or [])
        return sample.model_copy(
            update={
                "retrieved_contexts": chunks,
                "retrieved_ids": [c.id for c in chunks],
                "response": response_text(response),
            }
        )

    return list(await asyncio.gather(*(ask(s) for s in samples)))


def _merge(
    samples: Sequence[Sample],
    answered: Sequence[Sample | str],
    metrics: Sequence[Metric[RecallResult]],
    report: EvaluationReport | None,
    start: float,
) -> EvaluationReport:
    """One report over every sample: the scored ones from ``report``, the others unscorable."""
    results: dict[str, list[RecallResult]] = {m.name: [] for m in metrics}
    scored = 0
    for item in answered:
        for metric in metrics:
            if isinstance(item, str):
                results[metric.name].append(metric.unscorable(item))
            elif report is not None:
                results[metric.name].append(report.results[metric.name][scored])
        scored += isinstance(item, Sample)
    return EvaluationReport(
        samples=[a if isinstance(a, Sample) else s for a, s in zip(answered, samples, strict=True)],
        results=results,
        usage=report.usage if report is not None else Usage(),
        elapsed_s=time.perf_counter() - start,
    )
