"""More than two values: a verdict near the decision asked again in other words.

A small judge's verdict token is often nearly sure either way; where it lies near the
decision (``|margin| < band``, the margin of ``Decision``), ``K`` further variants are asked
(``prompts.VERDICT_VARIANTS``: a flipped question, other label words, the claim before the
passages). Each variant's log-odds are calibrated against its own content-free baseline (the
same prompt with passages and claim "N/A", asked once per metric: contextual calibration,
Zhao et al. 2021) and moved onto the base prompt's scale by the base prompt's baseline, so
the default decision keeps its meaning:

    logit P_k' = logit P_k - logit B_k + logit B_0        (k = 1..K)
    P = sigmoid(mean(logit P_0, logit P_1', ..., logit P_K'))

Claims outside the band cost nothing extra. Only verdicts read from a token (``verdict=
"token"``: the judge continues a given reply start) are refined; a variant whose labels are
not in the judge's top log-probabilities is left out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.prompt_values import PromptValue
from langchain_core.runnables import Runnable, RunnableLambda

from ragrecall._core.errors import JudgeError
from ragrecall._core.schemas import Usage
from ragrecall._judge.drive import Call, Reply, Steps, ask

from ..decision import Decision
from ..prompts import TokenSupport, VerdictVariant
from ..text.redaction import window_overlap
from ..text.windows import Window

__all__ = [
    "CONTENT_FREE",
    "DEFAULT_BAND",
    "DEFAULT_VARIANTS",
    "Refiner",
    "combine",
    "label_probability",
    "mean_probability",
    "variant_chain",
]

# Off by default: on 102 LFQA sentences (benchmarks/variants.py, RESULTS.md 2026-11-25) the
# best setting (variants=1, the flipped question, band 0.1) moved AUC +0.012 and Brier -0.007
# at 1.26 times the calls, but balanced accuracy -0.022: not enough to turn it on unasked.
DEFAULT_VARIANTS = 0
DEFAULT_BAND = 0.1
CONTENT_FREE = "N/A"
_CLIP = 1e-4


def _logit(p: float) -> float:
    p = min(max(p, _CLIP), 1 - _CLIP)
    return math.log(p / (1 - p))


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def combine(base: float, variants: Sequence[tuple[float, float]], base_free: float) -> list[float]:
    """``[P_0, P_1', ..., P_K']`` (each variant on the base prompt's scale) from the base
    P(supported), ``(P_k, B_k)`` pairs of each variant's P and content-free baseline, and the
    base prompt's baseline ``B_0``; the combined P is ``mean_probability`` of the list."""
    shift = _logit(base_free)
    return [base, *(_sigmoid(_logit(p) - _logit(b) + shift) for p, b in variants)]


def mean_probability(ps: Sequence[float]) -> float:
    """The probability of the mean log-odds of ``ps``."""
    return _sigmoid(sum(_logit(p) for p in ps) / len(ps))


def label_probability(raw: BaseMessage | None, yes: str, no: str) -> float | None:
    """P(yes) / (P(yes) + P(no)) from the first token that is either word (case and spaces
    ignored), over its top log-probabilities; None when no token is."""
    meta = raw.response_metadata if isinstance(raw, AIMessage) else {}
    for token in (meta.get("logprobs") or {}).get("content") or []:
        if token.get("token", "").strip().lower() not in (yes, no):
            continue
        mass = {yes: 0.0, no: 0.0}
        for alt in token.get("top_logprobs") or [token]:
            word = alt.get("token", "").strip().lower()
            if word in mass:
                mass[word] = max(mass[word], math.exp(alt["logprob"]))
        total = mass[yes] + mass[no]
        return mass[yes] / total if total > 0 else None
    return None


def variant_chain(judge: BaseChatModel, variant: VerdictVariant) -> Runnable[Any, Any]:
    """LCEL: ``{"passages", "claim"}`` -> ``{"raw", "parsed": TokenSupport, ...}``: the
    variant's prompt, its reply start, one token, read as P(yes)."""

    def prefill(prompt: PromptValue) -> list[BaseMessage]:
        return [*prompt.to_messages(), AIMessage(content=variant.prefix)]

    def read(raw: BaseMessage) -> dict[str, Any]:
        p = label_probability(raw, variant.yes, variant.no)
        if p is None:
            error = JudgeError(f"no {variant.yes}/{variant.no} log-probability in the reply")
            return {"raw": raw, "parsed": None, "parsing_error": error}
        return {"raw": raw, "parsed": TokenSupport(p_supported=p), "parsing_error": None}

    return (
        variant.prompt
        | RunnableLambda(prefill, name=f"{variant.name}_prefix")
        | judge.bind(max_tokens=1)
        | RunnableLambda(read, name=f"read_{variant.name}")
    )


@dataclass
class Refiner:
    """``base`` is the token verdict's chain, ``chains`` the first K variants' (in
    ``VERDICT_VARIANTS`` order); ``free`` keeps each prompt's content-free baseline by its
    index (0: the base), for as long as its owner (a metric) keeps it."""

    base: Runnable[Any, Any]
    chains: Sequence[Runnable[Any, Any]]
    band: float
    free: dict[int, float | None] = field(default_factory=dict)

    def refine(
        self,
        claim: str,
        passages: str,
        reply: Reply,
        window: Window,
        decision: Decision,
        usage: Usage,
    ) -> Steps[tuple[Reply, list[float]]]:
        """The token verdict ``reply`` with the combined P(supported), and ``[P_0, P_1', ...]``
        (see ``combine``), for a claim within the band; ``reply`` and ``[]`` for a sure one
        (no call), or when no variant could be read."""
        assert isinstance(reply.parsed, TokenSupport)
        p0 = reply.parsed.p_supported
        overlap = window_overlap(claim, window)
        if not self.chains or abs(decision.margin(p0, overlap)) >= self.band:
            return reply, []
        base_free = yield from self._baseline(0, self.base, usage)
        if base_free is None:
            return reply, []
        pairs = []
        for k, chain in enumerate(self.chains, start=1):
            free = yield from self._baseline(k, chain, usage)
            p = yield from _ask(chain, passages, claim, usage)
            if free is not None and p is not None:
                pairs.append((p, free))
        if not pairs:
            return reply, []
        asked = combine(p0, pairs, base_free)
        return Reply(TokenSupport(p_supported=mean_probability(asked)), reply.raw), asked

    def _baseline(self, k: int, chain: Runnable[Any, Any], usage: Usage) -> Steps[float | None]:
        if k not in self.free:  # two samples at once may both ask: the same answer
            self.free[k] = yield from _ask(chain, CONTENT_FREE, CONTENT_FREE, usage)
        return self.free[k]


def _ask(chain: Runnable[Any, Any], passages: str, claim: str, usage: Usage) -> Steps[float | None]:
    try:
        reply = yield from ask(Call(chain, {"passages": passages, "claim": claim}), usage)
    except JudgeError:
        return None
    return reply.parsed.p_supported if isinstance(reply.parsed, TokenSupport) else None
