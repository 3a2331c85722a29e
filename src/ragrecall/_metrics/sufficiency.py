"""Sufficiency: do the retrieved contexts answer every part of the question? No reference.

One concern over 300 lines: a sub-question's verdict, from the judge's answer to the checks
that bear it out.

The judge splits the question into sub-questions (cached, as QuestionRecall does). For each,
in one call with the passages first so the prompt cache reuses them, the judge says whether
one passage states the answer and gives the words that answer it; where it gives logprobs,
P(answerable) is read from its verdict's token and decides against ``answered_threshold``. A
sub-question counts as answered only when the library finds those words, verbatim, in the
passages; words that only repeat the question, that lack what it asks for (no time for
"when", no quantity for "how many": ``text/answer_type.py``), or that address the judge, do
not count. The judge's word alone never buys an answer.

In a conversation (a sample with ``history``) the judge first makes the question stand alone
(``standalone.py``), and a sub-question this turn's contexts leave open may be answered by an
earlier turn's (``credit_history``): the conversation already holds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable

from .._core.results import SubQuestionVerdict, SufficiencyResult
from .._core.schemas import Sample, Turn, Usage
from .._judge.drive import Call, Steps, ask
from .._judge.resolve import JudgeLike, context_window
from .._judge.retry import DEFAULT_TIMEOUT
from .._judge.structured import structured
from .base import Metric, MetricOptions
from .claims.decompose import ClaimCache, metric_claim_cache
from .prompts import (
    STANDALONE_PROMPT,
    SUB_QUESTIONS_PROMPT,
    SUFFICIENCY_PROMPT,
    AnswerSpan,
    PassageRenderer,
    render_passages,
)
from .standalone import HISTORY_TURNS, standalone, standalone_chain
from .sub_questions import sub_questions, sub_questions_chain
from .text.answer_type import lacks_answer_type
from .text.windows import Window, pack
from .text.words import content_words, passages_quoting
from .verdicts.decide import p_true
from .verdicts.grounding import evidence_refusal
from .verdicts.quarantine import cleared, suspects

__all__ = ["DEFAULT_ANSWERED_THRESHOLD", "Sufficiency"]

# P(answerable) at or above which a judge's verdict counts (then checked): the best balanced
# accuracy on 120 dev rows of four answerability sets with the embedded judge (0.650; 0.575 at
# 0.5), and not lower on the held-out rows (benchmarks/RESULTS.md).
DEFAULT_ANSWERED_THRESHOLD = 0.75
# An answer and the span that holds it: a reply past this is a judge that lost its way (cut, it
# fails to parse and is asked again once, as any invalid reply). The judge's own limit, where
# set, is kept.
ANSWER_REPLY_TOKENS = 400


class Sufficiency(Metric[SufficiencyResult]):
    """Do the retrieved contexts hold what is needed to answer every part of the question?

    Score = sub-questions answered with checked evidence / sub-questions; no reference needed,
    so it scores live traffic. ``missing`` lists the unanswered sub-questions; each verdict in
    ``sub_questions`` gives the answer's words and the chunk they were found in, or why not;
    ``p_sufficient`` is the mean P(answerable), a graded score for ranking retrievals. No
    retrieved contexts scores 0. Supersedes QuestionRecall, whose verdicts take the judge's
    word.

    Args:
        judge: a LangChain chat model, a ``"provider:model"`` string, or None for the
            embedded local judge.
        answered_threshold: where the judge gives logprobs (the embedded judge, llama.cpp,
            OpenAI's), a sub-question is taken as answered (and its answer then checked) when
            P(answerable), read from the verdict's token, reaches this; without logprobs the
            judge's true or false decides. The default, 0.75, is fitted on dev rows of public
            answerability sets with the embedded judge: a strict default, under which an
            answerable verdict is seldom wrong and an unanswered one often is (held out: 94 %
            of insufficient retrievals called so, 40 % of sufficient ones).
        cache: where sub-questions are cached (default: the cache claims share);
            ``cache_path`` makes a new one persisted in that SQLite file.
        window_tokens: judge window for packing contexts; default from the judge.
        decompose_prompt: replaces ``ragrecall.prompts.SUB_QUESTIONS_PROMPT``.
        prompt: replaces ``ragrecall.prompts.SUFFICIENCY_PROMPT`` (keep its variables and its
            reply schema ``AnswerSpan``).
        render_passages: how passages are shown to the judge.
        credit_history: in a conversation (a sample with ``history``), a sub-question this
            turn's contexts leave open counts as answered when one of the last
            ``HISTORY_TURNS`` turns' retrieved contexts answers it (checked the same way; the
            verdict's ``turn`` names that turn). False scores this turn's retrieval alone.
        standalone_prompt: replaces ``ragrecall.prompts.STANDALONE_PROMPT`` (keep its
            variables ``history`` and ``question`` and its reply schema
            ``StandaloneQuestion``).
        max_retries: retries of a failed judge call.
        timeout: seconds per judge call.
    """

    name = "sufficiency"
    needs = (("user_input",), ("retrieved_contexts",))
    result_type = SufficiencyResult
    cost_parts = frozenset({"sub_questions", "standalone"})

    def __init__(
        self,
        judge: JudgeLike = None,
        *,
        answered_threshold: float = DEFAULT_ANSWERED_THRESHOLD,
        cache: ClaimCache | None = None,
        cache_path: str | Path | None = None,
        window_tokens: int | None = None,
        decompose_prompt: ChatPromptTemplate = SUB_QUESTIONS_PROMPT,
        prompt: ChatPromptTemplate = SUFFICIENCY_PROMPT,
        render_passages: PassageRenderer = render_passages,
        credit_history: bool = True,
        standalone_prompt: ChatPromptTemplate = STANDALONE_PROMPT,
        max_retries: int = 3,
        timeout: float = DEFAULT_TIMEOUT,
    ):
        super().__init__(judge, max_retries=max_retries, timeout=timeout)
        if not 0.0 <= answered_threshold <= 1.0:
            raise ValueError(f"answered_threshold must be in [0, 1], got {answered_threshold}")
        self.cache = metric_claim_cache(cache, cache_path)
        self.answered_threshold = answered_threshold
        self.window_tokens = window_tokens
        self.decompose_prompt = decompose_prompt
        self.prompt = prompt
        self.render_passages = render_passages
        self.credit_history = credit_history
        self.standalone_prompt = standalone_prompt
        self._chains: dict[str, Runnable[Any, Any]] = {}

    @classmethod
    def from_options(cls, judge: JudgeLike, options: MetricOptions) -> Sufficiency:
        return cls(judge, cache=options.claim_cache, **options.policy())

    def _chain(self, kind: str) -> Runnable[Any, Any]:
        if kind not in self._chains:
            chain: Runnable[Any, Any]
            if kind == "decompose":
                chain = sub_questions_chain(self.judge, self.decompose_prompt)
            elif kind == "standalone":
                chain = standalone_chain(self.judge, self.standalone_prompt)
            else:
                cap = ANSWER_REPLY_TOKENS
                chain = self.prompt | structured(self.judge, AnswerSpan, max_tokens=cap)
            self._chains[kind] = chain
        return self._chains[kind]

    def _steps(self, sample: Sample, usage: Usage) -> Steps[SufficiencyResult]:
        question = (sample.user_input or "").strip()
        if not question:
            return self.unscorable("no question to split into sub-questions")
        history = sample.history or []
        rewritten = ""
        if history:
            question, rewritten = yield from standalone(
                question,
                history,
                chain=self._chain("standalone"),
                prompt=self.standalone_prompt,
                cache=self.cache,
                judge_id=self.judge_id(),
                usage=usage,
            )
        subs, note = yield from sub_questions(
            question,
            chain=self._chain("decompose"),
            prompt=self.decompose_prompt,
            cache=self.cache,
            judge_id=self.judge_id(),
            usage=usage,
        )
        chunks = [c for c in sample.retrieved_contexts if c.text.strip()]
        verdicts = []
        if not chunks:
            verdicts = [_unanswered(q, "no retrieved contexts") for q in subs]
            note = "no retrieved contexts"
        else:
            windows = pack(chunks, self.window_tokens or context_window(self.judge))
            for sub in subs:
                verdicts.append((yield from self._answer(sub, windows, usage)))
        if history and self.credit_history:
            verdicts = yield from self._credited(verdicts, history, usage)
        result = self._scored(verdicts, "; ".join(n for n in (rewritten, note) if n))
        if history:
            result.standalone_question = question
        return result

    def _credited(
        self, verdicts: list[SubQuestionVerdict], history: Sequence[Turn], usage: Usage
    ) -> Steps[list[SubQuestionVerdict]]:
        """Each open sub-question asked of the earlier turns' contexts, the latest turn first
        (the last ``HISTORY_TURNS``): the first that answers it is credited, with its turn."""
        first = max(len(history) - HISTORY_TURNS, 0)
        earlier = [
            (number, [c for c in turn.retrieved_contexts or () if c.text.strip()])
            for number, turn in enumerate(history[first:], start=first + 1)
        ]
        windows: dict[int, list[Window]] = {}
        out = list(verdicts)
        for i, verdict in enumerate(verdicts):
            for number, chunks in reversed(earlier):
                if verdict.answerable or not chunks:
                    continue
                if number not in windows:
                    size = self.window_tokens or context_window(self.judge)
                    windows[number] = pack(chunks, size)
                found = yield from self._answer(verdict.question, windows[number], usage)
                if found.answerable:
                    reason = f"answered by turn {number}'s contexts; answer found in the passage"
                    out[i] = found.model_copy(update={"turn": number, "reason": reason})
                    break
        return out

    def _answer(
        self, question: str, windows: Sequence[Window], usage: Usage
    ) -> Steps[SubQuestionVerdict]:
        """The verdict on one sub-question: the first window that answers it (on a second
        look too, where one is needed), else the one the judge leaned to most."""
        best: SubQuestionVerdict | None = None
        for window in windows:
            call = {"passages": self.render_passages(window), "question": question}
            reply = yield from ask(Call(self._chain("answer"), call), usage)
            assert isinstance(reply.parsed, AnswerSpan)
            verdict = self._checked(question, reply.parsed, window, p_true(reply.raw))
            if verdict.answerable:
                verdict = yield from self._second_look(question, verdict, window, usage)
                if verdict.answerable:
                    return verdict
            if best is None or (verdict.p_answered or 0.0) > (best.p_answered or 0.0):
                best = verdict
        assert best is not None
        return best

    def _second_look(
        self, question: str, verdict: SubQuestionVerdict, window: Window, usage: Usage
    ) -> Steps[SubQuestionVerdict]:
        """An answer given while a passage that could hide an order was in view counts only
        if the judge gives it again with that out of view (``verdicts/quarantine.py``)."""
        where = suspects(window, question)
        if not where:
            return verdict
        seen = cleared(window, question, verdict.answer or "", verdict.chunk_ids[0])
        if seen:
            call = {"passages": self.render_passages(seen), "question": question}
            reply = yield from ask(Call(self._chain("answer"), call), usage)
            assert isinstance(reply.parsed, AnswerSpan)
            if self._checked(question, reply.parsed, seen, p_true(reply.raw)).answerable:
                reason = f"{verdict.reason}; confirmed with it out of view, as {where}"
                return verdict.model_copy(update={"reason": reason})
        why = f"the judge answered, but not with what could hold an order out of view, and {where}"
        return _unanswered(
            question, why, verdict.p_answered, answer=verdict.answer, chunk_ids=verdict.chunk_ids
        )

    def _checked(
        self, question: str, span: AnswerSpan, window: Window, p: float | None
    ) -> SubQuestionVerdict:
        """Answered only if the judge's answer is found in the passages and answers."""
        answerable = span.answerable if p is None else p >= self.answered_threshold
        if not answerable:
            return _unanswered(question, "the contexts do not answer it", p)
        answer = span.answer.strip()
        hits = passages_quoting(answer, [part.text for part in window]) if answer else []
        found = sorted((window[i] for i in hits), key=lambda part: part.number != span.passage)
        why = ""
        if not answer:
            why = "the judge said answerable but gave no answer"
        elif not found:
            why = "the judge's answer is not in the passages"
        elif not content_words(answer) - content_words(question):
            why = "the judge's answer only repeats the question"
        else:
            why = lacks_answer_type(question, answer) or evidence_refusal(
                question, answer, found[0].text
            )
        ids = [found[0].chunk.id] if found else []
        if why:
            return _unanswered(question, why, p, answer=answer or None, chunk_ids=ids)
        return SubQuestionVerdict(
            question=question,
            answerable=True,
            chunk_ids=ids,
            answer=answer,
            reason="answered; answer found in the passage",
            p_answered=p,
            evidence_verified=True,
        )

    def _scored(self, verdicts: list[SubQuestionVerdict], note: str) -> SufficiencyResult:
        ps = [v.p_answered for v in verdicts]
        return SufficiencyResult(
            metric=self.name,
            score=sum(v.answerable for v in verdicts) / len(verdicts),
            status="scored",
            reason=note,
            sub_questions=verdicts,
            missing=[v.question for v in verdicts if not v.answerable],
            p_sufficient=None if None in ps else sum(p or 0.0 for p in ps) / len(ps),
        )


def _unanswered(
    question: str,
    reason: str,
    p: float | None = None,
    answer: str | None = None,
    chunk_ids: Sequence[str] = (),
) -> SubQuestionVerdict:
    return SubQuestionVerdict(
        question=question,
        answerable=False,
        answer=answer,
        chunk_ids=list(chunk_ids),
        reason=reason,
        p_answered=p,
    )
