"""A conversation before a sample's question: its earlier turns (``Turn``), and chat messages
(OpenAI's ``role``/``content``, RAGAS' ``type``/``content``) read into a sample's fields, the
last user message the question, the ones before it the turns, before ``schemas.Sample``
checks them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from .chunks import Chunk, to_chunks

__all__ = ["MessagesError", "Turn", "from_messages", "read_messages"]

_USER = frozenset({"user", "human"})
_ASSISTANT = frozenset({"assistant", "ai"})
_SKIPPED = frozenset({"system", "developer", "tool", "function"})


class MessagesError(ValueError):
    """Messages that cannot be read; ``field`` names where (``messages[3]``), for SampleError."""

    def __init__(self, message: str, field: str):
        super().__init__(message)
        self.field = field


class Turn(BaseModel):
    """An earlier turn of a conversation: its question, the answer given, what was retrieved."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    question: str = Field(
        validation_alias=AliasChoices("question", "user_input", "query"),
        description="The user's question in that turn.",
    )
    answer: str | None = Field(
        None,
        validation_alias=AliasChoices("answer", "response"),
        description="The assistant's answer, when known.",
    )
    retrieved_contexts: list[Chunk] | None = Field(
        None,
        validation_alias=AliasChoices("retrieved_contexts", "contexts"),
        description="The chunks retrieved for that turn, when known.",
    )

    @field_validator("retrieved_contexts", mode="before")
    @classmethod
    def _chunks(cls, value: Any) -> list[Any] | None:
        return None if value is None else to_chunks(value)

    @field_validator("question")
    @classmethod
    def _asked(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("an earlier turn needs its question")
        return value

    @model_validator(mode="after")
    def _unique_ids(self) -> Turn:
        ids = [c.id for c in self.retrieved_contexts or ()]
        if len(set(ids)) != len(ids):
            raise ValueError("retrieved_contexts: chunk ids must be unique")
        return self


def read_messages(data: Any) -> Any:
    """A sample's fields with its chat messages (``messages``, or RAGAS' multi-turn
    ``user_input`` list) read as its question, its ``history`` and, when the assistant
    answered the question, its response."""
    if not isinstance(data, Mapping):
        return data
    asked = next((k for k in ("user_input", "question", "query") if k in data), None)
    given, name = data.get("messages"), "messages"
    if given is None and asked is not None and _chat(data[asked]):
        given, name, asked = data[asked], asked, None  # RAGAS' MultiTurnSample
    if given is None:
        return data
    if data.get("history") is not None:
        raise MessagesError("give the conversation as messages or as history, not both", name)
    turns, question, reply = from_messages(given, name)
    said = data[asked] if asked is not None else None
    if isinstance(said, str) and said.strip() != question.strip():
        raise MessagesError(
            f"the last user message is not the sample's {asked} "
            f"({question[:60]!r} against {said[:60]!r})",
            name,
        )
    out = {k: v for k, v in data.items() if k not in ("messages", "question", "query")}
    out.update(user_input=question, history=turns)
    if reply is not None and all(data.get(k) is None for k in ("response", "answer")):
        out["response"] = reply
    return out


def _chat(value: Any) -> bool:
    """A list of chat messages (RAGAS' multi-turn ``user_input``), not text or strings."""
    return (
        isinstance(value, (list, tuple))
        and bool(value)
        and all(_field(m, "role", "type") is not None for m in value)
    )


def from_messages(
    messages: Any, name: str = "messages"
) -> tuple[list[dict[str, Any]], str, str | None]:
    """The turns before the last user message (each ``{"question", "answer"}``, the answer
    the assistant messages that followed it joined, or None), that message's text (the
    question) and the assistant's reply after it, if any (the response). System and tool
    messages are skipped. A MessagesError names the message (``messages[3]``: ``name`` is the
    field they came from) and what is wrong."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise MessagesError(f"expected a list of messages, got {type(messages).__name__}", name)
    said: list[tuple[str, str]] = []
    for i, message in enumerate(messages):
        role = _field(message, "role", "type")
        if not isinstance(role, str):
            raise MessagesError("no role (expected 'user' or 'assistant')", f"{name}[{i}]")
        role = role.lower()
        if role in _SKIPPED:
            continue
        if role not in _USER | _ASSISTANT:
            raise MessagesError(f"role {role!r} is not 'user' or 'assistant'", f"{name}[{i}]")
        said.append(("user" if role in _USER else "assistant", _content(message, f"{name}[{i}]")))
    last = max((i for i, (role, _) in enumerate(said) if role == "user"), default=None)
    if last is None:
        raise MessagesError("no user message, so no question", name)
    turns: list[dict[str, Any]] = []
    for role, content in said[:last]:
        if role == "user":
            turns.append({"question": content, "answer": None})
        elif turns:  # an assistant's greeting before any question is no turn's answer
            before = turns[-1]["answer"]
            turns[-1]["answer"] = content if before is None else f"{before}\n{content}"
    replies = [content for role, content in said[last + 1 :] if role == "assistant"]
    return turns, said[last][1], "\n".join(replies) if replies else None


def _field(message: Any, *names: str) -> Any:
    """The first of ``names`` a message has: a mapping's key or a LangChain message's
    attribute."""
    for key in names:
        value = message.get(key) if isinstance(message, Mapping) else getattr(message, key, None)
        if value is not None:
            return value
    return None


def _content(message: Any, where: str) -> str:
    """A message's text; of OpenAI's content parts, the text ones."""
    content = _field(message, "content")
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, Mapping)]
        content = "\n".join(t for t in texts if isinstance(t, str)) if texts else None
    if not isinstance(content, str):
        raise MessagesError(f"content must be text, got {type(content).__name__}", where)
    return content
