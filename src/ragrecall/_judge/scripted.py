"""Scripted chat models: judges for tests, with no network and no model (public through
`ragrecall.testing`, as httpx ships `MockTransport`). One concern over 300 lines: the rules
of one fake judge, a reply to each prompt ragrecall sends.

``ScriptedJudge`` answers with tool calls, so ``with_structured_output`` works on it;
``TextOnlyJudge`` has no tool support and answers in text, exercising the parser fallback.
``keyword_reply``, the default reply, is a rule-based judge that answers every prompt
ragrecall sends. It knows a prompt by the reply it asks for: the schema bound as a tool
(``ScriptedJudge``), else the JSON the system message asks for, else the shape of the prompt.
A "sentence" is a piece of text split at ". "; a text "holds" words when it has them all.

* claims (``Claims``): the answer's sentences;
* a referent (``Referent``) for a pronoun ("it", "they", ...): the name that opens the
  answer's first sentence (its run of capitalised words, "and", "of" and "the" between
  them); "" for other words ("the company"), for no such name, or in that first sentence;
* a verdict (``Support``, ``QuotedSupport``, ``BatchVerdicts``): supported by the first passage
  that holds the claim's words, quoting that whole passage; a verdict token (the prompt ends
  with the reply's start: ``TokenSupport`` and ``VERDICT_VARIANTS``) says so with P = 0.9;
* relevance (``Relevance``, ``Relevances``): a passage is relevant when it holds a sentence of
  the reference, or without one half the question's words (question words, "is", "was",
  pronouns and the like aside);
* a standalone question (``StandaloneQuestion``): the question with its first pronoun ("it",
  "he", "she", "they", "them", "him", "her"; "its", "his", "their" as a possessive) replaced
  by the first name, not at its start, of the latest user question in the conversation that
  has one (its "the" kept: "the Eiffel Tower"); unchanged without such a pronoun or name;
* sub-questions (``SubQuestions``): the question split at ", and ", "; " and "? ";
  answerable (``Answerable``, ``AnswerSpan``) when a passage holds the sub-question's words
  (those aside), the answer that passage;
* generation (``QuestionAnswer``): the answer is each passage's first sentence, the question
  "What should I know about" the names that open them;
* a match (the example metric's ``Match``): stated when the response holds every sentence of
  the reference.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from contextvars import ContextVar
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
# The opening name of a sentence: capitalised words, with "and", "of", "the" between them.
_NAME = re.compile(r"[A-Z][\w'-]*(?:\s+(?:(?:and|of|the)\s+)*[A-Z][\w'-]*)*")
_NOT_NAMES = frozenset(_WORD.findall("the a an in on at by for it this these those he she they we"))
# Words a sub-question or a question holds that no passage needs to.
_ASIDE = frozenset(
    _WORD.findall(
        "who whom whose what which when where why how is are was were do does did be been has "
        "have had it its they them their he she his her this that these those a an the"
    )
)
_PRONOUNS = frozenset(_WORD.findall("it its he his him she her they them their"))
_POSSESSIVES = frozenset({"its", "his", "their"})
_P = 0.9  # a verdict token's probability for the label it says
# The verdict token's words after each reply start: (if supported, if not).
_LABELS = {'{"unsupported":': ("false", "true"), "Answer:": ("yes", "no")}
# The reply schema a text-only prompt asks for, known by the JSON its system message shows.
_ASKS = (
    ('{"claims"', "Claims"),
    ('{"referent"', "Referent"),
    ('{"verdicts": [{"claim"', "BatchVerdicts"),
    ('{"verdicts": [{"passage"', "Relevances"),
    ('{"relevant"', "Relevance"),
    ('{"questions"', "SubQuestions"),
    ('{"standalone"', "StandaloneQuestion"),
    ('{"answerable"', "Answerable"),
    ('{"question"', "QuestionAnswer"),
    ('{"stated"', "Match"),
    ('{"supported"', "QuotedSupport"),
)
_SCHEMA: ContextVar[str] = ContextVar("ragrecall_scripted_schema", default="")


def passages(messages: Sequence[BaseMessage]) -> dict[int, str]:
    """The numbered passages of a judge prompt."""
    return {int(n): text for n, text in _PASSAGE.findall(_human(messages))}


def _human(messages: Sequence[BaseMessage]) -> str:
    return next(str(m.content) for m in messages if m.type == "human")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _sentences(text: str) -> list[str]:
    return [s.strip(". ") + "." for s in text.split(". ") if s.strip(". ")]


def _supporting(claim: str, found: dict[int, str]) -> int:
    return next((n for n, text in found.items() if _words(claim) <= _words(text)), 0)


def _field(human: str, label: str, end: str = "\n") -> str:
    """The text after ``label`` up to ``end`` (or the end of the prompt)."""
    return human.split(label, 1)[1].split(end, 1)[0] if label in human else ""


def _name(sentence: str) -> str:
    found = _NAME.match(sentence.strip())
    name = found.group(0) if found else ""
    return name if _words(name) - _NOT_NAMES else ""


def _claim(human: str) -> str:
    claim = re.split(r"(?:^|\n\n)Claim: ", human, maxsplit=1)[1]
    return re.split(r"\n\n(?:Passages:\n|Is this claim|Do the passages)", claim)[0]


def _verdict(claim: str, found: dict[int, str]) -> dict[str, Any]:
    hit = _supporting(claim, found)
    return {"supported": hit > 0, "passage": hit, "quote": found.get(hit, "")}


def _token(messages: Sequence[BaseMessage]) -> AIMessage:
    """A verdict token after the reply's start, with the logprobs a local server gives."""
    yes, no = _LABELS.get(str(messages[-1].content).strip(), ("true", "false"))
    if not _verdict(_claim(_human(messages)), passages(messages))["supported"]:
        yes, no = no, yes
    said = [{"token": yes, "logprob": math.log(_P)}, {"token": no, "logprob": math.log(1 - _P)}]
    logprobs = {"content": [{**said[0], "top_logprobs": said}]}
    return AIMessage(content=" " + yes, response_metadata={"logprobs": logprobs})


def _relevant(text: str, human: str) -> bool:
    reference = _field(human, "\nReference answer: ", "\n\n")
    if reference and reference != "(not given)":
        return any(_words(s) <= _words(text) for s in _sentences(reference))
    asked = _words(_field(human, "Question: ")) - _ASIDE
    return bool(asked) and 2 * len(asked & _words(text)) >= len(asked)


def _answerable(human: str, found: dict[int, str]) -> dict[str, Any]:
    asked = _words(_field(human, "\n\nQuestion: ")) - _ASIDE
    hit = next((n for n, text in found.items() if asked <= _words(text)), 0)
    if hit:
        return {"answerable": True, "passage": hit, "answer": found[hit], "missing": ""}
    missing = "no passage states: " + ", ".join(sorted(asked))
    return {"answerable": False, "passage": 0, "answer": "", "missing": missing}


def _written(found: dict[int, str]) -> dict[str, Any]:
    firsts = [_sentences(text)[0] for text in found.values() if _sentences(text)]
    names = list(dict.fromkeys(re.sub("^The ", "the ", n) for n in map(_name, firsts) if n))
    topic = " and ".join(names) or "this"
    return {"question": f"What should I know about {topic}?", "answer": " ".join(firsts)}


def _matched(human: str) -> dict[str, Any]:
    response = _words(_field(human, "\n\nResponse: ", "\n\n"))
    reference = _sentences(_field(human, "Reference answer: ", "\n\n"))
    left = [s for s in reference if not _words(s) <= response]
    reason = f"the response does not state: {left[0]}" if left else "the response states it all"
    return {"stated": not left, "reason": reason}


def _asked(messages: Sequence[BaseMessage], human: str) -> str:
    """The schema a prompt asks for: the bound tool's, the system message's, by shape."""
    system = next((str(m.content) for m in messages if m.type == "system"), "")
    named = _SCHEMA.get() or next((s for key, s in _ASKS if key in system), "")
    if named:
        return named
    if human.startswith("Question:"):
        return "Claims" if "\nAnswer: " in human else "SubQuestions"
    if human.startswith("Answer: ") and "\nSentence: " in human:
        return "Referent"
    return "BatchVerdicts" if "\n\nClaims:\n" in human else "QuotedSupport"


def _claims(human: str, found: dict[int, str]) -> dict[str, Any]:
    return {"claims": _sentences(human.split("\nAnswer: ", 1)[-1])}


def _referent(human: str, found: dict[int, str]) -> dict[str, Any]:
    first = (_sentences(_field(human, "Answer: ", "\nSentence: ")) or [""])[0]
    asked = _field(human, "\nSentence: ").strip()
    pronoun = _field(human, '\nWords: "', '"').lower() in _PRONOUNS
    return {"referent": _name(first) if pronoun and first != asked else ""}


def _batched(human: str, found: dict[int, str]) -> dict[str, Any]:
    verdicts = []
    for line in human.split("\n\nClaims:\n", 1)[1].splitlines():
        number, claim = line.split(". ", 1)
        verdicts.append({"claim": int(number), **_verdict(claim, found)})
    return {"verdicts": verdicts}


def _sub_questions(human: str, found: dict[int, str]) -> dict[str, Any]:
    parts = re.split(r",\s+and\s+|;\s+|\?\s+", _field(human, "Question: "))
    asked = [p.strip(" ?.") for p in parts if p.strip(" ?.")]
    return {"questions": [p[0].upper() + p[1:] + "?" for p in asked]}


def _standalone(human: str, found: dict[int, str]) -> dict[str, Any]:
    conversation, _, question = human.rpartition("\n\nQuestion: ")
    question = question.strip()
    latest, names = "", []
    for latest in reversed(re.findall(r"^User: (.*)$", conversation, re.MULTILINE)):
        names = [m for m in _NAME.finditer(latest) if m.start() > 0 and _name(m.group(0))]
        if names:
            break
    pronoun = re.search(rf"\b({'|'.join(sorted(_PRONOUNS))})\b", question, re.IGNORECASE)
    if not names or pronoun is None:
        return {"standalone": question}
    name = names[0].group(0)
    if latest[: names[0].start()].lower().endswith("the "):
        name = "the " + name
    if pronoun.group(1).lower() in _POSSESSIVES:
        name += "'s"
    return {"standalone": question[: pronoun.start()] + name + question[pronoun.end() :]}


_REPLIES: dict[str, Callable[[str, dict[int, str]], dict[str, Any]]] = {
    "Claims": _claims,
    "Referent": _referent,
    "BatchVerdicts": _batched,
    "Relevance": lambda human, found: {
        "relevant": _relevant(_field(human, "\n\nPassage:\n", "\n\n"), human)
    },
    "Relevances": lambda human, found: {
        "verdicts": [{"passage": n, "relevant": _relevant(t, human)} for n, t in found.items()]
    },
    "SubQuestions": _sub_questions,
    "StandaloneQuestion": _standalone,
    "Answerable": _answerable,
    "AnswerSpan": _answerable,
    "QuestionAnswer": lambda human, found: _written(found),
    "Match": lambda human, found: _matched(human),
}


def keyword_reply(messages: Sequence[BaseMessage]) -> Any:
    """A reply to any prompt ragrecall sends, by the rules in this module's docstring: a dict
    of the schema's fields, or for a verdict token an ``AIMessage`` with its logprobs."""
    if messages[-1].type == "ai":  # the reply's start is given: one verdict token
        return _token(messages)
    human = _human(messages)
    found = passages(messages)
    reply = _REPLIES.get(_asked(messages, human))
    return reply(human, found) if reply else _verdict(_claim(human), found)


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
        bound = _SCHEMA.set(getattr(self, "tool_name", ""))  # keyword_reply reads it
        try:
            out = self.reply(messages)
        finally:
            _SCHEMA.reset(bound)
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
