"""Small parts: JSON extraction, evidence checks, packing, retry classification, the reply's
cap on models that take max_tokens."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ragrecall import Chunk, JudgeError

# Unit tests of the judge's parts (private): retries, JSON salvage, packing, quotes, the cap.
from ragrecall._judge.retry import is_transient, retry_after
from ragrecall._judge.structured import capped, extract_json
from ragrecall._metrics.text.windows import pack
from ragrecall._metrics.text.words import quote_in
from ragrecall.judges import structured
from ragrecall.prompts import response_format
from ragrecall.testing import ScriptedJudge
from ragrecall.text import best_sentence, split_sentences


def test_importing_ragrecall_leaves_the_local_judge_unloaded() -> None:
    code = (
        "import sys, ragrecall, ragrecall.judges; "
        "print(any(m.startswith(('ragrecall._judge.local', 'xllamacpp')) for m in sys.modules)); "
        "ragrecall.judges.LocalJudge; print('ragrecall._judge.local' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        ('Sure!\n```json\n{"a": [1, 2]}\n```\nHope that helps.', {"a": [1, 2]}),
        ('The answer is {"a": true} as requested.', {"a": True}),
        ('{"a": {broken} then {"b": 2}', {"b": 2}),
    ],
)
def test_extract_json(text: str, value: object) -> None:
    assert extract_json(text) == value


def test_extract_json_without_json_keeps_raw_output() -> None:
    with pytest.raises(JudgeError) as info:
        extract_json("no json here")
    assert info.value.raw_output == "no json here"


def test_quote_in_normalises_and_handles_ellipses() -> None:
    text = "The Eiffel Tower,\nin Paris, was completed in 1889 for the World\u2019s Fair."
    assert quote_in("the eiffel tower, in PARIS", text)
    assert quote_in("\u201cThe Eiffel Tower ... completed in 1889\u201d", text)
    assert quote_in("World's Fair.", text)
    assert not quote_in("completed in 1889 ... The Eiffel Tower", text)  # order matters
    assert not quote_in("completed in 1890", text)
    assert not quote_in("   ", text)


def test_sentences_and_alignment() -> None:
    text = "Dr. Smith arrived at 5 p.m. on Monday. He left on Tuesday."
    assert split_sentences(text) == [
        "Dr. Smith arrived at 5 p.m. on Monday.",
        "He left on Tuesday.",
    ]
    assert best_sentence("Smith left on Tuesday", text)[0] == "He left on Tuesday."


def test_pack_keeps_numbers_and_splits_oversized_chunks() -> None:
    chunks = [Chunk(id="a", text="x" * 3000), Chunk(id="b", text="short")]
    windows = pack(chunks, window_tokens=1000)
    numbers = [[p.number for p in w] for w in windows]
    assert numbers[0][0] == 1 and numbers[-1][-1] == 2
    assert sum(len(p.text) for w in windows for p in w if p.chunk.id == "a") == 3000
    assert (
        pack(chunks, window_tokens=100_000) == [[*windows[0], *windows[-1]]]
        or len(pack(chunks, window_tokens=100_000)) == 1
    )


class _Response:
    def __init__(self, headers: dict[str, str]):
        self.headers = headers


class _HTTPError(Exception):
    def __init__(self, status: int, headers: dict[str, str] | None = None):
        self.status_code = status
        self.response = _Response(headers or {})


def test_transient_errors_and_retry_after() -> None:
    assert is_transient(TimeoutError())
    assert is_transient(_HTTPError(429))
    assert is_transient(_HTTPError(503))
    assert not is_transient(_HTTPError(400))
    assert not is_transient(ValueError())
    assert retry_after(_HTTPError(429, {"retry-after": "7"})) == 7.0
    assert retry_after(_HTTPError(429)) is None


def test_openai_models_get_a_prebuilt_strict_response_format() -> None:
    from langchain_openai import ChatOpenAI

    from ragrecall.prompts import Support

    fmt = response_format(Support)
    assert fmt is response_format(Support)  # built once
    schema = fmt["json_schema"]["schema"]
    assert (fmt["type"], fmt["json_schema"]["name"], fmt["json_schema"]["strict"]) == (
        "json_schema",
        "Support",
        True,
    )
    assert schema["required"] == ["supported", "passage"] and not schema["additionalProperties"]
    model = ChatOpenAI(
        base_url="http://127.0.0.1:9/v1", api_key="x", model="m", extra_body={"top_k": 1}
    )
    bound = structured(model, Support).first  # type: ignore[attr-defined]
    assert bound.kwargs["extra_body"] == {"top_k": 1, "response_format": fmt}  # theirs kept
    # The Responses API takes its schema elsewhere: the general path.
    responses = ChatOpenAI(api_key="x", model="m", use_responses_api=True)
    assert "extra_body" not in getattr(structured(responses, Support).first, "kwargs", {})


def test_a_reply_is_capped_where_the_judge_takes_max_tokens() -> None:
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(model="m", api_key="none", base_url="http://127.0.0.1:9/v1")  # type: ignore[arg-type]
    assert capped(model, 400).max_tokens == 400  # type: ignore[attr-defined]
    assert model.max_tokens is None  # a copy
    own = model.model_copy(update={"max_tokens": 50})
    assert capped(own, 400) is own
    assert capped(model, None) is model
    scripted = ScriptedJudge()
    assert capped(scripted, 400) is scripted
