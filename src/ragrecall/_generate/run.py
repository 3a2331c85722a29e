"""``generate``: test items from a corpus, each checked before it is kept, written as they are
accepted (fsynced), resumable from the output file, under a judge budget.

Attempt ``k`` of a run is fixed by the seed alone (its kind, its source chunks), so a run with
the same seed, corpus and judge makes the same items, and a run resumed from its output file
goes on with the attempt after the last one written there.
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable

from .._core.errors import JudgeError, SampleError
from .._core.schemas import Chunk, Usage
from .._io.safe import lines, loads, regular_file
from .._judge.drive import Call, Steps, ask, run_async, run_sync
from .._judge.resolve import JudgeLike
from .._judge.structured import structured
from .._metrics.context_recall import ContextRecall
from .._metrics.prompts import Passage, render_passages
from .._metrics.text.words import content_words
from .._running.budget import Budget
from .._running.progress import progress
from .check import Verdict, copy_overlap, is_near_duplicate, names_source, supported
from .corpus import chunk_documents, read_corpus, to_documents
from .prompts import KINDS, PROMPTS, Kind, QuestionAnswer

__all__ = [
    "DEFAULT_MIX",
    "Estimate",
    "GenerationReport",
    "Plan",
    "agenerate",
    "estimate",
    "generate",
    "load_chunks",
]

DEFAULT_MIX: dict[str, float] = {
    "single": 0.5,
    "multi_hop": 0.2,
    "comparison": 0.15,
    "aggregation": 0.15,
}
FORMAT = 1  # the version of the rows' layout, in their "generation" field

# Judge calls an attempt is expected to take (a reply, a decomposition, one verdict per
# claim; a multi-chunk item's check of each chunk alone), for the budget and the dry run.
_CALLS: dict[str, int] = {"single": 4, "multi_hop": 7, "comparison": 7, "aggregation": 8}
_ACCEPTED_SHARE = 0.5  # the dry run's assumed acceptance rate (see benchmarks/RESULTS.md)


@dataclass
class GenerationReport:
    """What a ``generate`` run made: ``items`` (the rows of the test set, those resumed from
    the output file first), ``rejected`` (count by reason), ``attempts`` (made by this run),
    ``usage`` (its judge calls and tokens), ``stopped``: "" when ``n`` items were made,
    "budget" or "attempts" when it stopped short."""

    items: list[dict[str, Any]] = field(default_factory=list)
    rejected: Counter[str] = field(default_factory=Counter)
    attempts: int = 0
    resumed: int = 0
    usage: Usage = field(default_factory=Usage)
    elapsed_s: float = 0.0
    stopped: str = ""
    accepted_by_kind: Counter[str] = field(default_factory=Counter)
    attempts_by_kind: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True)
class Plan:
    """Attempt ``number``: its kind and source chunks."""

    number: int
    kind: Kind
    sources: tuple[Chunk, ...]


def load_chunks(
    corpus: str | Path | Iterable[Any], chunk_size: int | None = 1000, overlap: int = 1
) -> list[Chunk]:
    """The corpus as chunks: a folder or JSONL file read, or objects converted; then chunked
    (``chunk_size=None`` keeps the documents, and their ids, as the chunks)."""
    docs = read_corpus(corpus) if isinstance(corpus, (str, Path)) else to_documents(corpus)
    return chunk_documents(docs, chunk_size, overlap)


def check_mix(mix: Mapping[str, float]) -> dict[str, float]:
    """The kinds' weights, checked: known kinds, weights >= 0, at least one above 0."""
    out: dict[str, float] = {}
    for name, weight in mix.items():
        kind = next((k for k in KINDS if k == name), None)
        if kind is None:
            raise ValueError(f"unknown question kind {name!r}; the kinds: {', '.join(KINDS)}")
        if not (weight >= 0 and math.isfinite(weight)):
            raise ValueError(f"the weight of {name} must be a number >= 0, not {weight}")
        out[kind] = float(weight)
    if not any(out.values()):
        raise ValueError("the mix gives no kind a weight above 0")
    return out


class _Planner:
    """Attempt k's kind and chunks, from the seed and k alone. Seed chunks go through the
    corpus in a shuffled order; a multi-chunk item's partners are among the seed chunk's five
    most similar chunks (TF-IDF cosine over content words), from other documents first."""

    def __init__(self, chunks: Sequence[Chunk], mix: Mapping[str, float], seed: int):
        self.chunks, self.seed = list(chunks), seed
        self.kinds: list[Kind] = [k for k in KINDS if mix.get(k, 0) > 0]
        self.weights = [mix[k] for k in self.kinds]
        self.order = list(range(len(self.chunks)))
        random.Random(f"{seed}:order").shuffle(self.order)
        self.words = [content_words(c.text) for c in self.chunks]
        df: Counter[str] = Counter(w for ws in self.words for w in ws)
        total = len(self.chunks)
        self.idf = {w: math.log((1 + total) / (1 + d)) + 1 for w, d in df.items()}
        self._near: dict[int, list[int]] = {}

    def plan(self, number: int) -> Plan:
        rng = random.Random(f"{self.seed}:{number}")
        kind: Kind = rng.choices(self.kinds, self.weights)[0]
        first = self.order[number % len(self.order)]
        if kind == "single" or len(self.chunks) < 2:
            return Plan(number, "single", (self.chunks[first],))
        wanted = 2 if kind != "aggregation" or len(self.chunks) < 3 else 3
        partners = rng.sample(self._neighbours(first), wanted - 1)
        return Plan(number, kind, tuple(self.chunks[i] for i in [first, *partners]))

    def _neighbours(self, i: int) -> list[int]:
        if i not in self._near:
            doc = self._document(i)
            scored = []
            for j in range(len(self.chunks)):
                if j == i:
                    continue
                shared = self.words[i] & self.words[j]
                dot = sum(self.idf[w] ** 2 for w in shared)
                norm = math.sqrt(self._norm(i) * self._norm(j)) or 1.0
                other_doc = self._document(j) != doc
                scored.append((not other_doc, -dot / norm, j))
            self._near[i] = [j for _, _, j in sorted(scored)[:5]]
        return self._near[i]

    def _norm(self, i: int) -> float:
        return sum(self.idf[w] ** 2 for w in self.words[i])

    def _document(self, i: int) -> str:
        chunk = self.chunks[i]
        return str(chunk.metadata.get("document_id", chunk.id))


@dataclass(frozen=True)
class Estimate:
    """The dry run's estimate: attempts, judge calls and tokens for ``n`` items."""

    chunks: int
    items: int
    attempts: int
    calls: int
    tokens: int


def estimate(
    chunks: Sequence[Chunk], n: int, mix: Mapping[str, float] | None = None, done: int = 0
) -> Estimate:
    """The work ``n`` items take (``done`` of them made already), at the assumed acceptance
    rate; no judge is called."""
    weights = check_mix(mix or DEFAULT_MIX)
    total = sum(weights.values())
    per_attempt = sum(_CALLS[k] * w for k, w in weights.items()) / total
    left = max(n - done, 0)
    attempts = math.ceil(left / _ACCEPTED_SHARE)
    mean_chars = sum(len(c.text) for c in chunks) / max(len(chunks), 1)
    tokens = int(attempts * per_attempt * (mean_chars * 1.5 / 4 + 250))
    return Estimate(len(chunks), left, attempts, math.ceil(attempts * per_attempt), tokens)


def generate(
    corpus: str | Path | Iterable[Any],
    n: int,
    *,
    judge: JudgeLike = None,
    out: str | Path | None = None,
    rejected_out: str | Path | None = None,
    mix: Mapping[str, float] | None = None,
    seed: int = 0,
    chunk_size: int | None = 1000,
    chunk_overlap: int = 1,
    max_overlap: float = 0.5,
    duplicate_threshold: float = 0.7,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    max_attempts: int | None = None,
    recall: ContextRecall | None = None,
    prompts: Mapping[str, ChatPromptTemplate] | None = None,
    show_progress: bool | None = False,
) -> GenerationReport:
    """Generate ``n`` checked test items (question, reference, its source chunks) from a corpus.

    Args:
        corpus: a folder of .txt/.md/.html files, a JSONL file of documents (``id``,
            ``text``, optional ``metadata``), or a list of LangChain ``Document`` s,
            LlamaIndex nodes, ``Chunk`` s, dicts or strings.
        n: items wanted (those already in ``out`` count).
        judge: the chat model that writes and checks the items (default: embedded judge).
        out: the test set's JSONL file: each item appended as it is accepted; a run with the
            same settings resumes from it.
        rejected_out: a JSONL file for the rejected items, with their reason.
        mix: the question kinds' weights (``single``, ``multi_hop``, ``comparison``,
            ``aggregation``; default ``DEFAULT_MIX``).
        seed: fixes every attempt's kind and chunks.
        chunk_size: the chunks' size in characters (whole sentences); None keeps the
            documents as the chunks, with their ids.
        max_overlap: the largest share of the question's word trigrams found in its
            source chunks.
        duplicate_threshold: a question sharing this share of its words (Jaccard) with a kept
            one is a duplicate.
        max_calls: the judge budget in calls; once an attempt would not fit, the run stops
            (``stopped == "budget"``), keeping what it made.
        max_tokens: the judge budget in tokens, likewise.
        max_attempts: attempts this run may make (default ``4 * n + 10``).
        recall: the ``ContextRecall`` that checks the references (default: one on ``judge``).
        prompts: generation prompts by kind, replacing ``ragrecall._generate.prompts.PROMPTS``.
    """
    run = _prepare(**locals())  # the arguments, checked and read in once
    return run_sync(run.steps(), run.recall.policy)


async def agenerate(
    corpus: str | Path | Iterable[Any],
    n: int,
    *,
    judge: JudgeLike = None,
    out: str | Path | None = None,
    rejected_out: str | Path | None = None,
    mix: Mapping[str, float] | None = None,
    seed: int = 0,
    chunk_size: int | None = 1000,
    chunk_overlap: int = 1,
    max_overlap: float = 0.5,
    duplicate_threshold: float = 0.7,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    max_attempts: int | None = None,
    recall: ContextRecall | None = None,
    prompts: Mapping[str, ChatPromptTemplate] | None = None,
    show_progress: bool | None = False,
) -> GenerationReport:
    """``generate`` with the judge's calls awaited: the same steps, so the same items for a
    seed."""
    run = _prepare(**locals())  # the arguments, checked and read in once
    return await run_async(run.steps(), run.recall.policy)


def _prepare(
    corpus: str | Path | Iterable[Any],
    n: int,
    *,
    judge: JudgeLike = None,
    out: str | Path | None = None,
    rejected_out: str | Path | None = None,
    mix: Mapping[str, float] | None = None,
    seed: int = 0,
    chunk_size: int | None = 1000,
    chunk_overlap: int = 1,
    max_overlap: float = 0.5,
    duplicate_threshold: float = 0.7,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    max_attempts: int | None = None,
    recall: ContextRecall | None = None,
    prompts: Mapping[str, ChatPromptTemplate] | None = None,
    show_progress: bool | None = False,
) -> _Run:
    """The run ``generate`` and ``agenerate`` make: the arguments checked, the output files
    read back, the planner and budget set."""
    if n < 1:
        raise ValueError(f"n must be at least 1, not {n}")
    if not 0.0 <= max_overlap <= 1.0:
        raise ValueError(f"max_overlap must be in [0, 1], not {max_overlap}")
    if not 0.0 < duplicate_threshold <= 1.0:
        raise ValueError(f"duplicate_threshold must be in (0, 1], not {duplicate_threshold}")
    weights = check_mix(mix or DEFAULT_MIX)
    chunks = load_chunks(corpus, chunk_size, chunk_overlap)
    recall = recall or ContextRecall(judge)
    templates: dict[str, ChatPromptTemplate] = {**PROMPTS, **(prompts or {})}
    settings = {
        "seed": seed,
        "mix": weights,
        "chunk_size": chunk_size,
        "chunk_overlap": chunk_overlap,
        "max_overlap": max_overlap,
        "duplicate_threshold": duplicate_threshold,
        "judge": recall.judge_id(),
        "format": FORMAT,
    }
    report = GenerationReport()
    resumed = _read_rows(Path(out), settings) if out else []
    report.items, report.resumed = list(resumed), len(resumed)
    skipped = _read_rows(Path(rejected_out), None) if rejected_out else []
    last = max((r["generation"]["attempt"] for r in [*resumed, *skipped]), default=-1)
    for row in resumed:
        report.accepted_by_kind[row["question_kind"]] += 1
    return _Run(
        n,
        out,
        rejected_out,
        show_progress,
        recall,
        templates,
        settings,
        report,
        last,
        _Planner(chunks, weights, seed),
        Budget(max_calls, max_tokens),
        max_attempts if max_attempts is not None else 4 * n + 10,
        max_overlap,
        duplicate_threshold,
    )


@dataclass
class _Run:
    """One generation run's state; ``steps`` makes the items, as judge calls to drive."""

    n: int
    out: str | Path | None
    rejected_out: str | Path | None
    show_progress: bool | None
    recall: ContextRecall
    templates: dict[str, ChatPromptTemplate]
    settings: dict[str, Any]
    report: GenerationReport
    last: int
    planner: _Planner
    budget: Budget
    limit: int
    max_overlap: float
    duplicate_threshold: float

    def steps(self) -> Steps[GenerationReport]:
        report, budget, settings, n = self.report, self.budget, self.settings, self.n
        chains: dict[str, Runnable[Any, Any]] = {}
        start = time.perf_counter()
        with (
            _Appender(self.out) as written,
            _Appender(self.rejected_out) as refused,
            progress(n, self.show_progress, "generating", "items") as advance,
        ):
            for _ in report.items:
                advance()
            number = self.last + 1
            while len(report.items) < n:
                if report.attempts >= self.limit:
                    report.stopped = "attempts"
                    break
                plan = self.planner.plan(number)
                held = (_CALLS[plan.kind], _CALLS[plan.kind] * _tokens(plan.sources))
                if not budget.reserve(*held):
                    report.stopped = "budget"
                    break
                if plan.kind not in chains:
                    chains[plan.kind] = self.templates[plan.kind] | structured(
                        self.recall.judge, QuestionAnswer, max_tokens=ITEM_REPLY_TOKENS
                    )
                usage, began = Usage(), time.perf_counter()
                kept = [r["user_input"] for r in report.items]
                row, reason, detail = yield from _attempt(
                    plan,
                    chains[plan.kind],
                    self.recall,
                    kept,
                    self.max_overlap,
                    self.duplicate_threshold,
                    usage,
                )
                budget.settle(held, usage.calls, usage.prompt_tokens + usage.completion_tokens)
                report.usage = report.usage + usage
                report.attempts += 1
                report.attempts_by_kind[plan.kind] += 1
                spent = {
                    "calls": usage.calls,
                    "prompt_tokens": usage.prompt_tokens,
                    "completion_tokens": usage.completion_tokens,
                    "seconds": round(time.perf_counter() - began, 3),
                }
                row["generation"] = {**settings, "attempt": number, "usage": spent}
                if reason:
                    report.rejected[reason] += 1
                    refused({**row, "reason": reason, "detail": detail})
                else:
                    written(row)
                    report.items.append(row)
                    report.accepted_by_kind[plan.kind] += 1
                    advance()
                number += 1
        report.elapsed_s = time.perf_counter() - start
        return report


# A question and a short answer fit in far fewer; a small model that loses its way stops here.
ITEM_REPLY_TOKENS = 400


def _tokens(sources: Sequence[Chunk]) -> int:
    return sum(len(c.text) for c in sources) // 4 + 250


def _attempt(
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


class _Appender:
    """``with _Appender(path) as write: write(row)``: each row appended as a JSON line,
    flushed and fsynced; no path, no file."""

    def __init__(self, path: str | Path | None):
        self.path = Path(path) if path else None
        self.handle: IO[str] | None = None

    def __enter__(self) -> Any:
        if self.path is not None:
            self.handle = self.path.open("a", encoding="utf-8")
        return self.write

    def write(self, row: Mapping[str, Any]) -> None:
        if self.handle is None:
            return
        self.handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        self.handle.flush()
        os.fsync(self.handle.fileno())

    def __exit__(self, *exc: object) -> None:
        if self.handle is not None:
            self.handle.close()


def _read_rows(path: Path, settings: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The rows a previous run wrote to ``path`` (none if it does not exist). A torn last
    line (a kill mid-write) is cut away; rows made with other ``settings`` are refused."""
    if not path.exists():
        return []
    regular_file(path, "output file")
    rows: list[dict[str, Any]] = []
    torn_at: int | None = None
    with path.open("rb") as f:
        for number, raw in lines(f, path):
            if torn_at is not None:
                raise SampleError("not a JSON object", file=str(path), line=torn_at)
            if not raw.strip():
                continue
            try:
                row = loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                if raw.endswith(b"\n"):
                    raise SampleError("not a JSON object", file=str(path), line=number) from None
                torn_at = number
                continue
            made = row.get("generation") if isinstance(row, dict) else None
            if not isinstance(made, dict) or not isinstance(made.get("attempt"), int):
                raise SampleError(
                    "not a row of `ragrecall generate` (no generation.attempt)",
                    file=str(path),
                    line=number,
                    field="generation",
                )
            if settings is not None:
                differs = sorted(k for k, v in settings.items() if made.get(k) != v)
                if differs:
                    raise SampleError(
                        f"made with other settings ({', '.join(differs)}); use another output "
                        "file, or the same settings to resume",
                        file=str(path),
                        line=number,
                        field="generation",
                    )
            rows.append(row)
    if torn_at is not None:  # cut the torn line: the next row starts on a line of its own
        data = path.read_bytes()
        path.write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 1] if b"\n" in data else b"")
    return rows
