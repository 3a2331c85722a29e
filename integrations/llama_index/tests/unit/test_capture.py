"""RecallCapture on LlamaIndex's dispatcher: one record per query, off the query path."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.response.schema import RESPONSE_TYPE
from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.schema import QueryBundle
from llama_index.evaluation.ragrecall import RecallCapture

from ragrecall import ClaimCache, ContextRecall, RecallLogger
from ragrecall.sinks import CallableSink, JsonlSink, RecallRecord, SQLiteSink
from ragrecall.testing import ScriptedJudge, keyword_reply


def recall(judge: Any = None) -> ContextRecall:
    return ContextRecall(judge or ScriptedJudge(), strategy="per_claim", cache=ClaimCache())


@pytest.fixture
def seen() -> list[RecallRecord]:
    return []


@pytest.fixture
def logger(seen: list[RecallRecord]) -> Iterator[RecallLogger]:
    with RecallLogger([recall()], [CallableSink(seen.append)]) as logger:
        yield logger


@pytest.fixture
def references(questions: dict[str, tuple[str, str]]) -> dict[str, str]:
    return {q: ref for q, (ref, _) in questions.items()}


def test_one_record_per_query_to_every_sink(
    tmp_path: Path,
    query_engine: BaseQueryEngine,
    references: dict[str, str],
    seen: list[RecallRecord],
) -> None:
    jsonl, db = JsonlSink(tmp_path / "r.jsonl"), SQLiteSink(tmp_path / "r.sqlite")
    logger = RecallLogger([recall()], [jsonl, db, CallableSink(seen.append)])
    with logger, RecallCapture(logger, references) as capture:
        responses = {q: query_engine.query(q) for q in references}
        query_engine.query("A question nobody has a reference for?")  # scored live
    assert len(seen) == 4 and capture.submitted == 3 and capture.skipped == 1
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == 4
    assert len(SQLiteSink(tmp_path / "r.sqlite").records()) == 4
    (live,) = [r for r in seen if r.extra.get("no_reference")]
    assert live.query == "A question nobody has a reference for?" and live.reference is None
    by_query = {r.query: r for r in seen if r is not live}
    assert set(by_query) == set(references)
    for q, response in responses.items():
        record = by_query[q]
        assert [c.id for c in record.chunks] == [n.node.node_id for n in response.source_nodes]
        assert [c.score for c in record.chunks] == [n.score for n in response.source_nodes]
        assert record.reference == references[q]
        assert record.run_id is not None and record.run_id.startswith("RetrieverQueryEngine.query-")
        assert record.extra == {"kind": "query"}
    assert by_query["Where is the Eiffel Tower?"].result.score == 0.5


async def test_concurrent_async_queries_are_kept_apart(
    query_engine: BaseQueryEngine, references: dict[str, str], logger: RecallLogger, seen: Any
) -> None:
    with RecallCapture(logger, references):
        responses = await asyncio.gather(*(query_engine.aquery(q) for q in references))
    assert len(seen) == 3
    by_query = {r.query: r for r in seen}
    for q, response in zip(references, responses, strict=True):
        assert [c.id for c in by_query[q].chunks] == [n.node.node_id for n in response.source_nodes]
    assert len({r.run_id for r in seen}) == 3


class Engine(BaseQueryEngine):
    """A BaseQueryEngine (whose ``query`` emits the query events) that runs ``answer``."""

    def __init__(self, answer: Callable[[str], RESPONSE_TYPE]) -> None:
        super().__init__(callback_manager=None)
        self.answer = answer

    def _get_prompt_modules(self) -> dict[str, Any]:
        return {}

    def _query(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        return self.answer(query_bundle.query_str)

    async def _aquery(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        return self.answer(query_bundle.query_str)


def test_nested_queries_give_one_record(
    query_engine: BaseQueryEngine, references: dict[str, str], logger: RecallLogger, seen: Any
) -> None:
    with RecallCapture(logger, references):
        Engine(query_engine.query).query("Where is the Eiffel Tower?")
    assert len(seen) == 1
    assert seen[0].run_id.startswith("Engine.query-")
    assert [c.id for c in seen[0].chunks] == ["eiffel", "moon"]


def test_a_bare_retrieval_gives_one_record(
    index: VectorStoreIndex, references: dict[str, str], logger: RecallLogger, seen: Any
) -> None:
    with RecallCapture(logger, references):
        index.as_retriever(similarity_top_k=1).retrieve("What colour are bananas?")
    assert len(seen) == 1
    assert seen[0].extra == {"kind": "retrieval"}
    assert [c.id for c in seen[0].chunks] == ["banana"] and seen[0].result.score == 1.0


def test_a_failed_query_logs_what_it_retrieved(
    index: VectorStoreIndex, references: dict[str, str], logger: RecallLogger, seen: Any
) -> None:
    retriever = index.as_retriever(similarity_top_k=2)

    def fail_after_retrieval(query: str) -> RESPONSE_TYPE:
        retriever.retrieve(query)
        raise RuntimeError("synthesis failed")

    engine = Engine(fail_after_retrieval)
    with RecallCapture(logger, references), pytest.raises(RuntimeError):
        engine.query("Where is the Eiffel Tower?")
    assert len(seen) == 1
    assert seen[0].extra == {"kind": "query", "error": "RuntimeError: synthesis failed"}
    assert [c.id for c in seen[0].chunks] == ["eiffel", "moon"]


def test_references_from_a_callable_with_sample_fields(
    query_engine: BaseQueryEngine, seen: list[RecallRecord]
) -> None:
    def lookup(query: str) -> dict[str, Any] | None:
        if "bananas" not in query:
            return None
        return {"reference": "Bananas are yellow.", "reference_claims": ["Bananas are yellow."]}

    logger = RecallLogger([recall()], [CallableSink(seen.append)])
    with logger, RecallCapture(logger, lookup) as capture:
        query_engine.query("What colour are bananas?")
        query_engine.query("Where is the Eiffel Tower?")
    referenced = [r.result.claims for r in seen if "no_reference" not in r.extra]
    assert referenced == [["Bananas are yellow."]]
    assert capture.skipped == 1  # and scored for sufficiency, by default
    assert [r.query for r in seen if r.extra.get("no_reference")] == ["Where is the Eiffel Tower?"]


def test_references_match_as_in_langchain_case_and_whitespace_folded(
    query_engine: BaseQueryEngine, seen: list[RecallRecord]
) -> None:
    logger = RecallLogger([recall()], [CallableSink(seen.append)])
    with logger, RecallCapture(logger, {"what  colour are BANANAS?": "Bananas are yellow."}):
        query_engine.query("What colour are bananas?")
    assert [r.reference for r in seen] == ["Bananas are yellow."]


def test_scoring_happens_off_the_query_path(
    query_engine: BaseQueryEngine, references: dict[str, str], seen: list[RecallRecord]
) -> None:
    gate = threading.Event()

    def slow(messages: Any) -> Any:
        gate.wait(10)
        return keyword_reply(messages)

    logger = RecallLogger([recall(ScriptedJudge(reply=slow))], [CallableSink(seen.append)])
    with logger, RecallCapture(logger, references):
        query_engine.query("What colour are bananas?")  # returns while the judge waits
        assert seen == []
        gate.set()
    assert len(seen) == 1


def test_detach_removes_the_handlers(
    query_engine: BaseQueryEngine, references: dict[str, str], logger: RecallLogger, seen: Any
) -> None:
    dispatcher = get_dispatcher()
    events, spans = len(dispatcher.event_handlers), len(dispatcher.span_handlers)
    capture = RecallCapture(logger, references).attach()
    assert len(dispatcher.event_handlers) == events + 1
    with pytest.raises(RuntimeError, match="already attached"):
        capture.attach()
    capture.detach()
    assert (len(dispatcher.event_handlers), len(dispatcher.span_handlers)) == (events, spans)
    query_engine.query("What colour are bananas?")
    logger.flush()
    assert seen == []


def test_sample_rate_skips_the_queries_outside_the_share(
    query_engine: BaseQueryEngine, references: dict[str, str], seen: list[RecallRecord]
) -> None:
    from ragrecall.adapters import sampled

    logger = RecallLogger([recall()], [CallableSink(seen.append)])
    with logger, RecallCapture(logger, references, sample_rate=0.5) as capture:
        for q in references:
            query_engine.query(q)
    chosen = sorted(q for q in references if sampled(q, 0.5))
    assert sorted(r.query or "" for r in seen) == chosen
    assert capture.sampled_out == len(references) - len(chosen)
    assert all(r.extra["sample_rate"] == 0.5 for r in seen)
