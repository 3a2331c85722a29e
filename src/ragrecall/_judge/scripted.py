"""Scripted chat models: judges for tests, with no network and no model (public through
`ragrecall.testing`, as httpx ships `MockTransport`).

``ScriptedJudge`` answers with tool calls, so ``with_structured_output`` works on it;
``TextOnlyJudge`` has no tool support and answers in text, exercising the parser fallback.
``keyword_reply``, the default reply, is a rule-based judge that reads ragrecall's prompts: it
splits an answer at ". " and calls a claim supported when all its words occur in a passage,
quoting that whole passage.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

__all__ = ["Reply", "ScriptedJudge", "TextOnlyJudge", "keyword_reply", "passages"]

Reply = Callable[[Sequence[BaseMessage]], Any]
"""What a scripted judge answers: a dict (tool-call arguments, or JSON text), a string, an
``AIMessage`` as is, or an exception to raise."""

_PASSAGE = re.compile(r'<passage id="(\d+)">\n(.*?)\n</passage>', re.DOTALL)
_WORD = re.compile(r"[a-z0-9]+")


def passages(messages: Sequence[BaseMessage]) -> dict[int, str]:
    """The numbered passages of a judge prompt."""
    return {int(n): text for n, text in _PASSAGE.findall(_human(messages))}


def _human(messages: Sequence[BaseMessage]) -> str:
    return next(str(m.content) for m in messages if m.type == "human")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _supporting(claim: str, found: dict[int, str]) -> int:
    return next((n for n, text in found.items() if _words(claim) <= _words(text)), 0)


def keyword_reply(messages: Sequence[BaseMessage]) -> dict[str, Any]:
    """Decompose by '. ', judge by word inclusion, quote the whole passage."""
    human = _human(messages)
    if human.startswith("Question:"):
        answer = human.split("\nAnswer: ", 1)[1]
        return {"claims": [s.strip(". ") + "." for s in answer.split(". ") if s.strip(". ")]}
    found = passages(messages)
    if "\n\nClaims:\n" in human:
        verdicts = []
        for line in human.split("\n\nClaims:\n", 1)[1].splitlines():
            number, claim = line.split(". ", 1)
            hit = _supporting(claim, found)
            verdict = {"supported": hit > 0, "passage": hit, "quote": found.get(hit, "")}
            verdicts.append({"claim": int(number), **verdict})
        return {"verdicts": verdicts}
    hit = _supporting(human.split("\n\nClaim: ", 1)[1], found)
    return {"supported": hit > 0, "passage": hit, "quote": found.get(hit, "")}


class TextOnlyJudge(BaseChatModel):
    """Answers with ``reply(messages)`` in text: a dict becomes JSON, an exception is raised.
    ``calls`` records every prompt it was sent."""

    reply: Reply = keyword_reply
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    model_name: str = "scripted"
    usage: dict[str, Any] = Field(
        default_factory=lambda: {"input_tokens": 100, "output_tokens": 10, "total_tokens": 110}
    )

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _message(self, out: Any) -> AIMessage:
        if isinstance(out, AIMessage):
            return out
        text = json.dumps(out) if isinstance(out, (dict, list)) else str(out)
        return AIMessage(content=text, usage_metadata=self.usage)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls.append(list(messages))
        out = self.reply(messages)
        if isinstance(out, BaseException):
            raise out
        return ChatResult(generations=[ChatGeneration(message=self._message(out))])


class ScriptedJudge(TextOnlyJudge):
    """Like `TextOnlyJudge`, but a dict reply becomes a tool call (native structured output)."""

    tool_name: str = ""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        name = convert_to_openai_tool(tools[0])["function"]["name"]
        return self.model_copy(update={"tool_name": name, "calls": self.calls})

    def _message(self, out: Any) -> AIMessage:
        if isinstance(out, dict):
            return AIMessage(
                content="",
                usage_metadata=self.usage,
                tool_calls=[{"name": self.tool_name, "args": out, "id": "call_1"}],
            )
        return super()._message(out)
