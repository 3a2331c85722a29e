"""Dry-run cost estimates: judge calls and tokens before any judge is called."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._core.schemas import Chunk, Sample
from .._judge.resolve import DEFAULT_CONTEXT_WINDOW, JudgeLike, context_window
from .base import Metric
from .claims.decompose import clean_claims, needs_judge, rule_claims
from .claims.decontext import needs_context, referring_span
from .context_recall import ContextRecall
from .prompts import (
    BATCHED_PROMPT,
    DECOMPOSE_PROMPT,
    DECONTEXT_PROMPT,
    PER_CLAIM_PROMPT,
    PER_CLAIM_QUOTE_PROMPT,
    STANDALONE_PROMPT,
    VERDICT_PREFIX,
    render_passages,
)
from .registry import MetricOptions, metric_class
from .standalone import render_history
from .text.windows import estimate_tokens, pack
from .verdicts.verbatim import stated

__all__ = [
    "PRICES",
    "Estimate",
    "RecallPlan",
    "estimate_cost",
    "known_price",
    "recall_plan",
    "run_estimator",
]

# USD per million tokens (input, output), list prices as of mid-2025; override with
# --price-in / --price-out. Matched by the longest prefix of the model name.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-3-haiku": (0.25, 1.25),
    "claude-3-5-sonnet": (3.00, 15.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-opus-4": (15.00, 75.00),
}


# ------------------------------------------------------------------


@dataclass
class Estimate:
    """Estimated judge work. ``exact``: the call count is exact for a judge whose replies are
    all valid (no re-asks); otherwise it is an estimate or an upper bound (see ``notes``)."""

    samples: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    exact: bool = True
    notes: set[str] = field(default_factory=set)

    def price(self, price_in: float, price_out: float) -> float:
        return (self.prompt_tokens * price_in + self.completion_tokens * price_out) / 1e6


def _prompt_tokens(prompt: Any, **inputs: Any) -> int:
    return sum(estimate_tokens(str(m.content)) + 4 for m in prompt.format_messages(**inputs))


def estimate_cost(
    samples: Sequence[Sample],
    metrics: Sequence[str],
    *,
    claims: str = "atomic",
    strategy: str = "batched",
    evidence: str = "quote",
    verdict: str = "json",
    window_tokens: int = DEFAULT_CONTEXT_WINDOW,
    variants: int = 0,
    repeats: int = 1,
) -> Estimate:
    """Judge calls and tokens for scoring ``samples`` with ``metrics``, without a judge.

    Context and response recall follow the metric's own steps: one decomposition call per
    distinct (reference, question) with prose in atomic mode (claims are stored; a reference
    that is all list items or table cells needs none) and one referent call per sentence that
    leans on its neighbours (decontextualisation), then per window one call per claim
    (per_claim) or one call (batched), a claim the window states word for word needing none;
    ``verdict="token"`` replies with one token per claim, and with ``variants`` K each claim
    may need K more (the uncertain band's only: an upper bound) and K + 1 content-free
    baselines. In sentences mode, with ``reference_claims`` or a reference without prose,
    and one window per sample, the count is exact; otherwise the claims are counted as the
    rules split them (structure, then sentences). The other judge metrics are estimated from
    the chunks; the question metrics from the question, with Sufficiency's one call making a
    conversation's question stand alone (``history``; cached, so once whatever ``repeats``).
    """
    est = Estimate(samples=len(samples))
    decomposed: set[tuple[str, str]] = set()
    plan = RecallPlan(strategy, evidence, verdict, window_tokens, variants)
    for sample in samples:
        _estimate_sample(est, sample, metrics, claims, plan, decomposed, repeats)
    return est


def run_estimator(metrics: Sequence[Metric[Any]], repeats: int = 1) -> Callable[[Sample], Estimate]:
    """Each sample's estimated judge work, as a run meets the samples (a reference is
    decomposed once per run): what a budget reserves before it starts a sample."""
    names = [m.name for m in metrics]
    recall = next((m for m in metrics if isinstance(m, ContextRecall)), None)
    claims, plan = "atomic", RecallPlan("batched", "quote", "json", DEFAULT_CONTEXT_WINDOW)
    if recall is not None:
        claims = recall.claims
        window = recall.window_tokens or context_window(recall.judge)
        plan = RecallPlan(recall.strategy, recall.evidence, recall.verdict, window, recall.variants)
    decomposed: set[tuple[str, str]] = set()

    def estimate(sample: Sample) -> Estimate:
        est = Estimate(samples=1)
        _estimate_sample(est, sample, names, claims, plan, decomposed, repeats)
        return est

    return estimate


def _estimate_sample(
    est: Estimate,
    sample: Sample,
    metrics: Sequence[str],
    claims: str,
    plan: RecallPlan,
    decomposed: set[tuple[str, str]],
    repeats: int,
) -> None:
    for name in metrics:
        parts = metric_class(name).cost_parts
        if parts & {"claims", "response_claims"}:
            _estimate_recall(
                est, sample, "response_claims" in parts, claims, plan, decomposed, repeats
            )
        if "chunks" in parts:
            chunks = [c for c in sample.retrieved_contexts if c.text.strip()]
            windows = len(pack(chunks, plan.window_tokens)) if chunks else 0
            calls = len(chunks) if plan.strategy == "per_claim" else windows
            text = sum(estimate_tokens(c.text) for c in chunks)
            extra = estimate_tokens((sample.user_input or "") + (sample.reference or ""))
            est.calls += calls * repeats
            est.prompt_tokens += (text + (extra + 200) * max(calls, 1)) * repeats
            est.completion_tokens += 30 * len(chunks) * repeats
            est.exact = False
            est.notes.add(f"{name}: estimated from the number of chunks")
        if "standalone" in parts and sample.history and (sample.user_input or "").strip():
            question = (sample.user_input or "").strip()
            est.calls += 1
            est.prompt_tokens += _prompt_tokens(
                STANDALONE_PROMPT, history=render_history(sample.history), question=question
            )
            est.completion_tokens += estimate_tokens(question) + 20  # the rewrite, as JSON
        if "sub_questions" in parts:
            chunks_text = sum(estimate_tokens(c.text) for c in sample.retrieved_contexts)
            subs = max(1, (sample.user_input or "").count(" and ") + 1)
            est.calls += (1 + subs) * repeats
            est.prompt_tokens += (300 + subs * (chunks_text + 200)) * repeats
            est.completion_tokens += (40 + 40 * subs) * repeats
            est.exact = False
            est.notes.add(f"{name}: sub-questions estimated from the question")


def _estimate_recall(
    est: Estimate,
    sample: Sample,
    against_response: bool,
    claims_mode: str,
    plan: RecallPlan,
    decomposed: set[tuple[str, str]],
    repeats: int,
) -> None:
    strategy, evidence, verdict = plan.strategy, plan.evidence, plan.verdict
    chunks: list[Chunk]
    if against_response:
        response = (sample.response or "").strip()
        if not response:
            return  # unscorable before any call
        chunks = [Chunk(id="response", text=response)]
    else:
        chunks = [c for c in sample.retrieved_contexts if c.text.strip()]
    claims = clean_claims(sample.reference_claims or [])
    if not claims:
        reference = (sample.reference or "").strip()
        if not reference:
            return
        claims = rule_claims(reference)
        if claims_mode == "atomic" and needs_judge(reference):
            est.exact = False
            est.notes.add("atomic claims: their number is estimated from the sentences")
            cache_key = (reference, sample.user_input or "")
            if cache_key not in decomposed:  # decomposed once: claims are cached
                decomposed.add(cache_key)
                est.calls += 1
                est.prompt_tokens += _prompt_tokens(
                    DECOMPOSE_PROMPT, question=sample.user_input or "", reference=reference
                )
                est.completion_tokens += estimate_tokens(reference) + 10
                for claim in claims:  # each that leans on its neighbours: a referent call
                    span = referring_span(claim) if needs_context(claim) else None
                    if span is not None:
                        words = claim[span[0] : span[1]]
                        est.calls += 1
                        est.prompt_tokens += _prompt_tokens(
                            DECONTEXT_PROMPT, reference=reference, claim=claim, words=words
                        )
                        est.completion_tokens += 15
    if not against_response and any(t.retrieved_contexts for t in sample.history or ()):
        est.exact = False  # only the claims this turn leaves open are asked of earlier turns
        est.notes.add("conversation: claims left open asked of earlier turns, not counted")
    if not chunks or not claims:
        return
    windows = pack(chunks, plan.window_tokens)
    if len(windows) > 1:
        est.exact = False
        est.notes.add("contexts span several judge windows: calls are an upper bound")
    for window in windows:
        said = stated(claims, window)  # these need no judge
        if not (asked := [c for i, c in enumerate(claims) if i not in said]):
            continue
        passages = render_passages(window)
        if strategy == "batched":
            listed = "\n".join(f"{n}. {c}" for n, c in enumerate(asked, start=1))
            est.calls += repeats
            est.prompt_tokens += (
                _prompt_tokens(BATCHED_PROMPT, passages=passages, claims=listed) * repeats
            )
            est.completion_tokens += sum(25 + estimate_tokens(c) for c in asked) * repeats
        else:
            prompt = PER_CLAIM_QUOTE_PROMPT if evidence == "quote" else PER_CLAIM_PROMPT
            token = verdict == "token" and evidence == "align"
            reply = 1 if token else 15 if evidence == "align" else 40
            prefix = estimate_tokens(VERDICT_PREFIX) + 4 if token else 0  # the reply's given start
            est.calls += len(asked) * repeats
            est.prompt_tokens += (
                sum(_prompt_tokens(prompt, passages=passages, claim=c) + prefix for c in asked)
                * repeats
            )
            est.completion_tokens += reply * len(asked) * repeats
            if token and plan.variants:
                _variant_calls(est, passages, asked, plan.variants, repeats)


def _variant_calls(
    est: Estimate, passages: str, claims: Sequence[str], k: int, repeats: int
) -> None:
    """The most that verdict variants add: K calls per claim (each as long as the verdict's)
    and K + 1 content-free baselines (asked once per metric; counted per sample)."""
    est.exact = False
    est.notes.add(f"variants: up to {k} more calls per claim in the uncertain band")
    one = sum(_prompt_tokens(PER_CLAIM_PROMPT, passages=passages, claim=c) for c in claims)
    est.calls += (k * len(claims) + k + 1) * repeats
    est.prompt_tokens += (k * one + (k + 1) * 60) * repeats
    est.completion_tokens += (k * len(claims) + k + 1) * repeats


def known_price(judge: str | None) -> tuple[float, float] | None:
    if not judge or ":" not in judge:
        return None
    model = judge.partition(":")[2]
    matches = [name for name in PRICES if model.startswith(name)]
    return PRICES[max(matches, key=len)] if matches else None


@dataclass(frozen=True)
class RecallPlan:
    """How context recall calls a judge: what the dry run estimates for."""

    strategy: str
    evidence: str
    verdict: str
    window_tokens: int
    variants: int = 0


def recall_plan(judge: JudgeLike, options: MetricOptions) -> RecallPlan:
    """Context recall's plan for ``judge``. A judge that cannot be built here (an API model
    without its key, say) is taken to be a remote API."""
    try:
        recall = ContextRecall.from_options(judge, options)
        return RecallPlan(
            recall.strategy, recall.evidence, recall.verdict, context_window(recall.judge)
        )
    except Exception:
        strategy = options.strategy if options.strategy != "auto" else "batched"
        evidence = "align" if strategy == "per_claim" else "quote"
        return RecallPlan(strategy, evidence, "json", DEFAULT_CONTEXT_WINDOW)
