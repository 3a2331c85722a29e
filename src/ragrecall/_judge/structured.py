"""Structured replies from any chat model.

``structured(model, Schema)`` gives a runnable whose output is ``{"raw", "parsed",
"parsing_error"}``: native structured output where the model has it, else the plain model
followed by a parser that finds the JSON in fenced or chatty text. ``ChatOpenAI`` and
``AzureChatOpenAI`` get the schema's strict JSON-schema ``response_format`` built once, bound
into the raw request body, and their reply validated here: the request
``with_structured_output`` sends, at under half its client CPU per call (it rebuilds the
schema, has the OpenAI client walk it, and runs five nested runnables, on every call), which
is what limits a run with 32 requests in flight. ``max_tokens`` caps the reply where the model
takes that field and its owner set none, so a small judge that loses its way stops there
instead of writing until its context is full.
"""

from __future__ import annotations

import json
import re
import sys
from functools import cache, partial
from typing import TYPE_CHECKING, Any, TypeGuard, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import BaseModel, ValidationError

from .._core.errors import JudgeError

if TYPE_CHECKING:
    from langchain_openai import AzureChatOpenAI, ChatOpenAI

__all__ = [
    "capped",
    "chat_completions",
    "extract_json",
    "parse_reply",
    "response_format",
    "structured",
]

M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def structured(
    model: BaseChatModel, schema: type[BaseModel], *, max_tokens: int | None = None
) -> Runnable[Any, dict[str, Any]]:
    """The model constrained to ``schema``, its reply ``capped`` at ``max_tokens``; output
    ``{"raw", "parsed", "parsing_error"}``."""
    model = capped(model, max_tokens)
    if chat_completions(model):
        # In the raw request body: the OpenAI client would walk the schema on every call.
        extra_body = {**(model.extra_body or {}), "response_format": response_format(schema)}
        bound = model.bind(extra_body=extra_body)
        return bound | RunnableLambda(partial(_parsed, schema=schema), name="parse_json")
    try:
        native = model.with_structured_output(schema, include_raw=True)
    except NotImplementedError:
        return model | RunnableLambda(partial(_fallback, schema=schema), name="parse_json")
    return native | RunnableLambda(partial(_salvage, schema=schema), name="salvage_json")


def capped(model: BaseChatModel, max_tokens: int | None) -> BaseChatModel:
    """A copy of ``model`` whose reply stops at ``max_tokens``, where it has a ``max_tokens``
    field left unset; otherwise ``model`` itself (its owner's limit, or none to set)."""
    if max_tokens is None or "max_tokens" not in type(model).model_fields:
        return model
    if getattr(model, "max_tokens", None) is not None:
        return model
    return model.model_copy(update={"max_tokens": max_tokens})


def chat_completions(model: BaseChatModel) -> TypeGuard[ChatOpenAI | AzureChatOpenAI]:
    """An OpenAI model on the Chat Completions API (not its cousins, such as DeepSeek's, nor
    the Responses API, which takes its schema elsewhere). Unsure: False, the general path.
    No OpenAI model exists before ``langchain_openai`` is imported: it is not imported here."""
    openai_models = sys.modules.get("langchain_openai")
    if openai_models is None:
        return False
    if not isinstance(model, (openai_models.ChatOpenAI, openai_models.AzureChatOpenAI)):
        return False
    uses_responses = getattr(model, "_use_responses_api", None)
    try:
        return callable(uses_responses) and uses_responses({}) is False
    except Exception:
        return False


@cache
def response_format(schema: type[BaseModel]) -> dict[str, Any]:
    """The strict JSON-schema ``response_format`` of ``schema``, as OpenAI's client builds it."""
    import openai  # loaded already: only an OpenAI model's calls get here

    function = openai.pydantic_function_tool(schema)["function"]
    return {
        "type": "json_schema",
        "json_schema": {"name": function["name"], "schema": function["parameters"], "strict": True},
    }


def _parsed(raw: BaseMessage, schema: type[BaseModel]) -> dict[str, Any]:
    """A constrained reply, validated; an empty one says so."""
    if not _text(raw).strip():
        error = JudgeError("the judge returned an empty reply")
        return {"raw": raw, "parsed": None, "parsing_error": error}
    return _fallback(raw, schema)


def _fallback(raw: BaseMessage, schema: type[BaseModel]) -> dict[str, Any]:
    try:
        return {"raw": raw, "parsed": parse_reply(_text(raw), schema), "parsing_error": None}
    except JudgeError as err:
        return {"raw": raw, "parsed": None, "parsing_error": err}


def _salvage(out: dict[str, Any], schema: type[BaseModel]) -> dict[str, Any]:
    """Native output failed to parse: try the text of the reply before giving up."""
    if out.get("parsed") is not None:
        return out
    raw = out.get("raw")
    text = _text(raw) if isinstance(raw, BaseMessage) else ""
    if text.strip():
        try:
            return {"raw": raw, "parsed": parse_reply(text, schema), "parsing_error": None}
        except JudgeError:
            pass
    error = out.get("parsing_error") or JudgeError("the judge returned no structured output")
    if not text.strip():
        error = JudgeError("the judge returned an empty reply")
    return {"raw": raw, "parsed": None, "parsing_error": error}


def _text(message: BaseMessage) -> str:
    if isinstance(message, AIMessage) and message.tool_calls:
        return json.dumps(message.tool_calls[0]["args"])
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(part if isinstance(part, str) else str(part.get("text", "")) for part in content)


def extract_json(text: str) -> Any:
    """The first JSON value in ``text``: fenced, bare, or embedded in prose."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        candidate = candidate.strip()
        for start, char in enumerate(candidate):
            if char in "{[":
                try:
                    return decoder.raw_decode(candidate, start)[0]
                except json.JSONDecodeError:
                    continue
    raise JudgeError("no JSON found in the judge's reply", raw_output=text)


def parse_reply(text: str, schema: type[M]) -> M:
    """Validate the JSON in ``text`` against ``schema``; raises JudgeError with the raw text."""
    value = extract_json(text)
    try:
        return schema.model_validate(value)
    except ValidationError as err:
        raise JudgeError(f"reply does not match {schema.__name__}: {err}", raw_output=text) from err
