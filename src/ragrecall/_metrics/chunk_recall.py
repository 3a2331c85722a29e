"""Chunk recall: of the retrieved chunks relevant to the question, how many does the answer reflect?

Context -> answer, in two judged steps that reuse the family's metrics:

1. relevance: ContextPrecision's steps decide, chunk by chunk, which chunks state part of the
   answer to the question (question first, chunk last: the prompt cache reuses the prefix);
2. reflection: ResponseRecall's steps check each relevant chunk, taken as a claim, against the
   response (the response first, identical across chunks; then the chunk), with the same
   evidence checks as ContextRecall.

Two short typed verdicts per relevant chunk, rather than one call asking both: the embedded
1.5B judge answers "does the answer state this?" reliably alone, and not when the same reply
also judges relevance (it then calls nearly every chunk reflected).
"""

from __future__ import annotations

from typing import Literal

from langchain_core.language_models import BaseChatModel

from .._core.results import ChunkRecallResult, ChunkVerdict
from .._core.schemas import Sample, Usage
from .._judge.drive import Steps
from .._judge.resolve import JudgeLike
from .._judge.retry import DEFAULT_TIMEOUT
from .base import Metric
from .chunk_judged import ChunkStrategy, chunk_strategy
from .claims.decompose import ClaimCache
from .context_precision import ContextPrecision
from .response_recall import ResponseRecall

__all__ = ["ChunkRecall"]


class ChunkRecall(Metric[ChunkRecallResult]):
    """Does the answer reflect every retrieved chunk that is relevant to the question?

    Score = relevant chunks reflected in the answer / relevant chunks; 1.0, with the reason,
    when no chunk is relevant (nothing was there to reflect). ``chunks`` gives each chunk's
    verdict (relevant, reflected, the answer's sentence that reflects it, or what is missing);
    ``missing`` lists the relevant chunks the answer leaves out.

    Args:
        judge: a LangChain chat model, a ``"provider:model"`` string, or None for the
            embedded local judge; shared by both steps unless you pass the parts.
        strategy: ``"per_chunk"`` (one call per chunk and step; prompt-cache friendly),
            ``"batched"`` (one call per window and step) or ``"auto"`` (per-chunk for local
            judges, batched for remote APIs).
        relevance: a ready-made ContextPrecision for the relevance step, to replace its
            prompts or settings.
        reflection: a ready-made ResponseRecall for the reflection step, likewise.
    """

    name = "chunk_recall"
    needs = (("user_input",), ("response",), ("retrieved_contexts",))
    result_type = ChunkRecallResult
    cost_parts = frozenset({"chunks"})

    def __init__(
        self,
        judge: JudgeLike = None,
        *,
        strategy: ChunkStrategy | Literal["auto"] = "auto",
        relevance: ContextPrecision | None = None,
        reflection: ResponseRecall | None = None,
        max_retries: int = 3,
        timeout: float = DEFAULT_TIMEOUT,
    ):
        super().__init__(judge, max_retries=max_retries, timeout=timeout)
        self._strategy = chunk_strategy(strategy)
        self._relevance = relevance
        self._reflection = reflection

    @property
    def judge(self) -> BaseChatModel:
        given = self._relevance or self._reflection
        if self._judge_spec is None and given is not None:
            return given.judge
        return super().judge

    @property
    def relevance(self) -> ContextPrecision:
        if self._relevance is None:
            self._relevance = ContextPrecision(self.judge, strategy=self._strategy)
        return self._relevance

    @property
    def reflection(self) -> ResponseRecall:
        if self._reflection is None:
            strategy: Literal["per_claim", "batched", "auto"] = "auto"
            if self._strategy != "auto":
                strategy = "per_claim" if self._strategy == "per_chunk" else "batched"
            # The claims are always given (the chunks): the cache is never consulted.
            self._reflection = ResponseRecall(self.judge, strategy=strategy, cache=ClaimCache())
        return self._reflection

    def _steps(self, sample: Sample, usage: Usage) -> Steps[ChunkRecallResult]:
        question = (sample.user_input or "").strip()
        answer = (sample.response or "").strip()
        if not question:
            return self.unscorable("no question: relevance is judged against it")
        if not answer:
            return self.unscorable("no response to check the chunks against")
        chunks = [c for c in sample.retrieved_contexts if c.text.strip()]
        if not chunks:
            return self._scored([], "no retrieved contexts: nothing to reflect")
        judged = yield from self.relevance._steps(
            sample.model_copy(update={"retrieved_contexts": chunks}), usage
        )
        if judged.score is None:
            return self.unscorable(f"relevance: {judged.reason}")
        relevant = {v.chunk_id for v in judged.chunks if v.relevant}
        texts = [c.text.strip() for c in chunks if c.id in relevant]
        by_text = {}
        if texts:
            as_claims = Sample(user_input=question, response=answer, reference_claims=texts)
            reflected = yield from self.reflection._steps(as_claims, usage)
            if reflected.score is None:
                return self.unscorable(f"reflection: {reflected.reason}")
            by_text = {v.claim: v for v in reflected.verdicts}
        verdicts = []
        for chunk in chunks:
            if chunk.id not in relevant:
                verdicts.append(
                    ChunkVerdict(chunk_id=chunk.id, relevant=False, reason="not relevant")
                )
                continue
            found = by_text[chunk.text.strip()]
            verdicts.append(
                ChunkVerdict(
                    chunk_id=chunk.id,
                    relevant=True,
                    reflected=found.attributed,
                    evidence=found.evidence if found.attributed else None,
                    missing=None if found.attributed else chunk.text.strip(),
                    reason="reflected in the answer" if found.attributed else found.reason,
                )
            )
        return self._scored(verdicts, "")

    def _scored(self, verdicts: list[ChunkVerdict], note: str) -> ChunkRecallResult:
        relevant = [v for v in verdicts if v.relevant]
        if not relevant:
            note = note or "no retrieved chunk is relevant to the question: nothing to reflect"
        return ChunkRecallResult(
            metric=self.name,
            score=sum(bool(v.reflected) for v in relevant) / len(relevant) if relevant else 1.0,
            status="scored",
            reason=note,
            chunks=verdicts,
            missing=[v.missing for v in relevant if v.missing is not None],
        )
