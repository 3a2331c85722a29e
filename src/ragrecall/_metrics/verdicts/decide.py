"""From the judge's reply on one claim to a checked verdict: the decision (where the judge
gives logprobs, P(supported) mixed with the word check) and the evidence that must bear it
out (a quote found in the passages and stating the claim, or the cited passage's
best-matching sentence; evidence that addresses the judge never counts).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from langchain_core.messages import AIMessage

from ragrecall._core.schemas import ClaimVerdict
from ragrecall._judge.drive import Reply

from ..decision import UNCERTAIN_MARGIN, Decision
from ..prompts import QuotedSupport, Support, TokenSupport
from ..text.redaction import window_overlap
from ..text.windows import Window
from ..text.words import best_sentence, passages_quoting, quote_states
from .grounding import evidence_refusal

__all__ = ["Evidence", "decide", "p_true", "verdict_of"]

Evidence = Literal["quote", "align"]  # the judge quotes, or the library aligns


def verdict_of(
    claim: str, reply: Reply, window: Window, evidence: Evidence, decision: Decision
) -> ClaimVerdict:
    """The verdict on ``claim`` from the judge's ``reply`` (a JSON verdict, or a verdict token
    read through its logprobs)."""
    parsed = reply.parsed
    if isinstance(parsed, TokenSupport):  # decided from P(supported) alone
        return decide(claim, False, None, None, window, evidence, parsed.p_supported, decision)
    assert isinstance(parsed, (Support, QuotedSupport))
    quote = parsed.quote if isinstance(parsed, QuotedSupport) else None
    p_supported = p_true(reply.raw)
    return decide(
        claim, parsed.supported, parsed.passage, quote, window, evidence, p_supported, decision
    )


def decide(
    claim: str,
    supported: bool,
    cited: int | None,
    quote: str | None,
    window: Window,
    evidence: Evidence,
    p_supported: float | None,
    decision: Decision,
) -> ClaimVerdict:
    """The verdict on ``claim``: the judge's ``supported`` (or, with ``p_supported``, the
    decision's mix of it with the word check), borne out by the evidence (``quote`` found in
    the window and stating the claim, or the best-matching sentence of the ``cited`` passage)."""
    confidence: float | None = None
    overlap: float | None = None
    uncertain = False
    overturned = ""
    if p_supported is not None:
        overlap = window_overlap(claim, window)
        judge_says = p_supported >= decision.support_threshold
        supported = decision.counts(p_supported, overlap)
        uncertain = abs(decision.margin(p_supported, overlap)) < UNCERTAIN_MARGIN
        confidence = p_supported if supported else 1 - p_supported
        if supported != judge_says:
            leaning = "supported" if judge_says else "unsupported"
            overturned = (
                f"the judge leaned {leaning} (P {p_supported:.2f}), but the best sentence "
                f"holds {overlap:.0%} of the claim's words"
            )

    def verdict(
        attributed: bool,
        reason: str,
        chunk_ids: Sequence[str] = (),
        evidence: str | None = None,
        verified: bool = False,
    ) -> ClaimVerdict:
        return ClaimVerdict(
            claim=claim,
            attributed=attributed,
            chunk_ids=list(chunk_ids),
            evidence=evidence,
            evidence_verified=verified,
            reason=reason,
            confidence=confidence,
            p_supported=p_supported,
            word_overlap=overlap,
            uncertain=uncertain,
        )

    if not supported:
        return verdict(False, overturned or "the judge found no support")
    cited_passages = [p for p in window if p.number == cited]
    if evidence == "quote":
        # One search over the window's passages (not one check each), the cited one first.
        hits = (
            [window[i] for i in passages_quoting(quote, [p.text for p in window])] if quote else []
        )
        found = [p for p in hits if p.number == cited] + [p for p in hits if p.number != cited]
        # A quote counts only if it states the claim ("verified" states nothing). Passages
        # that address the judge are withheld before it reads them (withhold_injections).
        states = quote_states(quote or "", claim)
        refused = evidence_refusal(claim, quote or "", found[0].text) if found and states else ""
        if found and states and not refused:
            p = found[0]
            note = "" if p.number == cited else f" (found in passage {p.number}, not {cited})"
            note += f"; {overturned}" if overturned else ""
            return verdict(True, "supported; quote verified" + note, [p.chunk.id], quote, True)
        why = (
            "its quote is not in the passages"
            if not found
            else refused or "its quote does not state the claim"
        )
        chunk_ids = [p.chunk.id for p in (found or cited_passages)][:1]
        return verdict(False, f"the judge said supported, but {why}", chunk_ids, quote or None)
    candidates = cited_passages or list(window)
    best = max(((best_sentence(claim, p.text), p) for p in candidates), key=lambda x: x[0][1])
    (sentence, _), passage = best
    refused = evidence_refusal(claim, sentence, passage.text)
    if refused:  # the judge's word alone is not enough: the evidence must bear it out
        return verdict(
            False, f"the judge said supported, but {refused}", [passage.chunk.id], sentence
        )
    # cited is None: no passage was asked for (a verdict token), so nothing to report.
    valid = cited is None or cited_passages
    note = "" if valid else f"; the judge cited no valid passage ({cited}), aligned"
    note += f"; {overturned}" if overturned else ""
    return verdict(True, "supported" + note, [passage.chunk.id], sentence, True)


def p_true(raw: AIMessage | None) -> float | None:
    """P(supported) from the logprobs of the first true/false token, when the judge gives them."""
    logprobs = (raw.response_metadata.get("logprobs") if raw is not None else None) or {}
    for token in logprobs.get("content") or []:
        if token.get("token", "").strip().lower() not in ("true", "false"):
            continue
        mass = {"true": 0.0, "false": 0.0}
        alternatives = token.get("top_logprobs") or [token]
        for alt in alternatives:
            word = alt.get("token", "").strip().lower()
            if word in mass:
                mass[word] = max(mass[word], math.exp(alt["logprob"]))
        total = mass["true"] + mass["false"]
        return mass["true"] / total if total > 0 else None
    return None
