"""Answer match: does the response state the reference answer? (the example metric)

One judge call with a typed reply (``Match``); the score is 1.0 when the judge finds the
reference answer in the response, else 0.0. ``_steps`` is the whole metric: it yields its judge
call and returns the result, and ``score`` and ``ascore`` both drive it. A sample it cannot
judge, and a judge call that fails, give an unscorable result with the reason.
"""

from __future__ import annotations

from typing import Any

from langchain_core.prompts import ChatPromptTemplate

from ..._core.schemas import RecallResult, Sample, Usage
from ..._judge.drive import Call, Steps, ask
from ..._judge.resolve import JudgeLike
from ..._judge.structured import structured
from ..base import Metric
from .prompt import MATCH_PROMPT, Match

__all__ = ["AnswerMatch"]


class AnswerMatch(Metric[RecallResult]):
    """Does the response state the reference answer? Score 1.0 (yes) or 0.0 (no).

    Args:
        judge: a LangChain chat model, a ``"provider:model"`` string, or None for the
            embedded local judge.
        prompt: replaces ``MATCH_PROMPT``.
        **policy: ``max_retries`` and ``timeout`` of each judge call.
    """

    name = "answer_match"
    result_type = RecallResult
    needs = (("reference",), ("response",))

    def __init__(
        self, judge: JudgeLike = None, *, prompt: ChatPromptTemplate = MATCH_PROMPT, **policy: Any
    ):
        super().__init__(judge, **policy)
        self.prompt = prompt

    def _steps(self, sample: Sample, usage: Usage) -> Steps[RecallResult]:
        reference = (sample.reference or "").strip()
        response = (sample.response or "").strip()
        if not reference or not response:
            return self.unscorable("needs a reference and a response to compare")
        question = (sample.user_input or "").strip() or "(not given)"
        inputs = {"question": question, "reference": reference, "response": response}
        reply = yield from ask(Call(self.prompt | structured(self.judge, Match), inputs), usage)
        assert isinstance(reply.parsed, Match)
        verdict = reply.parsed
        return RecallResult(
            metric=self.name, score=float(verdict.stated), status="scored", reason=verdict.reason
        )
