"""A conversation's question made to stand alone: the judge rewrites it from the last turns
(one call, cached beside claims), and the library checks that the rewrite only resolves what
the question refers to: it keeps the question's content words and adds only words the
conversation holds (and question words). A refused rewrite leaves the question as it was,
with the reason."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable

from .._core.schemas import Turn, Usage
from .._judge.drive import Call, Steps, ask
from .._judge.structured import structured
from .claims.decompose import ClaimCache
from .prompts import STANDALONE_PROMPT, StandaloneQuestion
from .text.words import content_words

__all__ = [
    "HISTORY_TURNS",
    "STANDALONE_REPLY_TOKENS",
    "STANDALONE_VERSION",
    "refusal",
    "render_history",
    "standalone",
    "standalone_chain",
]

# How many of the last turns the judge is shown (and Sufficiency credits), each side of a
# turn cut to TURN_CHARS characters: the prompt stays bounded in a long conversation.
HISTORY_TURNS = 6
TURN_CHARS = 600
STANDALONE_VERSION = "1"
# A question made to stand alone is one sentence: a reply past this is a judge that lost its way.
STANDALONE_REPLY_TOKENS = 200
_CACHE_KIND = "standalone_question"
# Words a rewrite may drop ("what about its height?") or add ("And in 1990?" -> "What was
# the population of Paris in 1990?") though the conversation does not hold them.
_LINKING_TEXT = "about also too same and so then ok okay what how again instead"
_ASKING_TEXT = "what when where who whom whose which why how many much"
_LINKING = frozenset(_LINKING_TEXT.split())
_ASKING = frozenset(_ASKING_TEXT.split())


def standalone_chain(
    judge: BaseChatModel, prompt: ChatPromptTemplate = STANDALONE_PROMPT
) -> Runnable[dict[str, Any], dict[str, Any]]:
    """LCEL: the judge's rewrite of a question to stand alone, its reply capped at
    STANDALONE_REPLY_TOKENS (ContextRecall's and Sufficiency's alike)."""
    return prompt | structured(judge, StandaloneQuestion, max_tokens=STANDALONE_REPLY_TOKENS)


def render_history(history: Sequence[Turn]) -> str:
    """The last ``HISTORY_TURNS`` turns as the prompt shows them, numbered from 1 as in the
    conversation, each question and answer cut to ``TURN_CHARS``."""
    first = max(len(history) - HISTORY_TURNS, 0)
    blocks = []
    for number, turn in enumerate(history[first:], start=first + 1):
        answer = _cut(turn.answer) if turn.answer else "(not given)"
        blocks.append(f"Turn {number}\nUser: {_cut(turn.question)}\nAssistant: {answer}")
    return "\n\n".join(blocks)


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TURN_CHARS else text[: TURN_CHARS - 1] + "…"


def refusal(question: str, rewrite: str, conversation: str) -> str:
    """Why ``rewrite`` is not ``question`` made to stand alone, or "" when it is: it must keep
    the question's content words (linking words such as "about" aside) and add only words
    the conversation holds (and question words, and a possessive's "s")."""
    if not rewrite.strip():
        return "it is empty"
    kept = content_words(rewrite)
    lost = sorted(content_words(question) - kept - _LINKING)
    if lost:
        return f"it drops {', '.join(map(repr, lost))}"
    new = sorted(
        w
        for w in kept - content_words(question) - content_words(conversation) - _ASKING
        if len(w) > 1  # a possessive's "s"
    )
    if new:
        return f"it adds {', '.join(map(repr, new))}, not in the conversation"
    return ""


def standalone(
    question: str,
    history: Sequence[Turn],
    *,
    chain: Runnable[dict[str, str], dict[str, object]],
    prompt: ChatPromptTemplate,
    cache: ClaimCache,
    judge_id: str,
    usage: Usage,
) -> Steps[tuple[str, str]]:
    """The question to score and a note: the judge's standalone rewrite of ``question``
    (cached per conversation shown, judge and prompt) and "", or ``question`` itself and why
    the rewrite was refused."""
    shown = render_history(history)
    custom = "" if prompt is STANDALONE_PROMPT else repr(prompt)
    key = ClaimCache.key(_CACHE_KIND, question, shown, judge_id, STANDALONE_VERSION, custom)
    cached = cache.get(key)
    if cached is not None and len(cached) == 2:
        return cached[0], cached[1]
    reply = yield from ask(Call(chain, {"history": shown, "question": question}), usage)
    assert isinstance(reply.parsed, StandaloneQuestion)
    rewrite = " ".join(reply.parsed.standalone.split())
    why = refusal(question, rewrite, shown)
    kept = [question, f"standalone question {rewrite!r} refused: {why}"] if why else [rewrite, ""]
    kept = cache.put(key, kept)  # the first writer's, when another was first
    return kept[0], kept[1]
