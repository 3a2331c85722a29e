"""A rule-based fake judge for the recall family (ChunkRecall, QuestionRecall, ContextPrecision).

``family_reply`` recognises each prompt by the layout of its human message and answers by word
overlap; anything else (claims, claim verdicts) goes to ``fakes.keyword_reply``. Content words
are words of four or more letters that are not question words.

* relevance: the passage shares a content word with the question (and reference);
* reflected: every word of the passage is in the answer; ``missing`` is then the passage;
* sub-questions: the question split on " and ";
* answerable: a passage holds every content word of the sub-question; the answer is that
  passage.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fakes import keyword_reply, passages, words
from langchain_core.messages import BaseMessage

from ragrecall import ClaimCache

STOP = {"what", "when", "where", "which", "does", "about", "tell", "that", "this", "with"}


def content(text: str) -> set[str]:
    return {w for w in words(text) if len(w) >= 4 and w not in STOP}


def human(messages: Sequence[BaseMessage]) -> str:
    return next(str(m.content) for m in messages if m.type == "human")


def relevant(passage: str, topic: str) -> bool:
    return bool(content(passage) & content(topic))


def reflection(question: str, answer: str, passage: str) -> dict[str, Any]:
    is_relevant = relevant(passage, question)
    reflected = is_relevant and words(passage) <= words(answer)
    missing = passage if is_relevant and not reflected else ""
    return {"relevant": is_relevant, "reflected": reflected, "missing": missing}


def family_reply(messages: Sequence[BaseMessage]) -> dict[str, Any]:
    text = human(messages)
    found = passages(messages)
    head = text.split("\n\nPassage", 1)[0]
    if text.startswith("Question: ") and "\n\nPassage" in text:
        if "\nReference answer: " in head:
            topic = head.removeprefix("Question: ").replace("\nReference answer: ", " ")
            verdicts = {n: {"relevant": relevant(p, topic)} for n, p in found.items()}
        else:
            question, answer = head.removeprefix("Question: ").split("\nAnswer: ", 1)
            verdicts = {n: reflection(question, answer, p) for n, p in found.items()}
        if "\n\nPassages:\n" in text:
            return {"verdicts": [{"passage": n, **v} for n, v in verdicts.items()]}
        return next(iter(verdicts.values()))
    if text.startswith("Question: ") and "\n" not in text:
        question = text.removeprefix("Question: ").rstrip("?")
        return {"questions": [part.strip() + "?" for part in question.split(" and ")]}
    if text.startswith("Passages:") and "\n\nQuestion: " in text:
        question = text.split("\n\nQuestion: ", 1)[1].split("\n\n", 1)[0]
        for number, passage in found.items():
            if content(question) <= words(passage):
                return {"answerable": True, "passage": number, "answer": passage, "missing": ""}
        missing = "nothing about " + question.rstrip("?")
        return {"answerable": False, "passage": 0, "answer": "", "missing": missing}
    return keyword_reply(messages)


def fresh_cache() -> ClaimCache:
    """An isolated ClaimCache for one test.

    Seeded with one unrelated entry because ContextRecall keeps ``cache or <shared cache>``
    and an empty ClaimCache is falsy (``__len__`` is 0), so an empty one would be replaced by
    the process-wide cache. Harmless once that is fixed.
    """
    cache = ClaimCache()
    cache.put(ClaimCache.key("family_fakes", "seed"), ["seed"])
    return cache
