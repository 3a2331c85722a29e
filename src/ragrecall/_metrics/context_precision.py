"""Context precision: how much of what was retrieved is relevant to the question?

ContextPrecision asks the judge, chunk by chunk, whether a retrieved chunk states any part of
the answer to the question (the reference, when given, shows what the answer contains);
precision = relevant / retrieved, with rank-aware average precision alongside.
"""

from __future__ import annotations

from .._core.results import ChunkRelevance, PrecisionResult
from .._core.schemas import Sample, Usage
from .._judge.drive import Steps
from .chunk_judged import ChunkJudgedMetric
from .prompts import (
    PRECISION_BATCHED_PROMPT,
    PRECISION_PROMPT,
    Relevance,
    Relevances,
)

__all__ = ["ContextPrecision", "average_precision"]

_NOT_GIVEN = "(not given)"


class ContextPrecision(ChunkJudgedMetric[PrecisionResult]):
    """How much of what the retriever returned is relevant to the question?

    Score = relevant chunks / retrieved chunks. ``average_precision`` is rank-aware: the mean
    of precision@k over the ranks k of the relevant chunks (0 when none is relevant). Needs
    the question or the reference (both when you have them); unscorable without chunks.

    Args:
        judge: a LangChain chat model, a ``"provider:model"`` string, or None for the
            embedded local judge.
        strategy: ``"per_chunk"``, ``"batched"`` or ``"auto"``, as in ChunkRecall.
        prompt: replaces ``PRECISION_PROMPT``.
        batched_prompt: replaces ``PRECISION_BATCHED_PROMPT``.
        window_tokens: judge window for packing chunks; default from the judge.
        render_passages: replaces ``ragrecall.prompts.render_passages``.
    """

    name = "context_precision"
    needs = (("user_input", "reference"), ("retrieved_contexts",))
    result_type = PrecisionResult
    cost_parts = frozenset({"chunks"})
    reply_schema = Relevance
    batched_schema = Relevances
    default_prompt = PRECISION_PROMPT
    default_batched_prompt = PRECISION_BATCHED_PROMPT

    def _steps(self, sample: Sample, usage: Usage) -> Steps[PrecisionResult]:
        question = (sample.user_input or "").strip()
        reference = (sample.reference or "").strip()
        if not question and not reference:
            return self.unscorable("no question and no reference to judge relevance against")
        chunks = [c for c in sample.retrieved_contexts if c.text.strip()]
        if not chunks:
            return self.unscorable("no retrieved contexts: precision is undefined")
        inputs = {"question": question or _NOT_GIVEN, "reference": reference or _NOT_GIVEN}
        replies = yield from self._judge_chunks(chunks, inputs, usage)
        verdicts = [
            ChunkRelevance(
                chunk_id=chunk.id,
                rank=rank,
                relevant=any(r.relevant for r in replies[rank]),
                reason="relevant" if any(r.relevant for r in replies[rank]) else "not relevant",
            )
            for rank, chunk in enumerate(chunks, start=1)
        ]
        flags = [v.relevant for v in verdicts]
        precision = sum(flags) / len(flags)
        return PrecisionResult(
            metric=self.name,
            score=precision,
            status="scored",
            reason="" if any(flags) else "no retrieved chunk is relevant",
            chunks=verdicts,
            precision=precision,
            average_precision=average_precision(flags),
        )


def average_precision(relevant: list[bool]) -> float:
    """Mean of precision@k over the ranks k that hold a relevant item; 0.0 if there is none."""
    hits, total = 0, 0.0
    for k, flag in enumerate(relevant, start=1):
        if flag:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0
