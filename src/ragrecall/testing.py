"""Gate recall in your own test suite.

    from ragrecall.testing import assert_recall

    def test_retriever_finds_the_facts():
        sample = {"user_input": q, "reference": gold, "retrieved_contexts": retrieve(q)}
        assert_recall(sample, min_score=0.8)

A failure lists the score, the missing claims with the judge's reason for each, and the
supported ones with their chunk and evidence; an unscorable sample fails with its reason.
With the pytest plugin (installed with ragrecall), the ``assert_recall`` fixture does the same
with the session's judge: ``--recall-judge`` / ``$RAGRECALL_JUDGE`` (``local`` or
``provider:model``), or your own ``recall_judge`` fixture returning a chat model.

``KeywordJudge`` is an offline stand-in for a judge in tests of the code around the scoring
(adapters, pipelines, CI wiring): it answers ragrecall's prompts by word inclusion, instantly
and deterministically. It measures nothing; never use its scores as results.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from ._judge.resolve import JudgeLike
from ._metrics.base import Metric
from ._metrics.registry import build_metrics
from ._schemas import RecallResult, Sample

__all__ = [
    "KeywordJudge",
    "RecallAssertionError",
    "aassert_recall",
    "assert_recall",
    "recall_metric",
]


class RecallAssertionError(AssertionError):
    """Recall below the minimum, or unscorable; ``result`` holds the whole RecallResult."""

    def __init__(self, message: str, result: RecallResult):
        super().__init__(message)
        self.result = result


def recall_metric(
    metric: Metric[RecallResult] | str | None = None, judge: JudgeLike = None
) -> Metric[RecallResult]:
    """A metric object: ``metric`` itself, or built by name (default ``context_recall``)."""
    if isinstance(metric, Metric):
        if judge is not None:
            raise ValueError("pass either a metric object or a judge, not both")
        return metric
    return build_metrics([metric or "context_recall"], judge)[0]


def assert_recall(
    sample: Sample | Mapping[str, Any],
    min_score: float = 1.0,
    *,
    judge: JudgeLike = None,
    metric: Metric[RecallResult] | str | None = None,
) -> RecallResult:
    """Score ``sample`` and raise RecallAssertionError when the score is below ``min_score``
    (default 1.0: every claim supported) or the sample is unscorable; return the result.

    ``metric``: a Metric object (configured as you like) or a metric name; ``judge``: a chat
    model, ``"provider:model"`` or None for the embedded judge (only with a metric name).
    """
    m = recall_metric(metric, judge)
    result = m.score(sample)
    check(result, min_score, m.name, sample)
    return result


async def aassert_recall(
    sample: Sample | Mapping[str, Any],
    min_score: float = 1.0,
    *,
    judge: JudgeLike = None,
    metric: Metric[RecallResult] | str | None = None,
) -> RecallResult:
    """Async ``assert_recall``."""
    m = recall_metric(metric, judge)
    result = await m.ascore(sample)
    check(result, min_score, m.name, sample)
    return result


def check(
    result: RecallResult, min_score: float, name: str, sample: Sample | Mapping[str, Any]
) -> None:
    """Raise RecallAssertionError unless ``result`` scored at least ``min_score``."""
    question = (
        sample.user_input
        if isinstance(sample, Sample)
        else (sample.get("user_input") or sample.get("question"))
    )
    about = f" for {question!r}" if question else ""
    if result.score is None:
        raise RecallAssertionError(
            f"{name} could not score the sample{about}: {result.reason}", result
        )
    if result.score >= min_score:
        return
    lines = [f"{name} {result.score:.2f} < min_score {min_score:.2f}{about}"]
    if result.missing:
        lines.append("missing claims:")
        reasons = {v.claim: v.reason for v in result.verdicts}
        for claim in result.missing:
            why = reasons.get(claim)
            lines.append(f"  - {claim}" + (f"  ({why})" if why else ""))
    supported = [v for v in result.verdicts if v.attributed]
    if supported:
        lines.append("supported claims:")
        for v in supported:
            where = f" [chunk {', '.join(v.chunk_ids)}]" if v.chunk_ids else ""
            quote = f' "{v.evidence}"' if v.evidence else ""
            lines.append(f"  + {v.claim}{where}{quote}")
    if result.reason:
        lines.append(f"note: {result.reason}")
    raise RecallAssertionError("\n".join(lines), result)


_PASSAGE = re.compile(r'<passage id="(\d+)">\n(.*?)\n</passage>', re.DOTALL)
_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


class KeywordJudge(BaseChatModel):
    """A rule-based stand-in for a judge, for tests (it measures nothing): a claim is
    supported by the first passage that holds all its words (quoted whole); a passage is
    relevant when the reference answer holds all its words; a reference splits into claims at
    ". ". It answers in JSON text, as a model with no tool calling does. ``fail=True`` makes
    every call raise ``ConnectionError`` (a judge that is down); ``calls`` counts the calls."""

    fail: bool = False
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "ragrecall-keyword"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls += 1
        if self.fail:
            raise ConnectionError("the judge is down")
        human = next((str(m.content) for m in messages if m.type == "human"), "")
        reply = json.dumps(_keyword_reply(human))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply))])


def _keyword_reply(human: str) -> dict[str, Any]:
    passages = {int(n): text for n, text in _PASSAGE.findall(human)}
    if "\nReference answer: " in human:  # relevance (context precision)
        reference = _words(human.split("\nReference answer: ", 1)[1].split("\n\n", 1)[0])
        if not passages:  # one passage a call
            passage = human.split("\n\nPassage:\n", 1)[1].rsplit("\n\n", 1)[0]
            return {"relevant": _words(passage) <= reference}
        return {
            "verdicts": [
                {"passage": n, "relevant": _words(text) <= reference}
                for n, text in passages.items()
            ]
        }
    if human.startswith("Question:") and "\nAnswer: " in human:  # decomposition
        answer = human.split("\nAnswer: ", 1)[1]
        return {"claims": [c.strip() for c in answer.split(". ") if c.strip()]}
    if "\n\nClaims:\n" in human:  # several claims at once
        verdicts = []
        for line in human.split("\n\nClaims:\n", 1)[1].splitlines():
            number, claim = line.split(". ", 1)
            verdicts.append({"claim": int(number), **_support(claim, passages)})
        return {"verdicts": verdicts}
    return _support(human.split("\n\nClaim: ", 1)[-1], passages)


def _support(claim: str, passages: Mapping[int, str]) -> dict[str, Any]:
    hit = next((n for n, text in passages.items() if _words(claim) <= _words(text)), 0)
    return {"supported": hit > 0, "passage": hit, "quote": passages.get(hit, "")}
