"""The claims ContextRecall scores and the question they are split under: the sample's own
``reference_claims``, the claim store's, or the reference decomposed now; in a conversation
(a sample with ``history``) the question is first made to stand alone by the step Sufficiency
takes (``standalone.py``), so the claims are split under the question as it stands alone."""

from __future__ import annotations

from typing import Any, Protocol

from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable

from .._core.schemas import ClaimSet, Sample, Usage
from .._judge.drive import Steps
from .claims.decompose import ClaimCache, ClaimMode, clean_claims, decompose
from .standalone import standalone

__all__ = ["ClaimSource", "question_asked", "reference_claims"]


class ClaimSource(Protocol):
    """What of ContextRecall these steps read: its settings and its judge's chains."""

    claims: ClaimMode
    cache: ClaimCache
    decontext_prompt: ChatPromptTemplate | None
    standalone_prompt: ChatPromptTemplate

    def judge_id(self) -> str: ...

    def _chain(self, kind: str) -> Runnable[Any, Any]: ...

    def _decontext_chain(self) -> Runnable[Any, Any]: ...


def question_asked(
    metric: ClaimSource, sample: Sample, usage: Usage
) -> Steps[tuple[str | None, str]]:
    """The question the reference is split under, and a note: in a conversation, the judge's
    checked standalone rewrite (or the question, and why the rewrite was refused); else the
    question as asked, with no call."""
    question = sample.user_input
    if not sample.history or not (question or "").strip():
        return question, ""
    return (
        yield from standalone(
            (question or "").strip(),
            sample.history,
            chain=metric._chain("standalone"),
            prompt=metric.standalone_prompt,
            cache=metric.cache,
            judge_id=metric.judge_id(),
            usage=usage,
        )
    )


def reference_claims(
    metric: ClaimSource, sample: Sample, question: str | None, usage: Usage
) -> Steps[ClaimSet]:
    """The claims ``sample`` is scored against: its ``reference_claims`` (repeats and items
    with no letter or digit left out, the note says how many), or its reference's, split
    under ``question`` (``claims.decompose``)."""
    listed = sample.reference_claims or []
    given = clean_claims(listed)
    if given:
        left = len(listed) - len(given)
        note = (
            f"{left} of the {len(listed)} given claims left out (a repeat, or no letter or digit)"
            if left
            else ""
        )
        return ClaimSet(claims=given, source="given", note=note)
    reference = (sample.reference or "").strip()
    if not reference:
        return ClaimSet(claims=[], source="given", note="the reference is empty")
    decontext = None if metric.decontext_prompt is None else metric._decontext_chain
    return (
        yield from decompose(
            reference,
            question,
            mode=metric.claims,
            chain=lambda: metric._chain("decompose"),
            decontext=decontext,
            judge_id=metric.judge_id,
            cache=metric.cache,
            usage=usage,
        )
    )
