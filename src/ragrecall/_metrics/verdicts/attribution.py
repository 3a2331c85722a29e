"""Claims -> verdicts against numbered passages, with checked evidence.

Two strategies share one interface: ``per_claim`` (one short constrained verdict per claim,
passages first so the prompt cache reuses them; or, with ``verdict="token"``, the reply's
start given and only the verdict token generated) and ``batched`` (all claims in one call, the
reply checked for one verdict per claim in order, falling back to per-claim when it is not).
Contexts larger than the judge's window are packed into several windows; a claim is
supported if any window supports it. A claim that a passage states word for word, in whole
sentences or lines, is supported without asking the judge (``verbatim.py``).

Where the judge gives logprobs, the decision (``decide.py``) mixes P(supported) with a word
check: the share of the claim's content words found in one sentence of the window. The small
embedded judge says "supported" too often; the word check catches many of those verdicts
(benchmarks/RESULTS.md).
"""

from __future__ import annotations

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

from ..decision import Decision
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
from ..text.windows import Window
from .decide import Evidence, decide, p_true, verdict_of
from .quarantine import second_look
from .variants import Refiner
from .verbatim import stated

__all__ = [
    "Strategy",
    "Verdict",
    "attribute",
    "attribution_chain",
]

Strategy = Literal["per_claim", "batched"]
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
    p = p_true(raw if isinstance(raw, AIMessage) else None)
    if p is None:
        error = JudgeError("no true/false log-probability in the judge's verdict token")
        return {"raw": raw, "parsed": None, "parsing_error": error}
    return {"raw": raw, "parsed": TokenSupport(p_supported=p), "parsing_error": None}


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

    def ask_one(call: dict[str, Any]) -> Steps[Reply]:
        """One claim's verdict call: per-claim JSON for a batch, else the chain, falling
        back to per-claim JSON where a verdict token cannot be read."""
        if strategy == "batched":
            return (yield from ask(Call(fallback_chain or chain, call), usage))
        try:
            return (yield from ask(Call(chain, call), usage))
        except JudgeError:
            if fallback_chain is None:
                raise
            return (yield from ask(Call(fallback_chain, call), usage))

    verdicts: dict[int, ClaimVerdict] = {}
    for window in windows:
        pending = [i for i in range(len(claims)) if not _attributed(verdicts.get(i))]
        if not pending:
            break
        # A claim the window states word for word needs no judge (verbatim.py).
        said = stated([claims[i] for i in pending], window)
        stated_here = {pending[k]: v for k, v in said.items()}
        judged = [i for i in pending if i not in stated_here]
        passages = render(window) if judged else ""
        found: dict[int, ClaimVerdict] = {}
        if strategy == "batched" and judged:
            try:
                found = yield from _batched(
                    claims, judged, window, passages, chain, evidence, decision, usage
                )
            except JudgeError:
                if fallback_chain is None:
                    raise

        for i in judged:
            if i not in found:
                reply = yield from ask_one({"passages": passages, "claim": claims[i]})
                asked: list[float] = []
                if refiner is not None and isinstance(reply.parsed, TokenSupport):
                    refine = refiner.refine(claims[i], passages, reply, window, decision, usage)
                    reply, asked = yield from refine
                found[i] = verdict_of(claims[i], reply, window, evidence, decision)
                if asked:
                    found[i] = found[i].model_copy(update={"p_variants": asked})
        for i in sorted(found):  # an order hidden in view must not decide (quarantine.py)
            found[i] = yield from second_look(
                claims[i],
                found[i],
                window,
                ask_one=ask_one,
                evidence=evidence,
                decision=decision,
                render=render,
            )
        for i, verdict in (found | stated_here).items():
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
        i: decide(claims[i], v.supported, v.passage, v.quote, window, evidence, None, decision)
        for i, v in zip(pending, reply.parsed.verdicts, strict=True)
    }
