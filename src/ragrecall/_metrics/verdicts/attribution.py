"""Claims -> verdicts against numbered passages, with checked evidence.

Two strategies share one interface: ``per_claim`` (one short constrained verdict per claim,
passages first so the prompt cache reuses them; or, with ``verdict="token"``, the reply's
start given and only the verdict token generated) and ``batched`` (all claims in one call, the
reply checked for one verdict per claim in order, falling back to per-claim when it is not).
Contexts larger than the judge's window are packed into several windows; a claim is
supported if any window supports it.

Where the judge gives logprobs, the decision mixes P(supported) with a word check: the share
of the claim's content words found in one sentence of the window. The small embedded judge
says "supported" too often; the word check catches many of those verdicts (benchmarks/RESULTS.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.prompt_values import PromptValue
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnableLambda

from ragrecall._core.errors import JudgeError
from ragrecall._core.schemas import ClaimVerdict, Usage
from ragrecall._judge.drive import Call, Reply, Steps, ask
from ragrecall._judge.structured import structured

from ..decision import UNCERTAIN_MARGIN, Decision
from ..prompts import (
    BATCHED_PROMPT,
    PER_CLAIM_PROMPT,
    PER_CLAIM_QUOTE_PROMPT,
    VERDICT_PREFIX,
    BatchVerdicts,
    PassageRenderer,
    QuotedSupport,
    Support,
    TokenSupport,
    render_passages,
)
from ..text.redaction import window_overlap
from ..text.windows import Window
from ..text.words import best_sentence, passages_quoting, quote_states
from .grounding import evidence_refusal
from .variants import Refiner

__all__ = [
    "Evidence",
    "Strategy",
    "Verdict",
    "attribute",
    "attribution_chain",
]

Strategy = Literal["per_claim", "batched"]
Evidence = Literal["quote", "align"]
Verdict = Literal["json", "token"]


def attribution_chain(
    judge: BaseChatModel,
    strategy: Strategy = "per_claim",
    evidence: Evidence = "align",
    prompt: ChatPromptTemplate | None = None,
    verdict: Verdict = "json",
) -> Runnable[dict[str, Any], dict[str, Any]]:
    """LCEL: ``{"passages", "claim"}`` (``"claims"`` if batched) -> ``{"raw", "parsed", ...}``.

    ``verdict="token"`` (per-claim, align): the judge is given the reply's start,
    ``VERDICT_PREFIX``, and generates one token, read through its log-probabilities. It needs
    a server that continues a final assistant message and returns logprobs (llama.cpp's).
    """
    if strategy == "batched":
        return (prompt or BATCHED_PROMPT) | structured(judge, BatchVerdicts)
    if evidence == "quote":
        return (prompt or PER_CLAIM_QUOTE_PROMPT) | structured(judge, QuotedSupport)
    if verdict == "token":
        prefilled = RunnableLambda(_prefill, name="verdict_prefix")
        read = RunnableLambda(_token_reply, name="read_verdict_token")
        return (prompt or PER_CLAIM_PROMPT) | prefilled | judge.bind(max_tokens=1) | read
    return (prompt or PER_CLAIM_PROMPT) | structured(judge, Support)


def _prefill(prompt: PromptValue) -> list[BaseMessage]:
    return [*prompt.to_messages(), AIMessage(content=VERDICT_PREFIX)]


def _token_reply(raw: BaseMessage) -> dict[str, Any]:
    p_true = _p_true(raw if isinstance(raw, AIMessage) else None)
    if p_true is None:
        error = JudgeError("no true/false log-probability in the judge's verdict token")
        return {"raw": raw, "parsed": None, "parsing_error": error}
    return {"raw": raw, "parsed": TokenSupport(p_supported=p_true), "parsing_error": None}


def attribute(
    claims: Sequence[str],
    windows: Sequence[Window],
    *,
    strategy: Strategy,
    evidence: Evidence,
    chain: Runnable[Any, Any],
    fallback_chain: Runnable[Any, Any] | None,
    decision: Decision,
    usage: Usage,
    render: PassageRenderer = render_passages,
    refiner: Refiner | None = None,
) -> Steps[list[ClaimVerdict]]:
    """One verdict per claim, in order. ``fallback_chain`` is the per-claim JSON chain used
    when a batched reply cannot be matched to the claims, or a verdict token cannot be read.
    Where the judge gives logprobs, ``decision`` decides each claim; a token verdict near it
    is asked again in variants by ``refiner`` (``variants.Refiner``)."""
    verdicts: dict[int, ClaimVerdict] = {}
    for window in windows:
        pending = [i for i in range(len(claims)) if not _attributed(verdicts.get(i))]
        if not pending:
            break
        passages = render(window)
        found: dict[int, ClaimVerdict] = {}
        if strategy == "batched":
            try:
                found = yield from _batched(
                    claims, pending, window, passages, chain, evidence, decision, usage
                )
            except JudgeError:
                if fallback_chain is None:
                    raise
        for i in pending:
            if i not in found:
                call = {"passages": passages, "claim": claims[i]}
                if strategy == "batched":
                    reply = yield from ask(Call(fallback_chain or chain, call), usage)
                else:
                    try:
                        reply = yield from ask(Call(chain, call), usage)
                    except JudgeError:
                        if fallback_chain is None:
                            raise
                        reply = yield from ask(Call(fallback_chain, call), usage)
                asked: list[float] = []
                if refiner is not None and isinstance(reply.parsed, TokenSupport):
                    refine = refiner.refine(claims[i], passages, reply, window, decision, usage)
                    reply, asked = yield from refine
                found[i] = _verdict(claims[i], reply, window, evidence, decision)
                if asked:
                    found[i] = found[i].model_copy(update={"p_variants": asked})
        for i, verdict in found.items():
            if i not in verdicts or verdict.attributed:
                verdicts[i] = verdict
    return [verdicts[i] for i in range(len(claims))]


def _attributed(verdict: ClaimVerdict | None) -> bool:
    return verdict is not None and verdict.attributed


def _batched(
    claims: Sequence[str],
    pending: list[int],
    window: Window,
    passages: str,
    chain: Runnable[Any, Any],
    evidence: Evidence,
    decision: Decision,
    usage: Usage,
) -> Steps[dict[int, ClaimVerdict]]:
    listed = "\n".join(f"{n}. {claims[i]}" for n, i in enumerate(pending, start=1))

    def check(parsed: Any) -> None:
        numbers = [v.claim for v in parsed.verdicts]
        if numbers != list(range(1, len(pending) + 1)):
            raise JudgeError(
                f"expected verdicts for claims 1..{len(pending)} in order, got claims {numbers}"
            )

    reply = yield from ask(Call(chain, {"passages": passages, "claims": listed}), usage, check)
    assert isinstance(reply.parsed, BatchVerdicts)
    return {
        i: _decide(claims[i], v.supported, v.passage, v.quote, window, evidence, None, decision)
        for i, v in zip(pending, reply.parsed.verdicts, strict=True)
    }


def _verdict(
    claim: str, reply: Reply, window: Window, evidence: Evidence, decision: Decision
) -> ClaimVerdict:
    parsed = reply.parsed
    if isinstance(parsed, TokenSupport):  # decided from P(supported) alone
        return _decide(claim, False, None, None, window, evidence, parsed.p_supported, decision)
    assert isinstance(parsed, (Support, QuotedSupport))
    quote = parsed.quote if isinstance(parsed, QuotedSupport) else None
    p_supported = _p_true(reply.raw)
    return _decide(
        claim, parsed.supported, parsed.passage, quote, window, evidence, p_supported, decision
    )


def _decide(
    claim: str,
    supported: bool,
    cited: int | None,
    quote: str | None,
    window: Window,
    evidence: Evidence,
    p_supported: float | None,
    decision: Decision,
) -> ClaimVerdict:
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


def _p_true(raw: AIMessage | None) -> float | None:
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
