"""``generate``: test items from a corpus, each checked before it is kept, written as they are
accepted (fsynced), resumable from the output file, under a judge budget.

Attempt ``k`` of a run is fixed by the seed alone (its kind, its source chunks: ``plan.py``),
so a run with the same seed, corpus and judge makes the same items, and a run resumed from its
output file (``output.py``) goes on with the attempt after the last one written there.

It spends the run's ``Budget`` and shows its progress, but runs on no engine: an engine scores
given samples into one ``Record`` each, while ``generate`` makes its rows (a seeded plan of
attempts over a corpus, most of them refused by the check) and resumes by attempt number from
its own output, so ``Engine.score`` does not fit it.

One concern over 300 lines: the run, with ``generate``'s documented parameters.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable

from .._core.schemas import Chunk, Usage
from .._judge.drive import Steps, run_async, run_sync
from .._judge.resolve import JudgeLike
from .._judge.structured import structured
from .._metrics.context_recall import ContextRecall
from .._running.budget import Budget
from .._running.progress import progress
from .attempt import ITEM_REPLY_TOKENS, attempt
from .corpus import chunk_documents, read_corpus, to_documents
from .output import FORMAT, Appender, read_rows
from .plan import DEFAULT_MIX, Planner, check_mix, cost
from .prompts import PROMPTS, QuestionAnswer

__all__ = ["GenerationReport", "agenerate", "generate", "load_chunks"]


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


def load_chunks(
    corpus: str | Path | Iterable[Any], chunk_size: int | None = 1000, overlap: int = 1
) -> list[Chunk]:
    """The corpus as chunks: a folder or JSONL file read, or objects converted; then chunked
    (``chunk_size=None`` keeps the documents, and their ids, as the chunks)."""
    docs = read_corpus(corpus) if isinstance(corpus, (str, Path)) else to_documents(corpus)
    return chunk_documents(docs, chunk_size, overlap)


@dataclass(frozen=True)
class Options:
    """``generate``'s arguments (documented there), as one value."""

    corpus: str | Path | Iterable[Any]
    n: int
    judge: JudgeLike = None
    out: str | Path | None = None
    rejected_out: str | Path | None = None
    mix: Mapping[str, float] | None = None
    seed: int = 0
    chunk_size: int | None = 1000
    chunk_overlap: int = 1
    max_overlap: float = 0.5
    duplicate_threshold: float = 0.7
    max_calls: int | None = None
    max_tokens: int | None = None
    max_attempts: int | None = None
    recall: ContextRecall | None = None
    prompts: Mapping[str, ChatPromptTemplate] | None = None
    show_progress: bool | None = False


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
        chunk_overlap: sentences each chunk shares with the one before.
        max_overlap: the largest share of the question's word trigrams found in its
            source chunks.
        duplicate_threshold: a question sharing this share of its words (Jaccard) with a kept
            one is a duplicate.
        max_calls: the judge budget in calls; once an attempt would not fit, the run stops
            (``stopped == "budget"``), keeping what it made.
        max_tokens: the judge budget in tokens, likewise.
        max_attempts: attempts this run may make (default ``4 * n + 10``).
        recall: the ``ContextRecall`` that checks the references (default: one on ``judge``).
        prompts: generation prompts by kind, replacing the default of each kind given.
        show_progress: a progress bar (None: when stderr is a terminal).

    Returns:
        The ``GenerationReport``: the items (the resumed ones first), the rejections
            counted by reason, the attempts, the judge's usage, and why the run stopped
            short, if it did (``stopped``).

    Raises:
        ValueError: ``n`` below 1, ``max_overlap``, ``duplicate_threshold`` or
            ``chunk_overlap`` out of range, or a ``mix`` with an unknown kind or no weight.
        SampleError: a corpus that cannot be read (the file and line named).
    """
    run = _prepare(Options(**locals()))  # the arguments, checked and read in once
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
    seed.

    Args:
        corpus: a folder of files, a JSONL file of documents, or a list of documents,
            nodes, ``Chunk`` s, dicts or strings (as ``generate``).
        n: items wanted (those already in ``out`` count).
        judge: the chat model that writes and checks the items (default: embedded judge).
        out: the test set's JSONL file; a run with the same settings resumes from it.
        rejected_out: a JSONL file for the rejected items, with their reason.
        mix: the question kinds' weights (default ``DEFAULT_MIX``).
        seed: fixes every attempt's kind and chunks.
        chunk_size: the chunks' size in characters; None keeps the documents whole.
        chunk_overlap: sentences each chunk shares with the one before.
        max_overlap: the largest share of the question's word trigrams in its sources.
        duplicate_threshold: the word share (Jaccard) that makes a question a duplicate.
        max_calls: the judge budget in calls.
        max_tokens: the judge budget in tokens.
        max_attempts: attempts this run may make (default ``4 * n + 10``).
        recall: the ``ContextRecall`` that checks the references.
        prompts: generation prompts by kind.
        show_progress: a progress bar (None: when stderr is a terminal).

    Returns:
        The ``GenerationReport``, as ``generate``'s.

    Raises:
        ValueError: an argument out of range (as ``generate``).
        SampleError: a corpus that cannot be read.
    """
    run = _prepare(Options(**locals()))  # the arguments, checked and read in once
    return await run_async(run.steps(), run.recall.policy)


def _prepare(options: Options) -> _Run:
    """The run ``generate`` and ``agenerate`` make: the arguments checked, the output files
    read back, the planner and budget set."""
    o = options
    if o.n < 1:
        raise ValueError(f"n must be at least 1, not {o.n}")
    if not 0.0 <= o.max_overlap <= 1.0:
        raise ValueError(f"max_overlap must be in [0, 1], not {o.max_overlap}")
    if not 0.0 < o.duplicate_threshold <= 1.0:
        raise ValueError(f"duplicate_threshold must be in (0, 1], not {o.duplicate_threshold}")
    weights = check_mix(o.mix or DEFAULT_MIX)
    chunks = load_chunks(o.corpus, o.chunk_size, o.chunk_overlap)
    recall = o.recall or ContextRecall(o.judge)
    generation = {  # what every row carries: a run resumes only rows made the same way
        "seed": o.seed,
        "mix": weights,
        "chunk_size": o.chunk_size,
        "chunk_overlap": o.chunk_overlap,
        "max_overlap": o.max_overlap,
        "duplicate_threshold": o.duplicate_threshold,
        "judge": recall.judge_id(),
        "format": FORMAT,
    }
    report = GenerationReport()
    resumed = read_rows(Path(o.out), generation) if o.out else []
    report.items, report.resumed = list(resumed), len(resumed)
    skipped = read_rows(Path(o.rejected_out), None) if o.rejected_out else []
    last = max((r["generation"]["attempt"] for r in [*resumed, *skipped]), default=-1)
    for row in resumed:
        report.accepted_by_kind[row["question_kind"]] += 1
    return _Run(
        o,
        recall,
        {**PROMPTS, **(o.prompts or {})},
        generation,
        report,
        last,
        Planner(chunks, weights, o.seed),
        Budget(o.max_calls, o.max_tokens),
        o.max_attempts if o.max_attempts is not None else 4 * o.n + 10,
    )


@dataclass
class _Run:
    """One generation run's state; ``steps`` makes the items, as judge calls to drive."""

    options: Options
    recall: ContextRecall
    templates: dict[str, ChatPromptTemplate]
    generation: dict[str, Any]
    report: GenerationReport
    last: int
    planner: Planner
    budget: Budget
    limit: int

    def steps(self) -> Steps[GenerationReport]:
        report, budget, o = self.report, self.budget, self.options
        chains: dict[str, Runnable[Any, Any]] = {}
        start = time.perf_counter()
        with (
            Appender(o.out) as written,
            Appender(o.rejected_out) as refused,
            progress(o.n, o.show_progress, "generating", "items") as advance,
        ):
            for _ in report.items:
                advance()
            number = self.last + 1
            while len(report.items) < o.n:
                if report.attempts >= self.limit:
                    report.stopped = "attempts"
                    break
                plan = self.planner.plan(number)
                held = cost(plan)
                if not budget.reserve(*held):
                    report.stopped = "budget"
                    break
                if plan.kind not in chains:
                    chains[plan.kind] = self.templates[plan.kind] | structured(
                        self.recall.judge, QuestionAnswer, max_tokens=ITEM_REPLY_TOKENS
                    )
                usage, began = Usage(), time.perf_counter()
                kept = [r["user_input"] for r in report.items]
                row, reason, detail = yield from attempt(
                    plan,
                    chains[plan.kind],
                    self.recall,
                    kept,
                    o.max_overlap,
                    o.duplicate_threshold,
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
                row["generation"] = {**self.generation, "attempt": number, "usage": spent}
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
