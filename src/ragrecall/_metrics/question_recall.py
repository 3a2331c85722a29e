"""Question recall: the share of the question's sub-questions that the retrieved contexts answer.

Needs no reference. The judge splits the question into the sub-questions a full answer must
cover (one call, cached like claims), then decides for each sub-question, passages first so the
prompt cache reuses them, whether the contexts answer it: with the short answer and the cited
chunk, or with what is missing. Contexts larger than the judge's window are packed into several
windows; a sub-question is answered if any window answers it.

Deprecated: ``Sufficiency`` supersedes it (the same sub-questions, each answer checked in the
passages); constructing it warns, and it is removed in ragrecall 0.3.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable

from .._core.deprecation import superseded
from .._core.results import QuestionRecallResult, SubQuestionVerdict
from .._core.schemas import Sample, Usage
from .._judge.drive import Call, Steps, ask
from .._judge.resolve import JudgeLike, context_window
from .._judge.retry import DEFAULT_TIMEOUT
from .._judge.structured import structured
from .base import Metric, MetricOptions
from .claims.decompose import ClaimCache, metric_claim_cache
from .prompts import (
    ANSWERABLE_PROMPT,
    SUB_QUESTIONS_PROMPT,
    Answerable,
    PassageRenderer,
    render_passages,
)
from .sub_questions import sub_questions, sub_questions_chain
from .text.windows import Window, pack

__all__ = ["QuestionRecall"]

# An answer with its passage and what is missing: a reply past this is a judge that lost its way.
ANSWERABLE_REPLY_TOKENS = 400


class QuestionRecall(Metric[QuestionRecallResult]):
    """Did the retriever bring back what is needed to answer every part of the question?

    Score = sub-questions the contexts answer / sub-questions. No reference needed. ``missing``
    lists the unanswered sub-questions; ``sub_questions`` gives each verdict with the answer
    and cited chunk, or what is missing. No retrieved contexts scores 0.

    Deprecated, removed in ragrecall 0.3: use ``Sufficiency`` (metric name ``sufficiency``),
    which checks each answer in the passages instead of taking the judge's word. Constructing
    it warns.

    Args:
        judge: a LangChain chat model, a ``"provider:model"`` string, or None for the
            embedded local judge.
        cache: where sub-questions are cached (default: the cache claims share);
            ``cache_path`` makes a new one persisted in that SQLite file.
        window_tokens: judge window for packing contexts; default from the judge.
        render_passages: how passages are shown to the judge (default
            ``ragrecall.prompts.render_passages``; see ``ragrecall.prompts``).
        decompose_prompt: replaces ``SUB_QUESTIONS_PROMPT``.
        answer_prompt: replaces ``ANSWERABLE_PROMPT``.
    """

    name = "question_recall"
    needs = (("user_input",), ("retrieved_contexts",))
    result_type = QuestionRecallResult
    cost_parts = frozenset({"sub_questions"})

    def __init__(
        self,
        judge: JudgeLike = None,
        *,
        cache: ClaimCache | None = None,
        cache_path: str | Path | None = None,
        window_tokens: int | None = None,
        decompose_prompt: ChatPromptTemplate = SUB_QUESTIONS_PROMPT,
        answer_prompt: ChatPromptTemplate = ANSWERABLE_PROMPT,
        render_passages: PassageRenderer = render_passages,
        max_retries: int = 3,
        timeout: float = DEFAULT_TIMEOUT,
    ):
        superseded("QuestionRecall", "Sufficiency (metric name 'sufficiency')")
        super().__init__(judge, max_retries=max_retries, timeout=timeout)
        self.cache = metric_claim_cache(cache, cache_path)
        self.window_tokens = window_tokens
        self.decompose_prompt = decompose_prompt
        self.answer_prompt = answer_prompt
        self.render_passages = render_passages
        self._chains: dict[str, Runnable[Any, Any]] = {}

    @classmethod
    def from_options(cls, judge: JudgeLike, options: MetricOptions) -> QuestionRecall:
        return cls(judge, cache=options.claim_cache, **options.policy())

    def _chain(self, kind: str) -> Runnable[Any, Any]:
        if kind not in self._chains:
            if kind == "decompose":
                chain = sub_questions_chain(self.judge, self.decompose_prompt)
            else:
                cap = ANSWERABLE_REPLY_TOKENS
                chain = self.answer_prompt | structured(self.judge, Answerable, max_tokens=cap)
            self._chains[kind] = chain
        return self._chains[kind]

    def _steps(self, sample: Sample, usage: Usage) -> Steps[QuestionRecallResult]:
        question = (sample.user_input or "").strip()
        if not question:
            return self.unscorable("no question to split into sub-questions")
        subs, note = yield from sub_questions(
            question,
            chain=self._chain("decompose"),
            prompt=self.decompose_prompt,
            cache=self.cache,
            judge_id=self.judge_id(),
            usage=usage,
        )
        chunks = [c for c in sample.retrieved_contexts if c.text.strip()]
        if not chunks:
            verdicts = [
                SubQuestionVerdict(question=q, answerable=False, reason="no retrieved contexts")
                for q in subs
            ]
            return self._scored(verdicts, "no retrieved contexts")
        found: dict[int, SubQuestionVerdict] = {}
        for window in pack(chunks, self.window_tokens or context_window(self.judge)):
            passages = self.render_passages(window)
            for i, sub in enumerate(subs):
                if i in found and found[i].answerable:
                    continue
                call = Call(self._chain("answer"), {"passages": passages, "question": sub})
                reply = yield from ask(call, usage)
                assert isinstance(reply.parsed, Answerable)
                verdict = _verdict(sub, reply.parsed, window)
                if i not in found or verdict.answerable:
                    found[i] = verdict
        return self._scored([found[i] for i in range(len(subs))], note)

    def _scored(self, verdicts: list[SubQuestionVerdict], note: str) -> QuestionRecallResult:
        return QuestionRecallResult(
            metric=self.name,
            score=sum(v.answerable for v in verdicts) / len(verdicts),
            status="scored",
            reason=note,
            sub_questions=verdicts,
            missing=[v.question for v in verdicts if not v.answerable],
        )


def _verdict(question: str, parsed: Answerable, window: Window) -> SubQuestionVerdict:
    if not parsed.answerable:
        return SubQuestionVerdict(
            question=question,
            answerable=False,
            missing=parsed.missing.strip() or None,
            reason="the contexts do not answer it",
        )
    cited = [p.chunk.id for p in window if p.number == parsed.passage]
    note = "" if cited else f"; the judge cited no valid passage ({parsed.passage})"
    return SubQuestionVerdict(
        question=question,
        answerable=True,
        chunk_ids=cited[:1],
        answer=parsed.answer.strip() or None,
        reason="answered" + note,
    )
