"""LlamaIndex LLMs as judges: a scripted CustomLLM that answers in (chatty) JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
    MessageRole,
)
from llama_index.core.llms import CustomLLM
from llama_index.evaluation.ragrecall import ContextRecallEvaluator, LlamaIndexJudge, as_judge
from llama_index.evaluation.ragrecall._judge import to_chat_messages
from pydantic import Field

from ragrecall import ClaimCache, ContextRecall
from ragrecall.testing import ScriptedJudge, keyword_reply

SAMPLE = {
    "user_input": "Tell me about the Eiffel Tower.",
    "reference": "The Eiffel Tower is in Paris. The Eiffel Tower is made of gold.",
    "retrieved_contexts": ["Bananas are yellow.", "The Eiffel Tower is in Paris, France."],
}


def as_langchain(messages: Sequence[ChatMessage]) -> list[BaseMessage]:
    kinds = {MessageRole.SYSTEM: SystemMessage, MessageRole.ASSISTANT: AIMessage}
    return [kinds.get(m.role, HumanMessage)(content=m.content or "") for m in messages]


class ScriptedLLM(CustomLLM):
    """Answers keyword_reply's JSON inside chatty prose, and reports token usage."""

    calls: list[tuple[str, list[ChatMessage]]] = Field(default_factory=list)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted-llm", context_window=8192, is_chat_model=True)

    def _reply(self, how: str, messages: Sequence[ChatMessage]) -> ChatResponse:
        self.calls.append((how, list(messages)))
        reply = json.dumps(keyword_reply(as_langchain(messages)))
        text = f"Here you go:\n```json\n{reply}\n```"
        return ChatResponse(
            message=ChatMessage(role=MessageRole.ASSISTANT, content=text),
            additional_kwargs={"prompt_tokens": 50, "completion_tokens": 5},
        )

    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self._reply("sync", messages)

    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self._reply("async", messages)

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        raise NotImplementedError("the judge adapter uses chat")

    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        raise NotImplementedError("the judge adapter uses chat")


def recall(judge: Any) -> ContextRecall:
    return ContextRecall(judge, strategy="per_claim", cache=ClaimCache())


def test_scores_through_llm_chat_with_the_json_parser_fallback() -> None:
    llm = ScriptedLLM()
    result = recall(LlamaIndexJudge(llm)).score(SAMPLE)
    assert result.status == "scored" and result.score == 0.5
    assert result.missing == ["The Eiffel Tower is made of gold."]
    assert result.usage.calls == 3 and result.usage.prompt_tokens == 150
    assert result.usage.completion_tokens == 15
    assert result.judge is not None
    assert (result.judge.provider, result.judge.model) == ("llama_index", "scripted-llm")
    assert {how for how, _ in llm.calls} == {"sync"}
    assert llm.calls[0][1][0].role == MessageRole.SYSTEM
    assert llm.calls[0][1][-1].role == MessageRole.USER


async def test_async_uses_llm_achat() -> None:
    llm = ScriptedLLM()
    result = await recall(LlamaIndexJudge(llm)).ascore(SAMPLE)
    assert result.score == 0.5
    assert {how for how, _ in llm.calls} == {"async"}


def test_evaluators_wrap_a_llamaindex_llm() -> None:
    llm = ScriptedLLM()
    ev = ContextRecallEvaluator(llm, strategy="per_claim", cache=ClaimCache())
    judge = ev.metric.judge
    assert isinstance(judge, LlamaIndexJudge) and judge.llm is llm
    assert judge.model_name == "scripted-llm" and judge.context_window == 8192
    result = ev.evaluate(
        SAMPLE["user_input"], contexts=SAMPLE["retrieved_contexts"], reference=SAMPLE["reference"]
    )
    assert result.score == 0.5 and llm.calls


def test_as_judge_passes_other_judges_through() -> None:
    chat_model = ScriptedJudge()
    assert as_judge(chat_model) is chat_model
    assert as_judge("openai:gpt-4o-mini") == "openai:gpt-4o-mini"
    assert as_judge(None) is None
    with pytest.raises(TypeError, match="LlamaIndex LLM"):
        as_judge(42)  # type: ignore[arg-type]


def test_message_conversion() -> None:
    converted = to_chat_messages(
        [
            SystemMessage(content="rules"),
            HumanMessage(content=[{"type": "text", "text": "a"}, "b"]),
            AIMessage(content="reply"),
        ]
    )
    assert [(m.role, m.content) for m in converted] == [
        (MessageRole.SYSTEM, "rules"),
        (MessageRole.USER, "ab"),
        (MessageRole.ASSISTANT, "reply"),
    ]


def test_a_failing_llm_makes_the_sample_unscorable() -> None:
    class Broken(ScriptedLLM):
        def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
            raise RuntimeError("quota exceeded")

    result = recall(LlamaIndexJudge(Broken())).score(SAMPLE)
    assert result.status == "unscorable" and "quota exceeded" in result.reason
