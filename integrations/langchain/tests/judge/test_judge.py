"""The LangChain integration on the real embedded judge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.vectorstores import VectorStoreRetriever
from langchain_ragrecall import RecallCallbackHandler, RecallRetriever

from ragrecall import ContextRecall
from ragrecall.sinks import JsonlSink, RecallRecord

pytestmark = pytest.mark.judge

Q = "Where is the Eiffel Tower?"


def test_wrapped_retriever_in_a_chain_logs_real_recall(
    base_retriever: VectorStoreRetriever, make_chain: Any, tmp_path: Path, local_judge: Any
) -> None:
    references = {
        Q: "The Eiffel Tower is in Paris. It was finished in 1889.",
        "What happened in the Colosseum?": "Gladiators fought in the Colosseum. It seats 50,000.",
    }
    handler = RecallCallbackHandler()
    sink = JsonlSink(tmp_path / "recall.jsonl")
    with RecallRetriever(
        base_retriever, references, metrics=[ContextRecall(local_judge)], sinks=[sink]
    ) as r:
        chain = make_chain(r)
        for question in references:
            chain.invoke(question, config={"callbacks": [handler]})
    lines = (tmp_path / "recall.jsonl").read_text().splitlines()
    records = {rec.query: rec for rec in map(RecallRecord.model_validate_json, lines)}
    assert set(records) == set(references)
    eiffel = records[Q]
    assert eiffel.result.status == "scored" and eiffel.result.score == 1.0
    assert {v.chunk_ids[0] for v in eiffel.result.verdicts} == {"eiffel", "eiffel-1889"}
    colosseum = records["What happened in the Colosseum?"].result
    assert colosseum.status == "scored" and colosseum.score is not None and colosseum.score < 1.0
    runs = {str(run.run_id) for run in handler.retrievals if not run.nested}
    assert {rec.run_id for rec in records.values()} == runs
