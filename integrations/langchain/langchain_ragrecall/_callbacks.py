"""``RecallCallbackHandler``: capture what every retriever in a run returned, score it later.

Pass the handler in a run's callbacks; it records each retriever run's query (from
``on_retriever_start``) and documents (from ``on_retriever_end``), keyed by run id, with the
parent and root run ids. ``score_captured(references)`` then scores the captured contexts
against a dataset of references. Given ``references`` and a ``RecallLogger``, it also submits
each retrieval with a known reference as it finishes, and the others to a ``LiveScorer``
(``no_reference``) that scores them without one; with ``group_by="trace"``, one record per
root run instead, when it ends (an agent's several searches for one answer). A retriever run
nested in another retriever run (``RecallRetriever``'s inner one, say) is marked ``nested``
and not scored twice. One concern, the handler: what it submits is built in ``_submit``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document

from ragrecall import EvaluationReport, Metric, RecallLogger, RecallResult, Sample, evaluate
from ragrecall.adapters import ReferenceBook, References, RunTree

from ._captured import CapturedRetrieval
from ._documents import step_chunks
from ._live import live_scorer
from ._submit import reference_of, steps, submit

__all__ = ["CapturedRetrieval", "RecallCallbackHandler"]

log = logging.getLogger("ragrecall")

GroupBy = Literal["retrieval", "trace"]


class RecallCallbackHandler(BaseCallbackHandler):
    """Captures the documents of every retriever run; thread-safe; never breaks a run.

    Args:
        references: references by query, for ``score_captured`` and for live logging.
        logger: when given, each finished retrieval with a known reference is submitted to
            it (run id, parent run id and retriever name in the record).
        reference_key: also take the reference from the run's metadata under this key.
        no_reference: with a ``logger``, what scores a finished retrieval without a reference:
            ``"sufficiency"`` (the default), another metric that needs no reference, or
            ``"skip"``. It runs off the run's path on one thread, with the judge of the
            logger's metrics, writing to its sinks, and costs judge calls on your traffic:
            up to ``max_calls_per_minute``; beyond them retrievals wait in a queue of
            ``max_queue`` and are dropped once it is full (``live.stats`` counts them).
        sample_rate: the share of those retrievals to score, by a hash of the query (the
            logger's own ``sample_rate`` samples the referenced ones).
        group_by: with a ``logger``, ``"retrieval"`` (the default) submits each retrieval as
            it ends; ``"trace"`` one record per root run (the handler must be in its
            callbacks) when it ends: its retrievals' documents joined as ``captured_samples``
            joins them, with each chunk's step, the first reference known for their queries
            (without one, the first query is the question). A root run that fails submits
            nothing; ``failed_runs`` counts those.

    Captured retrievals are kept until ``clear()``; ``no_reference`` counts the finished
    retrievals (with ``group_by="trace"``, root runs) without a reference. ``flush()`` /
    ``close()`` wait for the live scores.
    """

    raise_error: bool = False
    run_inline: bool = True

    def __init__(
        self,
        references: References | None = None,
        *,
        logger: RecallLogger | None = None,
        reference_key: str = "reference",
        no_reference: str = "sufficiency",
        sample_rate: float = 1.0,
        max_calls_per_minute: int | None = 60,
        max_queue: int = 1000,
        group_by: GroupBy = "retrieval",
    ):
        if group_by not in ("retrieval", "trace"):
            raise ValueError(f"group_by must be 'retrieval' or 'trace', not {group_by!r}")
        self.references = ReferenceBook(references)
        self.logger = logger
        self.reference_key = reference_key
        self.group_by = group_by
        self.no_reference = 0
        self.failed_runs = 0
        self.live = live_scorer(
            no_reference,
            logger,
            sample_rate=sample_rate,
            max_calls_per_minute=max_calls_per_minute,
            max_queue=max_queue,
        )
        self._lock = threading.Lock()
        self._retrievals: dict[UUID, CapturedRetrieval] = {}
        self._runs: RunTree[UUID] = RunTree()
        # group_by="trace" with a logger: each root run's retriever runs so far, in start order
        self._open: dict[UUID, list[UUID]] = {}

    # -- reading what was captured ---------------------------------------------------------

    @property
    def retrievals(self) -> list[CapturedRetrieval]:
        """Every captured retriever run, in start order."""
        with self._lock:
            return list(self._retrievals.values())

    def get(self, run_id: UUID) -> CapturedRetrieval | None:
        with self._lock:
            return self._retrievals.get(run_id)

    def children(self, parent_run_id: UUID) -> list[CapturedRetrieval]:
        """The retriever runs whose parent run is ``parent_run_id``."""
        return [r for r in self.retrievals if r.parent_run_id == parent_run_id]

    def in_trace(self, root_run_id: UUID) -> list[CapturedRetrieval]:
        """The retriever runs anywhere under the root run ``root_run_id``."""
        return [r for r in self.retrievals if r.root_run_id == root_run_id]

    def clear(self) -> None:
        with self._lock:
            self._retrievals.clear()
            self._runs.clear()
            self._open.clear()
            self.no_reference = 0
            self.failed_runs = 0

    def flush(self) -> None:
        """Wait until the retrievals handed to the live scorer are scored and written."""
        if self.live is not None:
            self.live.flush()

    def close(self) -> None:
        """Flush and stop the live scorer (the logger is yours to close, after it)."""
        if self.live is not None:
            self.live.close()

    # -- scoring ---------------------------------------------------------------------------

    def captured_samples(
        self,
        references: References | None = None,
        *,
        group_by: GroupBy = "retrieval",
    ) -> list[tuple[UUID, Sample]]:
        """(run id, sample) for each finished retrieval whose reference is known.

        ``group_by="trace"`` merges the documents of all retrievals under one root run into
        one sample (keyed by the root run id, each document once), for chains that retrieve
        more than once; where there are several, each chunk's metadata has the step that
        first retrieved it (``retrieval_step``, 1-based in start order) and its query
        (``retrieval_query``), as ``ragrecall.load_traces`` gives them.
        """
        book = ReferenceBook(references) if references is not None else self.references
        done = [r for r in self.retrievals if r.finished and not r.nested]
        groups: dict[UUID, list[CapturedRetrieval]] = {}
        for r in done:
            groups.setdefault(r.run_id if group_by == "retrieval" else r.root_run_id, []).append(r)
        out: list[tuple[UUID, Sample]] = []
        for key, members in groups.items():
            reference = reference_of(members, book)
            if reference is None:
                continue
            chunks = step_chunks(steps(members))
            out.append((key, reference.model_copy(update={"retrieved_contexts": chunks})))
        return out

    def score_captured(
        self,
        references: References | None = None,
        metrics: Sequence[Metric[RecallResult]] | None = None,
        *,
        group_by: GroupBy = "retrieval",
        **evaluate_kwargs: Any,
    ) -> EvaluationReport:
        """Score the captured contexts (see ``captured_samples``) with ``ragrecall.evaluate``.

        Retrievals with no known reference are left out; ``report.samples[i]`` is the i-th
        of ``captured_samples(...)``.
        """
        samples = [s for _, s in self.captured_samples(references, group_by=group_by)]
        return evaluate(samples, metrics, **evaluate_kwargs)

    # -- callbacks -------------------------------------------------------------------------

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._runs.enter(run_id, parent_run_id)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._forget(run_id, failed=False)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._forget(run_id, failed=True)

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._forget(run_id, failed=False)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._forget(run_id, failed=True)

    def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._runs.enter(run_id, parent_run_id)

    def on_retriever_start(
        self,
        serialized: dict[str, Any] | None,
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._runs.enter(run_id, parent_run_id)
        root = self._runs.root(run_id)
        with self._lock:
            self._retrievals[run_id] = CapturedRetrieval(
                run_id=run_id,
                parent_run_id=parent_run_id,
                root_run_id=root,
                name=kwargs.get("name") or (serialized or {}).get("name"),
                query=query,
                nested=parent_run_id in self._retrievals,
                reference=(metadata or {}).get(self.reference_key),
            )
            if self._by_trace and root != run_id:
                self._open.setdefault(root, []).append(run_id)

    def on_retriever_end(
        self,
        documents: Sequence[Document],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        with self._lock:
            started = self._retrievals.get(run_id)
            if started is None:  # the handler was added mid-run
                started = CapturedRetrieval(run_id, parent_run_id, run_id, None, "")
            done = replace(started, documents=list(documents))
            self._retrievals[run_id] = done
        self._runs.leave(run_id)
        # by trace, a retriever run under a root run waits for the root's end
        by_trace = self._by_trace and done.root_run_id != run_id
        if self.logger is not None and not done.nested and not by_trace:
            self._submit(run_id, [done])

    def on_retriever_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        with self._lock:
            started = self._retrievals.get(run_id)
            if started is not None:
                self._retrievals[run_id] = replace(started, error=repr(error))
        self._runs.leave(run_id)

    # -- helpers ---------------------------------------------------------------------------

    @property
    def _by_trace(self) -> bool:
        return self.logger is not None and self.group_by == "trace"

    def _forget(self, run_id: UUID, *, failed: bool) -> None:
        """Parent links are needed only while a run is in flight (its retrievers start); by
        trace, a root run's end submits its retrievals (its failure, nothing)."""
        self._runs.leave(run_id)
        with self._lock:
            started = self._open.pop(run_id, [])
            if started and failed:
                self.failed_runs += 1
                return
            found = [self._retrievals.get(r) for r in started]
        members = [r for r in found if r is not None and r.finished and not r.nested]
        if members:
            self._submit(run_id, members)

    def _submit(self, run_id: UUID, members: list[CapturedRetrieval]) -> None:
        assert self.logger is not None
        try:
            reference = reference_of(members, self.references)
            if reference is None:
                with self._lock:
                    self.no_reference += 1
            submit(self.logger, self.live, run_id, members, reference)
        except Exception:
            log.exception("ragrecall: could not submit run %s", run_id)
