"""``ragrecall compare`` on two real LangChain retrievers over the same questions, on the
embedded judge: an ``InMemoryVectorStore`` on ``HashingEmbeddings`` at top-4 (A) against the
same store at top-1 (B, a deliberately degraded retriever), with the claims locked once by
``ragrecall claims`` so that both runs are scored against the same claims.

Each reference is three facts, one sentence each, and each fact is stated in its own document:
top-4 brings back all three, top-1 one, so B misses two of three facts on every question and
every paired difference is negative; with 8 such pairs the exact sign-flip p is 2 / 2^8 < 0.05.
With 4 pairs the test cannot reach 0.05 whatever the data (2 / 2^4 = 0.125): the verdict must
say so ("too few pairs"), not "no significant difference".
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hashing_embeddings import HashingEmbeddings
from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore, VectorStoreRetriever
from langchain_ragrecall import retrieve_samples

from ragrecall.cli import main

pytestmark = pytest.mark.judge

# 8 tasks of the comparison benchmark's corpus (benchmarks/data/retriever_topics.json): each
# reference states three facts, each fact the text of its own document (<sample_id>-<n>).
CORPUS = json.loads(
    (
        Path(__file__).resolve().parents[4] / "benchmarks" / "data" / "retriever_topics.json"
    ).read_text()
)
TASKS = [CORPUS["tasks"][i] for i in (0, 1, 2, 3, 4, 5, 6, 11)]
DISTRACTORS = {f"d{i:02d}" for i in (1, 2, 4, 6, 7, 9, 10, 12)}


def vector_store() -> InMemoryVectorStore:
    """The tasks' fact documents and 8 distractors."""
    wanted = {t["sample_id"] for t in TASKS}
    docs = [d for d in CORPUS["documents"] if d["id"].split("-")[0] in wanted | DISTRACTORS]
    store = InMemoryVectorStore(HashingEmbeddings())
    store.add_documents([Document(d["text"], id=d["id"]) for d in docs])
    return store


def answers(retriever: VectorStoreRetriever) -> list[dict[str, Any]]:
    """The retriever run on every task's question, as dataset rows."""
    samples = retrieve_samples(retriever, TASKS)
    return [s.model_dump(mode="json", exclude_none=True) for s in samples]


def facts_retrieved(row: dict[str, Any]) -> int:
    return sum(str(c["id"]).startswith(f"{row['sample_id']}-") for c in row["retrieved_contexts"])


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def first_samples(results: Path, n: int, out: Path) -> Path:
    """The lines of a results file for the first ``n`` questions (by sample id: ``eval`` writes
    samples in the order they finish)."""
    ids = {task["sample_id"] for task in TASKS[:n]}
    lines = results.read_text("utf-8").splitlines(keepends=True)
    out.write_text("".join(ln for ln in lines if json.loads(ln)["sample"]["sample_id"] in ids))
    return out


def scores(results: Path) -> dict[str, float | None]:
    rows = [json.loads(ln) for ln in results.read_text("utf-8").splitlines() if ln.strip()]
    return {r["sample"]["sample_id"]: r["results"]["context_recall"]["score"] for r in rows}


def test_compare_detects_a_degraded_retriever(
    local_judge: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = vector_store()
    good = answers(store.as_retriever(search_kwargs={"k": 4}))
    bad = answers(store.as_retriever(search_kwargs={"k": 1}))
    # The premise, judge-free: top-4 brings back every fact, top-1 exactly one.
    assert [facts_retrieved(r) for r in good] == [3] * len(TASKS)
    assert [facts_retrieved(r) for r in bad] == [1] * len(TASKS)
    data_a, data_b = write_jsonl(tmp_path / "A.jsonl", good), write_jsonl(tmp_path / "B.jsonl", bad)
    claims = tmp_path / "claims.jsonl"
    ra, rb = tmp_path / "ra.jsonl", tmp_path / "rb.jsonl"

    assert main(["claims", str(data_a), "--claim-mode", "sentences", "--out", str(claims)]) == 0
    locked = [json.loads(ln) for ln in claims.read_text("utf-8").splitlines()]
    assert [len(c["claims"]) for c in locked] == [3] * len(TASKS)
    assert main(["eval", str(data_a), "--claims", str(claims), "--out", str(ra)]) == 0
    assert main(["eval", str(data_b), "--claims", str(claims), "--out", str(rb)]) == 0
    score_a, score_b = scores(ra), scores(rb)
    capsys.readouterr()

    code = main(["compare", str(ra), str(rb), "--fail-if-worse"])
    out = capsys.readouterr().out
    detail = f"A {score_a}\nB {score_b}\n{out}"
    assert "samples A / B / paired" in out and "8 / 8 / 8" in out, detail
    means = re.search(r"mean A / B\D*?([\d.]+) / ([\d.]+)", out)
    assert means is not None, detail
    assert float(means[2]) < float(means[1]), detail
    assert "verdict: worse" in out, detail
    assert code == 1, detail

    small_a = first_samples(ra, 4, tmp_path / "ra4.jsonl")
    small_b = first_samples(rb, 4, tmp_path / "rb4.jsonl")
    code = main(["compare", str(small_a), str(small_b), "--fail-if-worse"])
    out = capsys.readouterr().out
    assert "4 / 4 / 4" in out, out
    assert "verdict: too few pairs" in out, out
    assert "no significant difference" not in out, out
    assert code == 0, out
