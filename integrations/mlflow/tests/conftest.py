"""Offline parts for the tests: a rule-based judge (a chat model whose verdicts are word
inclusion: a claim is supported by the first passage holding all its words; a passage is
relevant when the reference answer holds all its words), and a real in-memory vector store
on langchain-ragrecall's hashing embedding."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_ragrecall import HashingEmbeddings

_PASSAGE = re.compile(r'<passage id="(\d+)">\n(.*?)\n</passage>', re.DOTALL)
_WORD = re.compile(r"[a-z0-9]+")

DOCUMENTS = [
    Document("The Eiffel Tower is in Paris.", id="eiffel", metadata={"source": "paris.txt"}),
    Document("The Eiffel Tower was finished in 1889.", id="eiffel-1889"),
    Document("The Colosseum is in Rome.", id="colosseum"),
    Document("Cats purr when they are content.", id="cats"),
]


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _verdict(claim: str, passages: dict[int, str]) -> dict[str, Any]:
    hit = next((n for n, text in passages.items() if _words(claim) <= _words(text)), 0)
    return {"supported": hit > 0, "passage": hit, "quote": passages.get(hit, "")}


class KeywordJudge(BaseChatModel):
    """Answers ragrecall's judge prompts in JSON text, by word inclusion; ``fail`` makes every
    call raise (a judge that is down)."""

    fail: bool = False
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "keyword"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.calls += 1
        if self.fail:
            raise ConnectionError("the judge is down")
        human = next(str(m.content) for m in messages if m.type == "human")
        reply: dict[str, Any]
        passages = {int(n): text for n, text in _PASSAGE.findall(human)}
        if "\nReference answer: " in human:  # relevance (context precision)
            reference = human.split("\nReference answer: ", 1)[1].split("\n\n", 1)[0]
            if not passages:  # one passage per call
                passage = human.split("\n\nPassage:\n", 1)[1].rsplit("\n\n", 1)[0]
                reply = {"relevant": _words(passage) <= _words(reference)}
            else:
                verdicts = [
                    {"passage": n, "relevant": _words(text) <= _words(reference)}
                    for n, text in passages.items()
                ]
                reply = {"verdicts": verdicts}
        elif human.startswith("Question:") and "\nAnswer: " in human:
            answer = human.split("\nAnswer: ", 1)[1]
            reply = {"claims": [s.strip() for s in answer.split(". ") if s]}
        elif "\n\nClaims:\n" in human:
            listed = human.split("\n\nClaims:\n", 1)[1].splitlines()
            verdicts = []
            for line in listed:
                number, claim = line.split(". ", 1)
                verdicts.append({"claim": int(number), **_verdict(claim, passages)})
            reply = {"verdicts": verdicts}
        else:
            reply = _verdict(human.split("\n\nClaim: ", 1)[1], passages)
        message = AIMessage(content=json.dumps(reply))
        return ChatResult(generations=[ChatGeneration(message=message)])


@pytest.fixture
def judge() -> KeywordJudge:
    return KeywordJudge()


@pytest.fixture
def failing_judge() -> KeywordJudge:
    return KeywordJudge(fail=True)


@pytest.fixture
def store() -> InMemoryVectorStore:
    vectors = InMemoryVectorStore(HashingEmbeddings())
    vectors.add_documents(DOCUMENTS)
    return vectors


def texts(documents: Sequence[Document]) -> list[str]:
    return [d.page_content for d in documents]
