"""Context recall: the share of the reference's claims that the retrieved chunks support.

One concern over 300 lines: the ContextRecall metric, its settings and its steps (its claims:
``recall_claims.py``; in a conversation, earlier turns credited: ``history.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any, Literal

from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable

from .._core.deprecation import renamed
from .._core.schemas import Chunk, ClaimSet, ClaimVerdict, RecallResult, Sample, Usage
from .._io.samples import to_sample
from .._judge.drive import Steps, run_async, run_sync
from .._judge.resolve import JudgeLike, context_window, is_embedded, is_local
from .._judge.retry import DEFAULT_TIMEOUT
from .base import Metric, MetricOptions
from .claims.decompose import (
    ClaimCache,
    ClaimMode,
    decomposition_chain,
    metric_claim_cache,
)
from .claims.decontext import decontext_chain
from .decision import CalibrationProfile, Decision
from .history import credit_earlier_turns
from .prompts import (
    DECOMPOSE_PROMPT,
    DECONTEXT_PROMPT,
    PROMPT_VERSION,
    STANDALONE_PROMPT,
    VERDICT_VARIANTS,
    PassageRenderer,
    render_passages,
)
from .recall_claims import question_asked, reference_claims
from .standalone import standalone_chain
from .text.redaction import redact_chunks
from .text.windows import pack
from .verdicts.attribution import Strategy, Verdict, attribute, attribution_chain
from .verdicts.decide import Evidence
from .verdicts.tally import tally
from .verdicts.variants import DEFAULT_BAND, DEFAULT_VARIANTS, Refiner, variant_chain

__all__ = ["ContextRecall"]

NO_CONTEXTS = "no retrieved contexts"


class ContextRecall(Metric[RecallResult]):
    """Did the retriever bring back everything needed to state the reference answer?

    Args:
        judge: a LangChain chat model, a ``"provider:model"`` string, or None for the
            embedded local judge.
        claims: ``"atomic"`` (the judge splits the reference) or ``"sentences"`` (rule-based,
            no judge call). Claims given on the sample (``reference_claims``) always win.
        strategy: ``"per_claim"``, ``"batched"``, or ``"auto"`` (per-claim for local
            servers, whose prompt cache makes it fast; batched for remote APIs).
        evidence: ``"align"`` (the library picks the cited chunk's best-matching sentence),
            ``"quote"`` (the judge quotes; an unverifiable quote does not count), or
            ``"auto"`` (align for per-claim, quote for batched).
        verdict: per-claim, align: ``"json"`` (the judge writes the verdict and the passage),
            ``"token"`` (the judge is given the reply's start and writes only the verdict
            token, read through its logprobs; the chunk is found by alignment; needs a server
            that continues a final assistant message, such as llama.cpp's), or ``"auto"``
            (token for the embedded judge, JSON otherwise). An unreadable token falls back to
            JSON for that claim.
        support_threshold: where the judge gives logprobs, a claim counts if
            ``(1 - lexical_weight) * P(supported) + lexical_weight * word_overlap`` reaches
            ``support_threshold``; ``word_overlap`` is the share of the claim's content words in its
            best-matching context sentence (not in a chunk an order was cut out of: see
            ``withhold_injections``). The defaults (0.55, 0.3) agreed best with people
            on held-out samples.
        lexical_weight: the word check's weight in that mix; ``lexical_weight=0`` decides on
            P(supported) alone.
        calibration: a calibration profile (``CalibrationProfile``, or the path of one
            written by ``ragrecall calibrate``): its decision replaces ``support_threshold``
            and ``lexical_weight``, and each verdict's ``confidence`` is its scaled
            P(supported). A profile fitted for another judge or prompt version is refused
            (CalibrationError) when the first sample is scored.
        withhold_injections: text that addresses the judge (orders to ignore its instructions
            in several languages, fake verdicts or delimiters, chat-template turns; also when
            hidden in comments, look-alike letters, zero-width characters or base64) is not
            shown to it: the quoted part, sentence or line that carries it is removed and the
            rest of the chunk shown, or the whole chunk withheld when the order cannot be cut
            out (``ragrecall.text.redact``); the result's reason names the chunks. Where a
            chunk itself gave an order, none of its evidence that repeats the claim counts.
            Off: every chunk is shown, and
            its quotes count like any other's (the quote must still be in it and state the
            claim). Either way, evidence that addresses the judge, or repeats the claim in a
            chunk that is not plain prose, never counts (``ragrecall.text.evidence_refusal``).
        cache: claim store (default: ``default_claim_cache()``, on disk in the user cache).
        cache_path: a claim store in this SQLite file instead.
        window_tokens: judge window for packing contexts; default from the judge.
        decompose_prompt: the prompt that splits a reference into claims
            (``ragrecall.prompts.DECOMPOSE_PROMPT``).
        decontext_prompt: with ``claims="atomic"``, in the judge's claims that do not stand
            alone (a rule finds "they", "the company", "neither of them", ...) the judge names
            what those words stand for by this prompt, one short call each, and the name
            replaces them, kept only if it appears verbatim in the reference. Claims joining
            two facts ("X; Y") are split by rule first. None turns both off. A claim that
            still does not stand alone is marked ``unresolved`` on its verdict.
        attribution_prompt: the verdict prompt, replacing the strategy's default (see
            ``ragrecall.prompts``).
        render_passages: how passages are shown to the judge (default
            ``ragrecall.prompts.render_passages``; see ``ragrecall.prompts``).
        max_retries: retries of a failed judge call.
        timeout: seconds per judge call.
        threshold: the old name of ``support_threshold`` (deprecated).
        variants: with token verdicts, a claim whose decision margin lies within
            ``variant_band`` of the threshold is asked again in this many further variants
            (``prompts.VERDICT_VARIANTS``: a flipped question, other label words, the claim
            first), each calibrated by its content-free baseline (asked once per metric), and
            its P(supported) is their mean in log-odds. Default 0 (off: it has not yet shown a
            reliable gain). Claims outside the band cost nothing extra.
        variant_band: how close to the decision a claim's margin must be to be asked again.
        credit_history: in a conversation (``history``), a claim this turn's contexts do not
            support counts when one of the last ``HISTORY_TURNS`` turns' contexts supports it
            (checked the same way, the latest turn first; its verdict's ``turn`` names that
            turn), as in Sufficiency. False scores this turn's retrieval alone. Either way the
            question is first made to stand alone (``standalone_question``), the reference
            split under it.
        standalone_prompt: replaces ``ragrecall.prompts.STANDALONE_PROMPT`` (keep its
            variables and its reply schema ``StandaloneQuestion``).

    Raises:
        ValueError: a setting out of its range (``claims``, ``verdict``, a threshold or
            weight outside [0, 1], ``variants`` beyond the variant prompts).
        CalibrationError: a ``calibration`` profile that cannot be read.
    """

    name = "context_recall"
    needs = (("reference", "reference_claims"), ("retrieved_contexts",))
    result_type = RecallResult
    cost_parts = frozenset({"claims", "standalone"})

    def __init__(
        self,
        judge: JudgeLike = None,
        claims: ClaimMode = "atomic",
        *,
        strategy: Strategy | Literal["auto"] = "auto",
        evidence: Evidence | Literal["auto"] = "auto",
        verdict: Verdict | Literal["auto"] = "auto",
        support_threshold: float = 0.55,
        lexical_weight: float = 0.3,
        calibration: CalibrationProfile | str | Path | None = None,
        withhold_injections: bool = True,
        cache: ClaimCache | None = None,
        cache_path: str | Path | None = None,
        window_tokens: int | None = None,
        decompose_prompt: ChatPromptTemplate = DECOMPOSE_PROMPT,
        decontext_prompt: ChatPromptTemplate | None = DECONTEXT_PROMPT,
        attribution_prompt: ChatPromptTemplate | None = None,
        render_passages: PassageRenderer = render_passages,
        max_retries: int = 3,
        timeout: float | None = DEFAULT_TIMEOUT,
        threshold: float | None = None,
        variants: int = DEFAULT_VARIANTS,
        variant_band: float = DEFAULT_BAND,
        credit_history: bool = True,
        standalone_prompt: ChatPromptTemplate = STANDALONE_PROMPT,
    ):
        super().__init__(judge, max_retries=max_retries, timeout=timeout)
        support_threshold = renamed(
            "threshold=", "support_threshold=", threshold, support_threshold
        )
        if claims not in ("atomic", "sentences"):
            raise ValueError(f"claims must be 'atomic' or 'sentences', not {claims!r}")
        if verdict not in ("json", "token", "auto"):
            raise ValueError(f"verdict must be 'json', 'token' or 'auto', not {verdict!r}")
        if not 0.0 <= support_threshold <= 1.0:
            raise ValueError(f"support_threshold must be in [0, 1], not {support_threshold}")
        if not 0.0 <= lexical_weight <= 1.0:
            raise ValueError(f"lexical_weight must be in [0, 1], not {lexical_weight}")
        if not 0 <= variants <= len(VERDICT_VARIANTS):
            raise ValueError(f"variants must be 0 to {len(VERDICT_VARIANTS)}, not {variants}")
        if not 0.0 <= variant_band <= 1.0:
            raise ValueError(f"variant_band must be in [0, 1], not {variant_band}")
        self.variants, self.variant_band = variants, variant_band
        self._free: dict[int, float | None] = {}  # the variants' content-free baselines
        self.claims = claims
        self._strategy = strategy
        self._evidence = evidence
        self._verdict = verdict
        if calibration is not None and not isinstance(calibration, CalibrationProfile):
            calibration = CalibrationProfile.load(calibration)
        self.calibration = calibration
        self.decision = (
            Decision(support_threshold, lexical_weight)
            if calibration is None
            else calibration.decision
        )
        self.withhold_injections = withhold_injections
        self.cache = metric_claim_cache(cache, cache_path)
        self.window_tokens = window_tokens
        self.decompose_prompt = decompose_prompt
        self.decontext_prompt = decontext_prompt
        self.attribution_prompt = attribution_prompt
        self.render_passages = render_passages
        self.credit_history = credit_history
        self.standalone_prompt = standalone_prompt
        self._chains: dict[str, Runnable[Any, Any]] = {}

    @classmethod
    def from_options(cls, judge: JudgeLike, options: MetricOptions) -> ContextRecall:
        return cls(
            judge,
            options.claims,
            strategy=options.strategy,
            cache=options.claim_cache,
            calibration=options.calibration,
            **options.policy(),
        )

    @property
    def support_threshold(self) -> float:
        return self.decision.support_threshold

    @property
    def lexical_weight(self) -> float:
        return self.decision.lexical_weight

    @property
    def threshold(self) -> float:
        """Deprecated: ``support_threshold``."""
        return renamed("threshold", "support_threshold", self.support_threshold, 0.0)

    @property
    def strategy(self) -> Strategy:
        if self._strategy != "auto":
            return self._strategy
        return "per_claim" if is_local(self.judge) else "batched"

    @property
    def evidence(self) -> Evidence:
        if self._evidence != "auto":
            return self._evidence
        return "align" if self.strategy == "per_claim" else "quote"

    @property
    def verdict(self) -> Verdict:
        if self.strategy != "per_claim" or self.evidence != "align":
            return "json"
        if self._verdict != "auto":
            return self._verdict
        return "token" if is_embedded(self.judge) else "json"

    def _falls_back(self) -> bool:
        return self.strategy == "batched" or self.verdict == "token"

    def _chain(self, kind: str) -> Runnable[Any, Any]:
        if kind not in self._chains:
            if kind == "decompose":
                chain = decomposition_chain(self.judge, self.decompose_prompt)
            elif kind == "standalone":
                chain = standalone_chain(self.judge, self.standalone_prompt)
            elif kind.startswith("variant:"):
                chain = variant_chain(self.judge, VERDICT_VARIANTS[int(kind[8:])])
            elif kind == "fallback":  # per-claim JSON (a batched prompt does not fit it)
                prompt = self.attribution_prompt if self.strategy == "per_claim" else None
                chain = attribution_chain(self.judge, "per_claim", self.evidence, prompt)
            else:
                chain = attribution_chain(
                    self.judge,
                    self.strategy,
                    self.evidence,
                    self.attribution_prompt,
                    self.verdict,
                )
            self._chains[kind] = chain
        return self._chains[kind]

    def _decontext_chain(self) -> Runnable[Any, Any]:
        if "decontext" not in self._chains:
            assert self.decontext_prompt is not None
            self._chains["decontext"] = decontext_chain(self.judge, self.decontext_prompt)
        return self._chains["decontext"]

    def claim_set(self, sample: Sample | Mapping[str, Any]) -> ClaimSet:
        """The claims ``sample`` is scored against: its ``reference_claims``, the claim
        store's, or decomposed now (and stored); an invalid decomposition reply leaves the
        reference's sentences, with a note. Other judge failures raise."""
        usage = Usage()
        claim_set = run_sync(self._claim_set(to_sample(sample), usage), self.policy)
        return claim_set.model_copy(update={"usage": usage})

    async def aclaim_set(self, sample: Sample | Mapping[str, Any]) -> ClaimSet:
        """Async ``claim_set``."""
        usage = Usage()
        claim_set = await run_async(self._claim_set(to_sample(sample), usage), self.policy)
        return claim_set.model_copy(update={"usage": usage})

    def _claim_set(self, sample: Sample, usage: Usage) -> Steps[ClaimSet]:
        question, _ = yield from question_asked(self, sample, usage)
        return (yield from reference_claims(self, sample, question, usage))

    def _steps(self, sample: Sample, usage: Usage) -> Steps[RecallResult]:
        if self.calibration is not None:
            self.calibration.check(self.judge_id(), PROMPT_VERSION)
        question, rewritten = yield from question_asked(self, sample, usage)
        claim_set = yield from reference_claims(self, sample, question, usage)
        claims = claim_set.claims
        if not claims:
            return self.unscorable("no claims: the reference is empty")
        chunks, removed = [c for c in sample.retrieved_contexts if c.text.strip()], ""
        # Text that addresses the judge (a prompt injection) is never shown to it: its
        # instructions could sway the verdicts on the other chunks too.
        if self.withhold_injections:
            chunks, removed = redact_chunks(chunks)
        verdicts = [ClaimVerdict(claim=c, attributed=False, reason=NO_CONTEXTS) for c in claims]
        if chunks:
            verdicts = yield from self._attributed(claims, chunks, usage)
        earlier = ""
        if sample.history and self.credit_history:  # open claims asked of earlier turns
            verdicts, earlier = yield from credit_earlier_turns(
                verdicts,
                sample.history,
                partial(self._attributed, usage=usage),
                withhold_injections=self.withhold_injections,
            )
        notes = (rewritten, "" if chunks else NO_CONTEXTS, claim_set.note, removed, earlier)
        result = self._scored(claims, verdicts, "; ".join(n for n in notes if n))
        if sample.history:
            result.standalone_question = question
        return result

    def _attributed(
        self, claims: list[str], chunks: list[Chunk], usage: Usage
    ) -> Steps[list[ClaimVerdict]]:
        """One verdict per claim against ``chunks``, packed into the judge's windows."""
        return (
            yield from attribute(
                claims,
                pack(chunks, self.window_tokens or context_window(self.judge)),
                strategy=self.strategy,
                evidence=self.evidence,
                chain=self._chain("attribute"),
                fallback_chain=self._chain("fallback") if self._falls_back() else None,
                decision=self.decision,
                usage=usage,
                render=self.render_passages,
                refiner=self._refiner(),
            )
        )

    def _refiner(self) -> Refiner | None:
        """The refiner of token verdicts (its content-free baselines asked once, kept here)."""
        if self.variants == 0 or self.verdict != "token":
            return None
        chains = [self._chain(f"variant:{k}") for k in range(self.variants)]
        return Refiner(self._chain("attribute"), chains, self.variant_band, self._free)

    def _scored(self, claims: list[str], verdicts: list[ClaimVerdict], note: str) -> RecallResult:
        return tally(self.name, claims, verdicts, note, self.calibration)
