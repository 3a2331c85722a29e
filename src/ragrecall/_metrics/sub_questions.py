"""A question's sub-questions: the parts a full answer must cover, split by the judge in one
call and cached beside claims. Shared by QuestionRecall and Sufficiency."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable

from .._core.errors import JudgeError
from .._core.schemas import Usage
from .._judge.drive import Call, Steps, ask
from .._judge.structured import structured
from .claims.decompose import ClaimCache, clean_claims
from .prompts import SUB_QUESTIONS_PROMPT, SubQuestions

__all__ = ["SUB_QUESTIONS_VERSION", "sub_questions", "sub_questions_chain"]

# Distinguishes sub-question entries from claim entries in a shared ClaimCache.
_CACHE_KIND = "sub_questions"
SUB_QUESTIONS_VERSION = "1"
# A question's sub-questions are a few lines: a reply past this is a judge that lost its way.
SUB_QUESTIONS_REPLY_TOKENS = 512


def sub_questions_chain(
    judge: BaseChatModel, prompt: ChatPromptTemplate = SUB_QUESTIONS_PROMPT
) -> Runnable[dict[str, Any], dict[str, Any]]:
    """LCEL: the judge's sub-questions of a question, its reply capped at
    SUB_QUESTIONS_REPLY_TOKENS (QuestionRecall's and Sufficiency's alike)."""
    return prompt | structured(judge, SubQuestions, max_tokens=SUB_QUESTIONS_REPLY_TOKENS)


def sub_questions(
    question: str,
    *,
    chain: Runnable[dict[str, str], dict[str, object]],
    prompt: ChatPromptTemplate,
    cache: ClaimCache,
    judge_id: str,
    usage: Usage,
) -> Steps[tuple[list[str], str]]:
    """The sub-questions of ``question`` (cached per judge and prompt) and a note: where the
    judge gave none, or an invalid reply twice (the embedded judge once listed variations of
    one question until its reply was cut), the question itself, not stored, and the note says
    so."""
    custom = "" if prompt is SUB_QUESTIONS_PROMPT else repr(prompt)
    key = ClaimCache.key(_CACHE_KIND, question, judge_id, SUB_QUESTIONS_VERSION, custom)
    cached = cache.get(key)
    if cached is not None:
        return cached, ""
    try:
        reply = yield from ask(Call(chain, {"question": question}), usage)
    except JudgeError as err:  # a reply cut at SUB_QUESTIONS_REPLY_TOKENS, or no JSON at all
        return [question], f"the judge's sub-questions were invalid ({err}); used the question"
    assert isinstance(reply.parsed, SubQuestions)
    subs = clean_claims(reply.parsed.questions)
    if not subs:
        return [question], "the judge returned no sub-questions; used the question"
    return cache.put(key, subs), ""  # the first writer's, when another was first
