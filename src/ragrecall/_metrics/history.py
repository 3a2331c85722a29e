"""A conversation's earlier turns credited with the claims this turn's contexts leave open:
ContextRecall asks each open claim of the last ``HISTORY_TURNS`` turns' retrieved contexts,
the latest turn first, and the first turn whose contexts support it is credited with it
(its verdict's ``turn``) — the rule Sufficiency's ``credit_history`` follows for
sub-questions: the conversation already holds the claim, so it counts as supported."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .._core.schemas import Chunk, ClaimVerdict, Turn
from .._judge.drive import Steps
from .standalone import HISTORY_TURNS
from .text.redaction import redact_chunks

__all__ = ["credit_earlier_turns"]

# The verdicts on some claims against some chunks (ContextRecall's attribution).
Judged = Callable[[list[str], list[Chunk]], Steps[list[ClaimVerdict]]]


def credit_earlier_turns(
    verdicts: Sequence[ClaimVerdict],
    history: Sequence[Turn],
    judged: Judged,
    *,
    withhold_injections: bool,
) -> Steps[tuple[list[ClaimVerdict], str]]:
    """``verdicts`` with each claim not supported replaced by the verdict of the latest
    earlier turn whose contexts support it (``turn`` its number from 1, ``chunk_ids`` that
    turn's chunks), and a note naming the earlier turns' chunks redacted or withheld ("" if
    none). Only the claims still open are asked of each turn, one attribution per turn; a
    turn without contexts costs nothing."""
    out = list(verdicts)
    notes: list[str] = []
    first = max(len(history) - HISTORY_TURNS, 0)
    for number in range(len(history), first, -1):
        open_ = [i for i, verdict in enumerate(out) if not verdict.attributed]
        if not open_:
            break
        chunks = [c for c in history[number - 1].retrieved_contexts or () if c.text.strip()]
        if withhold_injections:  # an earlier turn's chunk is shown to the judge too
            chunks, removed = redact_chunks(chunks)
            if removed:
                notes.append(f"turn {number}: {removed}")
        if not chunks:
            continue
        found = yield from judged([out[i].claim for i in open_], chunks)
        for i, verdict in zip(open_, found, strict=True):
            if verdict.attributed:
                reason = f"supported by turn {number}'s contexts; {verdict.reason}".rstrip("; ")
                out[i] = verdict.model_copy(update={"turn": number, "reason": reason})
    return out, "; ".join(notes)
