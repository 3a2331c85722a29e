"""One attempt of a ``generate`` run: the judge writes an item (a question and its answer)
from the plan's chunks, then the checks run on it, cheapest first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import Runnable

from .._core.errors import JudgeError
from .._core.schemas import Usage
from .._judge.drive import Call, Steps, ask
from .._metrics.context_recall import ContextRecall
from .._metrics.prompts import Passage, render_passages
from .check import Verdict, copy_overlap, is_near_duplicate, names_source, supported
from .plan import Plan
from .prompts import QuestionAnswer

__all__ = ["ITEM_REPLY_TOKENS", "attempt"]

# A question and a short answer fit in far fewer; a small model that loses its way stops here.
ITEM_REPLY_TOKENS = 400


def attempt(
    plan: Plan,
    chain: Runnable[Any, Any],
    recall: ContextRecall,
    kept: Sequence[str],
    max_overlap: float,
    duplicate_threshold: float,
    usage: Usage,
) -> Steps[tuple[dict[str, Any], str, str]]:
    """One attempt: the judge writes an item from the plan's chunks, then the checks run,
    cheapest first. Returns the row, and the reason and detail of a rejection ("" if kept)."""
    sources = list(plan.sources)
    row: dict[str, Any] = {
        "sample_id": f"gen-{plan.number}",
        "user_input": "",
        "reference": "",
        "reference_context_ids": [c.id for c in sources],
        "reference_contexts": [c.text for c in sources],
        "question_kind": plan.kind,
    }
    passages = render_passages([Passage(i, c, c.text) for i, c in enumerate(sources, start=1)])
    try:
        reply = yield from ask(Call(chain, {"passages": passages}), usage)
    except JudgeError as err:
        return row, "invalid_reply", str(err)
    except Exception as err:  # retried already: the judge is down, not this item bad
        raise JudgeError(f"the judge failed: {type(err).__name__}: {err}") from err
    item = reply.parsed
    assert isinstance(item, QuestionAnswer)
    question, reference = " ".join(item.question.split()), " ".join(item.answer.split())
    row.update(user_input=question, reference=reference)
    if not question or not reference:
        return row, "invalid_reply", "an empty question or answer"
    if names_source(question) or names_source(reference):
        return row, "names_source", "it speaks of the passages, which a user never saw"
    overlap = copy_overlap(question, [c.text for c in sources])
    row["overlap"] = round(overlap, 3)
    if overlap > max_overlap:
        return row, "copies_chunk", f"{overlap:.0%} of its word trigrams are the chunks'"
    if is_near_duplicate(question, kept, duplicate_threshold):
        return row, "duplicate", "a near-duplicate of a question kept already"
    check: Verdict = yield from supported(recall, question, reference, sources, usage)
    row["reference_claims"] = check.claims
    if check.reason:
        return row, check.reason, check.detail
    row["reference_context_ids"] = [c.id for c in check.used]
    row["reference_contexts"] = [c.text for c in check.used]
    return row, "", ""
