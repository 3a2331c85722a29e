"""The engines' conformance suite (``testkit/engine_suite.py``) on the local engine and on
batch mode against ``batchserver.BatchServer``; the Ray engine's run is in
tests/system/test_engines_ray.py. And the async and streaming twins share engine and store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from batchserver import BatchServer
from engine_suite import SPEC, EngineConformance, N, Runner, rows
from langchain_openai import ChatOpenAI

from ragrecall import evaluate
from ragrecall.engines import BatchEngine, LocalEngine


class TestEngines(EngineConformance):
    @pytest.fixture(params=["local", "batch"])
    def runner(self, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Runner]:
        if request.param == "local":
            yield Runner(LocalEngine(concurrency=4), tmp_path / "out.jsonl")
        else:
            with BatchServer() as server:
                judge = ChatOpenAI(base_url=server.url, api_key="t", model="keyword", max_retries=0)
                yield Runner(BatchEngine(judge, poll_interval=0), tmp_path / "out.jsonl")


async def test_the_async_and_streaming_twins_take_the_same_engine_and_store(
    tmp_path: Path,
) -> None:
    from ragrecall import aevaluate, astream

    data, out = rows(), tmp_path / "out.jsonl"
    engine = LocalEngine(concurrency=3)
    report = await aevaluate(data, [SPEC], out=out, engine=engine, max_calls=4)
    assert report.budget_spent and report.usage.calls == 4
    streamed = [s async for s in astream(data, [SPEC], out=out, engine=engine)]
    assert sorted(s.index for s in streamed) == list(range(N))  # 4 resumed, 8 scored
    again = evaluate(data, [SPEC], out=out)  # all 12 read back, none judged
    assert again.resumed == N and again.usage.calls == 0
    by_index = sorted(streamed, key=lambda s: s.index)
    assert [s.results["context_recall"] for s in by_index] == again.results["context_recall"]
