"""A LlamaIndex LLM as a ragrecall judge: a LangChain chat model over ``llm.chat``/``llm.achat``.

The adapter has no native structured output, so ragrecall's JSON-parser fallback reads the
judge's replies. ``as_judge`` accepts everything an evaluator's ``judge=`` does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatResult
from llama_index.core.base.llms.base import BaseLLM
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole
from pydantic import ConfigDict, model_validator

from ragrecall.judges import JudgeLike

__all__ = ["EvaluatorJudge", "LlamaIndexJudge", "as_judge"]

# What an evaluator's ``judge=`` accepts: ragrecall's one judge type, or a LlamaIndex LLM
# (wrapped as a ``LlamaIndexJudge``). Not exported: the public type is ragrecall.judges'
# ``JudgeLike`` (the old public name ``JudgeSpec`` is deprecated).
EvaluatorJudge = JudgeLike | BaseLLM

_ROLES = {
    "system": MessageRole.SYSTEM,
    "human": MessageRole.USER,
    "ai": MessageRole.ASSISTANT,
    "tool": MessageRole.TOOL,
    "function": MessageRole.FUNCTION,
}


class LlamaIndexJudge(BaseChatModel):
    """A LlamaIndex LLM (``Settings.llm``, ``OpenAI(...)``, a ``CustomLLM``) as a judge.

    ``LlamaIndexJudge(llm=Settings.llm)``; ``model_name`` and ``context_window`` come from
    ``llm.metadata`` unless given.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    llm: BaseLLM
    model_name: str = ""
    context_window: int = 0

    def __init__(self, llm: BaseLLM | None = None, **kwargs: Any) -> None:
        if llm is not None:
            kwargs["llm"] = llm
        super().__init__(**kwargs)

    @model_validator(mode="after")
    def _from_metadata(self) -> LlamaIndexJudge:
        metadata = self.llm.metadata
        if not self.model_name:
            self.model_name = metadata.model_name or type(self.llm).__name__
        if not self.context_window:
            self.context_window = metadata.context_window
        return self

    @property
    def _llm_type(self) -> str:
        return "llama_index"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name, "llm": type(self.llm).__name__}

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return _result(self.llm.chat(to_chat_messages(messages)))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return _result(await self.llm.achat(to_chat_messages(messages)))


def as_judge(judge: EvaluatorJudge) -> JudgeLike:
    """A LlamaIndex LLM wrapped in ``LlamaIndexJudge``; anything else as ragrecall takes it."""
    if isinstance(judge, BaseLLM):
        return LlamaIndexJudge(llm=judge)
    if judge is None or isinstance(judge, (BaseChatModel, str)) or callable(judge):
        return judge
    raise TypeError(
        "judge must be a LangChain chat model, a LlamaIndex LLM, a 'provider:model' string, "
        f"a factory or None, not {type(judge).__name__}"
    )


def to_chat_messages(messages: Sequence[BaseMessage]) -> list[ChatMessage]:
    """LangChain messages as LlamaIndex ChatMessages (text content only)."""
    return [
        ChatMessage(role=_ROLES.get(m.type, MessageRole.USER), content=_text(m.content))
        for m in messages
    ]


def _text(content: str | list[str | dict[str, Any]]) -> str:
    if isinstance(content, str):
        return content
    return "".join(p if isinstance(p, str) else str(p.get("text", "")) for p in content)


def _result(response: ChatResponse) -> ChatResult:
    message = AIMessage(content=response.message.content or "", usage_metadata=_usage(response))
    return ChatResult(generations=[ChatGeneration(message=message)])


def _usage(response: ChatResponse) -> UsageMetadata | None:
    """Token counts where the LLM reports them: ``additional_kwargs`` or ``raw.usage``."""
    found: Mapping[str, Any] = response.additional_kwargs
    if "prompt_tokens" not in found:
        raw = response.raw
        usage = raw.get("usage") if isinstance(raw, Mapping) else getattr(raw, "usage", None)
        if isinstance(usage, Mapping):
            found = usage
        elif usage is not None:
            found = {k: getattr(usage, k, None) for k in ("prompt_tokens", "completion_tokens")}
    prompt, completion = found.get("prompt_tokens"), found.get("completion_tokens")
    if not isinstance(prompt, int) or not isinstance(completion, int):
        return None
    return UsageMetadata(
        input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion
    )
