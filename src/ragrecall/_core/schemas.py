"""Typed records: what goes in (Sample, with Chunk and Turn from chunks.py and turns.py) and
what comes out (ClaimVerdict, RecallResult).

One concern over 300 lines: the records every part reads and writes, kept in one place so a
field is defined once.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from .chunks import Chunk, to_chunks
from .turns import Turn, read_messages

__all__ = [
    "Chunk",
    "ClaimSet",
    "ClaimVerdict",
    "JudgeInfo",
    "RecallResult",
    "Sample",
    "Turn",
    "Usage",
    "claim_set_hash",
]


class Sample(BaseModel):
    """One evaluation sample. Accepts the RAGAS names and the older ones.

    ``retrieved_contexts`` takes strings, dicts or Chunks. A chunk with no id of its own
    takes its id from ``retrieved_ids`` (RAGAS' ``retrieved_context_ids``) at the same
    position, where those ids are as many as the chunks and distinct; else "1", "2", ...
    """

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    sample_id: str | None = Field(
        None,
        description="Your id for the sample; it identifies the sample across runs (see key()).",
    )
    user_input: str | None = Field(
        None,
        validation_alias=AliasChoices("user_input", "question", "query"),
        description="The question asked.",
    )
    reference: str | None = Field(
        None,
        validation_alias=AliasChoices("reference", "ground_truth"),
        description="Ground-truth answer whose claims the contexts should support.",
    )
    retrieved_contexts: list[Chunk] = Field(
        default_factory=list,
        validation_alias=AliasChoices("retrieved_contexts", "contexts"),
        description="Chunks the retriever returned, best first.",
    )
    response: str | None = Field(
        None,
        validation_alias=AliasChoices("response", "answer"),
        description="The generated answer.",
    )
    retrieved_ids: list[str] | None = Field(
        None,
        validation_alias=AliasChoices("retrieved_ids", "retrieved_context_ids"),
        description="Ids of the retrieved documents.",
    )
    reference_ids: list[str] | None = Field(
        None,
        validation_alias=AliasChoices("reference_ids", "reference_context_ids"),
        description="Ids of the relevant documents.",
    )
    reference_claims: list[str] | None = Field(
        None,
        description="Claims of the reference, when you have them; skips decomposition.",
    )
    reference_contexts: list[str] | None = Field(
        None, description="Passages known to be relevant, for matching by text similarity."
    )
    relevance: dict[str, float] | None = Field(
        None, description="Graded relevance by document id (higher is more relevant), for nDCG."
    )
    history: list[Turn] | None = Field(
        None,
        description="The conversation before the question, oldest first: each turn's "
        "question, answer and retrieved contexts. ``messages`` (chat messages, the last user "
        "message the question) is read into it.",
    )

    @model_validator(mode="before")
    @classmethod
    def _messages(cls, data: Any) -> Any:
        """Chat messages (``messages``, or RAGAS' multi-turn ``user_input`` list) as the
        question, the turns before it and the reply after it."""
        return read_messages(data)

    @model_validator(mode="before")
    @classmethod
    def _ids_to_chunks(cls, data: Any) -> Any:
        """Plain-text contexts take their ids from ``retrieved_ids`` (RAGAS keeps the two
        side by side), so verdicts cite the user's ids ("d1"), not positions ("1")."""
        if not isinstance(data, Mapping):
            return data
        contexts_key = next((k for k in ("retrieved_contexts", "contexts") if k in data), None)
        ids_key = next((k for k in ("retrieved_ids", "retrieved_context_ids") if k in data), None)
        if contexts_key is None or ids_key is None:
            return data
        contexts, ids = data[contexts_key], data[ids_key]
        if not isinstance(contexts, (list, tuple)) or not isinstance(ids, (list, tuple)):
            return data
        names = [str(i) for i in ids if isinstance(i, (str, int)) and not isinstance(i, bool)]
        if len(names) != len(contexts) or len(set(names)) != len(names):
            return data
        chunks: list[Any] = []
        for rank, (name, item) in enumerate(zip(names, contexts, strict=True), start=1):
            if isinstance(item, str):
                item = {"id": name, "text": item, "rank": rank}
            elif isinstance(item, Mapping) and item.get("id") is None:
                item = {**item, "id": name}
            chunks.append(item)  # a Chunk, or a dict with an id of its own, keeps it
        return {**data, contexts_key: chunks}

    @field_validator("retrieved_contexts", mode="before")
    @classmethod
    def _chunks(cls, value: Any) -> list[Any]:
        return to_chunks(value)

    @field_validator("sample_id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        if isinstance(value, float) and value.is_integer():
            return str(int(value))  # 1.0: an int column with a gap, as pandas stores it
        return str(value) if isinstance(value, (int, float)) and value == value else value

    @field_validator("retrieved_ids", "reference_ids", mode="before")
    @classmethod
    def _ids_text(cls, value: Any) -> Any:
        if isinstance(value, (list, tuple)):  # RAGAS allows int ids
            return [str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value]
        return value

    def key(self) -> str:
        """The sample's task identity, the same whichever retriever answered it: its
        ``sample_id`` when it has one, else its question and what a correct retrieval must
        hold (the reference, or the given claims when there is no reference, and the known
        relevant ids, passages and grades). Runs of two retrievers pair on it."""
        if self.sample_id is not None:
            return _digest({"sample_id": self.sample_id})
        task = self.model_dump(mode="json", include=_TASK_FIELDS)
        if self.reference is not None:
            task.pop("reference_claims", None)
        if self.history:  # the conversation asked it: its questions and answers
            task["history"] = [[t.question, t.answer] for t in self.history]
        return _digest(task)

    def content_key(self) -> str:
        """A digest of everything in the sample (what was retrieved too): a row whose content
        changed since a run is scored again on resume."""
        return _digest(self.model_dump(mode="json", exclude_none=True))

    @model_validator(mode="after")
    def _unique_ids(self) -> Sample:
        ids = [c.id for c in self.retrieved_contexts]
        if len(set(ids)) != len(ids):
            raise ValueError("retrieved_contexts: chunk ids must be unique")
        return self


_TASK_FIELDS = {
    "user_input",
    "reference",
    "reference_claims",
    "reference_ids",
    "reference_contexts",
    "relevance",
}


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def claim_set_hash(claims: Sequence[str]) -> str:
    """A digest of a claim list, in order: two results were scored against the same claims
    exactly when their ``claim_set`` is equal."""
    return _digest(list(claims))


class Usage(BaseModel):
    """Judge usage, summed over calls."""

    calls: int = Field(
        0, description="Requests sent to the judge: every attempt, retries and re-asks included."
    )
    retries: int = Field(
        0, description="Of those, attempts that repeated a failed one (rate limit, timeout, ...)."
    )
    prompt_tokens: int = 0
    cached_tokens: int = Field(0, description="Prompt tokens served from the judge's cache.")
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls + other.calls,
            retries=self.retries + other.retries,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


class ClaimSet(BaseModel):
    """The claims a reference is scored against, where they came from, and what they cost."""

    claims: list[str]
    source: Literal["given", "store", "judge", "rules"] = Field(
        description="given: the sample's reference_claims; store: the claim store; judge: "
        "decomposed now; rules: split without a judge (claims='sentences', or a reference "
        "that is all list items)."
    )
    note: str = Field("", description="Why the claims came from where they did, if it matters.")
    usage: Usage = Field(default_factory=Usage)

    @property
    def claim_set(self) -> str:
        return claim_set_hash(self.claims)


class JudgeInfo(BaseModel):
    """Which judge produced a result."""

    model: str
    provider: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)


class ClaimVerdict(BaseModel):
    """The judge's decision on one claim."""

    claim: str
    attributed: bool = Field(description="Counted as supported (after evidence checks).")
    chunk_ids: list[str] = Field(default_factory=list, description="Chunks cited as support.")
    evidence: str | None = Field(None, description="Verbatim quote from the cited chunk.")
    evidence_verified: bool = Field(
        False, description="The quote was found in the cited chunk (normalised whitespace/case)."
    )
    reason: str = Field("", description="Why the claim is or is not counted.")
    confidence: float | None = Field(
        None, description="Probability of the chosen label, from the judge's logprobs."
    )
    p_supported: float | None = Field(
        None, description="Probability that the claim is supported, from the judge's logprobs."
    )
    word_overlap: float | None = Field(
        None,
        description="Share of the claim's content words in its best-matching context sentence "
        "(the word check mixed into the decision, where the judge gives logprobs).",
    )
    uncertain: bool = Field(
        False,
        description="The decision was close: P(supported) mixed with the word check lies within "
        "0.1 of the support threshold. A person should check this verdict.",
    )
    p_variants: list[float] = Field(
        default_factory=list,
        description="For a verdict near the decision, asked again in variants: P(supported) "
        "of the base prompt, then of each variant on its scale (content-free baselines "
        "subtracted in log-odds); p_supported is their mean in log-odds. Empty otherwise.",
    )
    unresolved: bool = Field(
        False,
        description="The claim may not stand alone: it holds a word that refers outside it "
        "('they', 'the company', 'neither of them') that the reference did not resolve, so the "
        "judge may have read it about something else.",
    )
    turn: int | None = Field(
        None,
        description="ContextRecall in a conversation: the earlier turn (from 1) whose retrieved "
        "contexts support this claim (``chunk_ids`` are that turn's); None for this turn's "
        "contexts.",
    )

    def p_counted(self) -> float:
        """The probability that the claim is supported, as the result states it: the
        (calibrated) confidence where the judge gave logprobs, else 1 or 0 by the verdict."""
        if self.confidence is None:
            return 1.0 if self.attributed else 0.0
        return self.confidence if self.attributed else 1.0 - self.confidence


class RecallResult(BaseModel):
    """The outcome for one sample. ``score`` is None exactly when ``status`` is not scored:
    ``unscorable`` (the judge or the sample failed; ``reason`` says how) or ``not_reached``
    (a budget stopped the run before the sample started: only in an ``EvaluationReport``,
    never written to a results file)."""

    metric: str = "context_recall"
    score: float | None
    status: Literal["scored", "unscorable", "not_reached"]
    reason: str = ""
    claims: list[str] = Field(default_factory=list)
    verdicts: list[ClaimVerdict] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list, description="Claims not supported.")
    claim_set: str | None = Field(
        None, description="Digest of the claims scored (claim_set_hash), to compare runs."
    )
    usage: Usage = Field(default_factory=Usage)
    judge: JudgeInfo | None = None
    elapsed_s: float = 0.0
    interval: tuple[float, float] | None = Field(
        None,
        description="90% interval of people's recall of this sample, made as "
        "``interval_method`` says. None where the judge gave no logprobs.",
    )
    interval_method: str | None = Field(
        None,
        description="How ``interval`` was made: 'correlated claims (one factor, correlation "
        "R)' (the claims' (calibrated) P(supported), correlated within the sample: the "
        "default), "
        "'split-conformal (N labelled answers)' (from people's labels on whole answers, "
        "ragrecall.stats.conformal_interval). None in results written before this field: "
        "the claims' P(supported) taken as independent.",
    )
    calibration: str | None = Field(
        None,
        description="The id of the calibration profile that decided the verdicts and scaled "
        "their confidence (CalibrationProfile.id), if one did.",
    )
    runs: list[float | None] = Field(
        default_factory=list,
        description="With repeats: each run's score (None where unscorable); ``score`` is their "
        "mean over the scored runs.",
    )
    standalone_question: str | None = Field(
        None,
        description="For a sample with a conversation before it (ContextRecall, Sufficiency): "
        "the question as scored, made to stand alone by the judge (or the question itself, "
        "where its rewrite was refused: ``reason`` says why). None without a conversation.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> RecallResult:
        if self.status == "scored":
            if self.score is None or not math.isfinite(self.score) or not 0 <= self.score <= 1:
                raise ValueError(f"a scored result needs a score in [0, 1], got {self.score}")
        elif self.score is not None:
            raise ValueError(f"a result {self.status} has no score")
        return self
