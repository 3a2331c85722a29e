"""Scripted chat models for unit tests of parsing and control flow (no network, no model).

``ScriptedJudge`` emits tool calls, so ``with_structured_output`` works on it;
``TextOnlyJudge`` has no tool support and answers in text, exercising the parser fallback.
``keyword_reply`` is a rule-based judge: a claim is supported when its words all occur in a
passage.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

Reply = Callable[[Sequence[BaseMessage]], Any]

_PASSAGE = re.compile(r'<passage id="(\d+)">\n(.*?)\n</passage>', re.DOTALL)
_WORD = re.compile(r"[a-z0-9]+")


def passages(messages: Sequence[BaseMessage]) -> dict[int, str]:
    return {int(n): text for n, text in _PASSAGE.findall(_human(messages))}


def _human(messages: Sequence[BaseMessage]) -> str:
    return next(str(m.content) for m in messages if m.type == "human")


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def supporting_passage(claim: str, found: dict[int, str]) -> int:
    for number, text in found.items():
        if words(claim) <= words(text):
            return number
    return 0


def keyword_reply(messages: Sequence[BaseMessage]) -> dict[str, Any]:
    """Decompose by '. ', judge by word inclusion, quote the whole passage."""
    human = _human(messages)
    if human.startswith("Question:"):
        answer = human.split("\nAnswer: ", 1)[1]
        return {"claims": [s.strip(". ") + "." for s in answer.split(". ") if s.strip(". ")]}
    found = passages(messages)
    if "\n\nClaims:\n" in human:
        listed = human.split("\n\nClaims:\n", 1)[1].splitlines()
        verdicts = []
        for line in listed:
            number, claim = line.split(". ", 1)
            hit = supporting_passage(claim, found)
            verdicts.append(
                {
                    "claim": int(number),
                    "supported": hit > 0,
                    "passage": hit,
                    "quote": found.get(hit, ""),
                }
            )
        return {"verdicts": verdicts}
    claim = human.split("\n\nClaim: ", 1)[1]
    hit = supporting_passage(claim, found)
    return {"supported": hit > 0, "passage": hit, "quote": found.get(hit, "")}


class TextOnlyJudge(BaseChatModel):
    """Answers with ``reply(messages)``: a dict becomes JSON text, an exception is raised."""

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
        import json

        if isinstance(out, AIMessage):
            return out
        text = json.dumps(out) if isinstance(out, (dict, list)) else str(out)
        return AIMessage(content=text, usage_metadata=self.usage)  # type: ignore[arg-type]

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.calls.append(list(messages))
        out = self.reply(messages)
        if isinstance(out, BaseException):
            raise out
        return ChatResult(generations=[ChatGeneration(message=self._message(out))])


class ScriptedJudge(TextOnlyJudge):
    """Like TextOnlyJudge, but a dict reply becomes a tool call (native structured output)."""

    tool_name: str = ""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        name = convert_to_openai_tool(tools[0])["function"]["name"]
        return self.model_copy(update={"tool_name": name, "calls": self.calls})

    def _message(self, out: Any) -> AIMessage:
        if isinstance(out, dict):
            return AIMessage(
                content="",
                usage_metadata=self.usage,  # type: ignore[arg-type]
                tool_calls=[{"name": self.tool_name, "args": out, "id": "call_1"}],
            )
        return super()._message(out)


def obeying(quote: str, passage: int = 2) -> ScriptedJudge:
    """A judge that says supported, cites ``passage`` and quotes ``quote``, whatever it reads
    (an attacked judge that obeys the injection)."""

    def reply(messages: Any) -> dict[str, Any]:
        verdict = {"supported": True, "passage": passage, "quote": quote}
        if "\n\nClaims:\n" in str(messages[-1].content):
            return {"verdicts": [{"claim": 1, **verdict}]}
        return verdict

    return ScriptedJudge(reply=reply)


def p_reply(messages: Sequence[BaseMessage]) -> float:
    """The LogprobJudge's P(supported): an overconfident judge, for calibration tests. Every
    claim it is asked about reads "... <n>." with a number n; the words that are not numbers
    all occur in a passage or not; P grows with n % 10 (0.05 to 0.95)."""
    claim = _human(messages).split("\n\nClaim: ", 1)[1]
    digits = re.findall(r"\d+", claim)
    n = int(digits[-1]) if digits else 0
    return 0.05 + 0.1 * (n % 10)


class LogprobJudge(ScriptedJudge):
    """A ScriptedJudge whose per-claim verdicts carry true/false logprobs (``p_reply``), as
    llama.cpp's do, so ContextRecall decides from P(supported) and the word check."""

    def _message(self, out: Any) -> AIMessage:
        import math

        message = super()._message(out)
        if isinstance(out, dict) and "supported" in out and self.calls:
            p = p_reply(self.calls[-1])
            alternatives = [
                {"token": "true", "logprob": math.log(p)},
                {"token": "false", "logprob": math.log(1 - p)},
            ]
            token = {**alternatives[0], "top_logprobs": alternatives}
            message.response_metadata = {"logprobs": {"content": [token]}}
        return message


def dying_judge() -> ScriptedJudge:
    """A judge that answers six calls, then is gone for good (its server died twice): a judge
    that fails mid-run, not one that cannot start."""
    from ragrecall import JudgeModelError

    answered = [0]

    def reply(messages: Sequence[BaseMessage]) -> Any:
        answered[0] += 1
        if answered[0] > 6:
            return JudgeModelError("the local judge server died again after a restart")
        return keyword_reply(messages)

    return ScriptedJudge(reply=reply)
