"""Context precision (how much of what was retrieved is relevant) and its pairing with recall.

ContextPrecision asks the judge, chunk by chunk, whether a retrieved chunk states any part of
the answer to the question (the reference, when given, shows what the answer contains);
precision = relevant / retrieved, with rank-aware average precision alongside. The question
and reference come first and the chunk last, so the judge's prompt cache reuses the prefix
across chunks; for remote judges the chunks of one window go in a single batched call, checked
for one verdict per passage in order and falling back to per-chunk calls when it is not. That
per-chunk machinery (``ChunkJudgedMetric``) is reusable for other questions about chunks.

RecallPrecision runs ContextRecall and ContextPrecision on the same sample, through their own
steps, and reports precision, recall and F1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable
from pydantic import BaseModel

from .._errors import JudgeError
from .._judge.drive import DEFAULT_TIMEOUT, Call, Steps, ask
from .._judge.resolve import JudgeLike, context_window, is_local
from .._judge.structured import structured
from .._schemas import (
    Chunk,
    ChunkRelevance,
    PrecisionResult,
    RecallPrecisionResult,
    Sample,
    Usage,
)
from ..prompts import (
    PRECISION_BATCHED_PROMPT,
    PRECISION_PROMPT,
    PassageRenderer,
    Relevance,
    Relevances,
    render_passages,
)
from .attribution import Strategy, Window, estimate_tokens, pack
from .base import Metric, MetricOptions, R
from .claims import ClaimCache, ClaimMode
from .context_recall import ContextRecall

__all__ = [
    "ChunkJudgedMetric",
    "ChunkStrategy",
    "ContextPrecision",
    "RecallPrecision",
    "average_precision",
]

ChunkStrategy = Literal["per_chunk", "batched"]


def chunk_strategy(value: str) -> ChunkStrategy | Literal["auto"]:
    """``value`` checked as a per-chunk metric's strategy."""
    if value not in ("auto", "per_chunk", "batched"):
        raise ValueError(f"strategy must be 'auto', 'per_chunk' or 'batched', not {value!r}")
    return value  # type: ignore[return-value]


_NOT_GIVEN = "(not given)"


class ChunkJudgedMetric(Metric[R]):
    """A metric that asks the judge one typed question about each retrieved chunk.

    Subclasses set the four class attributes and call ``_judge_chunks``; prompts given to the
    constructor replace the defaults (same input variables, same reply schema).
    """

    reply_schema: ClassVar[type[BaseModel]]
    batched_schema: ClassVar[type[BaseModel]]
    default_prompt: ClassVar[ChatPromptTemplate]
    default_batched_prompt: ClassVar[ChatPromptTemplate]

    def __init__(
        self,
        judge: JudgeLike = None,
        *,
        strategy: ChunkStrategy | Literal["auto"] = "auto",
        prompt: ChatPromptTemplate | None = None,
        batched_prompt: ChatPromptTemplate | None = None,
        window_tokens: int | None = None,
        render_passages: PassageRenderer = render_passages,
        max_retries: int = 3,
        timeout: float = DEFAULT_TIMEOUT,
    ):
        super().__init__(judge, max_retries=max_retries, timeout=timeout)
        self._strategy = chunk_strategy(strategy)
        self.prompt = prompt or self.default_prompt
        self.batched_prompt = batched_prompt or self.default_batched_prompt
        self.window_tokens = window_tokens
        self.render_passages = render_passages
        self._chains: dict[str, Runnable[Any, Any]] = {}

    @property
    def strategy(self) -> ChunkStrategy:
        """``per_chunk`` for local judges (prompt cache), ``batched`` for remote APIs."""
        if self._strategy != "auto":
            return self._strategy

        return "per_chunk" if is_local(self.judge) else "batched"

    def _chain(self, kind: ChunkStrategy) -> Runnable[Any, Any]:
        if kind not in self._chains:
            if kind == "batched":
                chain = self.batched_prompt | structured(self.judge, self.batched_schema)
            else:
                chain = self.prompt | structured(self.judge, self.reply_schema)
            self._chains[kind] = chain
        return self._chains[kind]

    def _judge_chunks(
        self, chunks: Sequence[Chunk], inputs: Mapping[str, str], usage: Usage
    ) -> Steps[dict[int, list[Any]]]:
        """Replies by chunk number (1-based position in ``chunks``), one per part of the chunk
        (a chunk larger than the judge's window is judged in parts)."""
        fixed = estimate_tokens(" ".join(inputs.values()))
        windows = pack(chunks, (self.window_tokens or context_window(self.judge)) - fixed)
        replies: dict[int, list[Any]] = {}
        for window in windows:
            found: list[Any] | None = None
            if self.strategy == "batched":
                try:
                    found = yield from self._batched(window, inputs, usage)
                except JudgeError:
                    found = None
            if found is None:
                found = []
                for passage in window:
                    passage_text = self.render_passages([passage])
                    call = Call(self._chain("per_chunk"), {**inputs, "passage": passage_text})
                    reply = yield from ask(call, usage)
                    found.append(reply.parsed)
            for passage, parsed in zip(window, found, strict=True):
                replies.setdefault(passage.number, []).append(parsed)
        return replies

    def _batched(self, window: Window, inputs: Mapping[str, str], usage: Usage) -> Steps[list[Any]]:
        expected = [p.number for p in window]

        def check(parsed: Any) -> None:
            numbers = [v.passage for v in parsed.verdicts]
            if numbers != expected:
                raise JudgeError(
                    f"expected verdicts for passages {expected} in order, got passages {numbers}"
                )

        call = Call(self._chain("batched"), {**inputs, "passages": self.render_passages(window)})
        reply = yield from ask(call, usage, check)
        parsed: Any = reply.parsed
        return list(parsed.verdicts)


class ContextPrecision(ChunkJudgedMetric[PrecisionResult]):
    """How much of what the retriever returned is relevant to the question?

    Score = relevant chunks / retrieved chunks. ``average_precision`` is rank-aware: the mean
    of precision@k over the ranks k of the relevant chunks (0 when none is relevant). Needs
    the question or the reference (both when you have them); unscorable without chunks.

    Args:
        judge: a LangChain chat model, a ``"provider:model"`` string, or None for the
            embedded local judge.
        strategy: ``"per_chunk"``, ``"batched"`` or ``"auto"``, as in ChunkRecall.
        prompt, batched_prompt: replace ``PRECISION_PROMPT`` / ``PRECISION_BATCHED_PROMPT``.
        window_tokens: judge window for packing chunks; default from the judge.
        render_passages: how passages are shown to the judge (default
            ``ragrecall.prompts.render_passages``; see ``ragrecall.prompts``).
    """

    name = "context_precision"
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


class RecallPrecision(Metric[RecallPrecisionResult]):
    """Recall and precision of the retrieved contexts in one report; score = their F1.

    Runs ContextRecall (claims of the reference supported by the chunks) and ContextPrecision
    (chunks relevant to the question) on the same sample, through their own steps, sharing one
    judge and one usage count. ``missing`` lists the unsupported claims. A sample one of them
    cannot score is unscorable, except that an empty retrieval scores 0 (recall is 0, so F1 is
    0 whatever precision would be).

    Args:
        judge: shared by both parts (built on first use) unless you pass the parts.
        claims, strategy, cache: passed to the ContextRecall it builds (strategy ``"auto"``
            also picks ContextPrecision's).
        recall, precision: ready-made parts, to configure them fully.
    """

    name = "recall_precision"
    result_type = RecallPrecisionResult
    cost_parts = frozenset({"claims", "chunks"})

    def __init__(
        self,
        judge: JudgeLike = None,
        claims: ClaimMode = "atomic",
        *,
        strategy: Strategy | Literal["auto"] = "auto",
        cache: ClaimCache | None = None,
        cache_path: str | Path | None = None,
        recall: ContextRecall | None = None,
        precision: ContextPrecision | None = None,
        max_retries: int = 3,
        timeout: float = DEFAULT_TIMEOUT,
    ):
        super().__init__(judge, max_retries=max_retries, timeout=timeout)
        self._recall = recall
        self._precision = precision
        self._claims = claims
        self._strategy = strategy
        self._cache = cache
        self._cache_path = cache_path

    @classmethod
    def from_options(cls, judge: JudgeLike, options: MetricOptions) -> RecallPrecision:
        extra: dict[str, Any] = {} if options.timeout is None else {"timeout": options.timeout}
        strategy: Strategy | Literal["auto"] = (
            "batched" if options.strategy == "batched" else "auto"
        )
        return cls(judge, options.claims, strategy=strategy, **extra)

    @property
    def judge(self) -> BaseChatModel:
        given = self._recall or self._precision
        if self._judge_spec is None and given is not None:
            return given.judge
        return super().judge

    @property
    def recall(self) -> ContextRecall:
        if self._recall is None:
            self._recall = ContextRecall(
                self.judge,
                self._claims,
                strategy=self._strategy,
                cache=self._cache,
                cache_path=self._cache_path,
            )
        return self._recall

    @property
    def precision(self) -> ContextPrecision:
        if self._precision is None:
            strategy: ChunkStrategy | Literal["auto"] = "auto"
            if self._strategy != "auto":
                strategy = "per_chunk" if self._strategy == "per_claim" else "batched"
            self._precision = ContextPrecision(self.judge, strategy=strategy)
        return self._precision

    def _steps(self, sample: Sample, usage: Usage) -> Steps[RecallPrecisionResult]:
        recall = yield from self.recall._steps(sample, usage)
        if recall.score is None:
            return self.unscorable(f"recall: {recall.reason}")
        detail: dict[str, Any] = {
            "recall": recall.score,
            "claims": recall.claims,
            "verdicts": recall.verdicts,
            "missing": recall.missing,
        }
        if not any(c.text.strip() for c in sample.retrieved_contexts):
            return RecallPrecisionResult(
                metric=self.name,
                score=0.0,
                status="scored",
                reason="no retrieved contexts: recall is 0, precision undefined, F1 0",
                f1=0.0,
                **detail,
            )
        precision = yield from self.precision._steps(sample, usage)
        if precision.score is None:
            return self.unscorable(f"precision: {precision.reason}", **detail)
        p, r = precision.score, recall.score
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        return RecallPrecisionResult(
            metric=self.name,
            score=f1,
            status="scored",
            reason="; ".join(x for x in (recall.reason, precision.reason) if x),
            precision=p,
            average_precision=precision.average_precision,
            f1=f1,
            chunks=precision.chunks,
            **detail,
        )
