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
from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore, VectorStoreRetriever
from langchain_ragrecall import HashingEmbeddings

from ragrecall.cli import main

pytestmark = pytest.mark.judge

# (question, [(reference sentence, the document stating it), ...]); no document states
# another fact of its topic.
TOPICS: list[tuple[str, list[tuple[str, str]]]] = [
    (
        "Which countries does the Amazon River flow through, how long is the Amazon River, and "
        "which ocean does it empty into?",
        [
            (
                "The Amazon River flows through Peru, Colombia and Brazil.",
                "The Amazon River rises in the Andes of Peru and flows through Colombia and "
                "Brazil.",
            ),
            (
                "The Amazon River is about 6,400 kilometres long.",
                "Measured from its source, the Amazon River is roughly 6,400 kilometres long.",
            ),
            (
                "The Amazon River empties into the Atlantic Ocean.",
                "The Amazon River ends in a wide estuary and empties into the Atlantic Ocean.",
            ),
        ],
    ),
    (
        "Where does Mount Kilimanjaro stand, how many metres high is Mount Kilimanjaro, and is "
        "Mount Kilimanjaro a volcano?",
        [
            (
                "Mount Kilimanjaro is in Tanzania.",
                "Mount Kilimanjaro stands in northeastern Tanzania, near the border with Kenya.",
            ),
            (
                "Mount Kilimanjaro is 5,895 metres high.",
                "The summit of Mount Kilimanjaro, Uhuru Peak, is 5,895 metres above sea level.",
            ),
            (
                "Mount Kilimanjaro is a dormant volcano.",
                "Mount Kilimanjaro is a dormant volcano made of three volcanic cones.",
            ),
        ],
    ),
    (
        "Where does the Great Barrier Reef lie, how many reefs make up the Great Barrier Reef, "
        "and what threatens the Great Barrier Reef?",
        [
            (
                "The Great Barrier Reef lies off the coast of Queensland, Australia.",
                "The Great Barrier Reef lies in the Coral Sea off the coast of Queensland, "
                "Australia.",
            ),
            (
                "The Great Barrier Reef is made of about 2,900 individual reefs.",
                "The Great Barrier Reef is made up of about 2,900 individual reefs and 900 "
                "islands.",
            ),
            (
                "Coral bleaching threatens the Great Barrier Reef.",
                "Warmer sea water causes coral bleaching, which threatens the Great Barrier Reef.",
            ),
        ],
    ),
    (
        "How do honeybees communicate, does each colony of honeybees have a queen, and how do "
        "honeybees make honey?",
        [
            (
                "Honeybees communicate with a waggle dance.",
                "Honeybees tell each other where flowers are with a waggle dance.",
            ),
            (
                "Each colony of honeybees has one queen.",
                "Each colony of honeybees has one queen, and she lays all of its eggs.",
            ),
            (
                "Honeybees make honey from flower nectar.",
                "Honeybees make honey by collecting flower nectar and evaporating its water.",
            ),
        ],
    ),
    (
        "When was the Rosetta Stone found, which scripts does the Rosetta Stone carry, and "
        "where is the Rosetta Stone kept?",
        [
            (
                "The Rosetta Stone was found in 1799.",
                "French soldiers found the Rosetta Stone in Egypt in 1799.",
            ),
            (
                "The Rosetta Stone carries one text in three scripts.",
                "The Rosetta Stone carries one decree written in three scripts: hieroglyphic, "
                "Demotic and Greek.",
            ),
            (
                "The Rosetta Stone is kept in the British Museum.",
                "Since 1802 the Rosetta Stone has been on display in the British Museum in London.",
            ),
        ],
    ),
    (
        "Where was Marie Curie born, what did Marie Curie discover, and which Nobel Prizes did "
        "Marie Curie win?",
        [
            (
                "Marie Curie was born in Warsaw in 1867.",
                "Marie Curie was born Maria Sklodowska in Warsaw in 1867.",
            ),
            (
                "Marie Curie discovered polonium and radium.",
                "Together with her husband Pierre, Marie Curie discovered polonium and radium.",
            ),
            (
                "Marie Curie won two Nobel Prizes.",
                "Marie Curie won two Nobel Prizes, in physics in 1903 and in chemistry in 1911.",
            ),
        ],
    ),
    (
        "Who discovered penicillin, what makes penicillin, and what does penicillin treat?",
        [
            (
                "Alexander Fleming discovered penicillin in 1928.",
                "Alexander Fleming discovered penicillin in 1928 at St Mary's Hospital in London.",
            ),
            (
                "Penicillin is made by Penicillium mould.",
                "Penicillin is made by a mould of the genus Penicillium.",
            ),
            (
                "Penicillin treats bacterial infections.",
                "Doctors use penicillin to treat bacterial infections such as strep throat.",
            ),
        ],
    ),
    (
        "When did the Panama Canal open, what does the Panama Canal link, and how does the "
        "Panama Canal lift ships?",
        [
            (
                "The Panama Canal opened in 1914.",
                "The Panama Canal opened to shipping in August 1914.",
            ),
            (
                "The Panama Canal links the Atlantic and Pacific oceans.",
                "The Panama Canal links the Atlantic Ocean with the Pacific Ocean across the "
                "Isthmus of Panama.",
            ),
            (
                "The Panama Canal uses locks to lift ships.",
                "Locks on the Panama Canal lift ships 26 metres up to Gatun Lake.",
            ),
        ],
    ),
]

DISTRACTORS = [
    "The Mississippi River flows into the Gulf of Mexico.",
    "Mount Everest is the highest mountain above sea level.",
    "Lake Superior is the largest of the Great Lakes by area.",
    "Bumblebees are larger and hairier than most other bees.",
    "The Statue of Liberty was a gift from France in 1886.",
    "The Suez Canal links the Mediterranean Sea and the Red Sea.",
    "Aspirin was first made from a compound found in willow bark.",
    "Isaac Newton described the law of universal gravitation.",
]


def sample_id(i: int) -> str:
    return f"q{i + 1:02d}"


def vector_store() -> InMemoryVectorStore:
    """Each fact in its own document (ids ``q01-1`` ...), and the distractors."""
    docs = [
        Document(text, id=f"{sample_id(i)}-{j + 1}")
        for i, (_, facts) in enumerate(TOPICS)
        for j, (_, text) in enumerate(facts)
    ]
    docs += [Document(text, id=f"d{i + 1}") for i, text in enumerate(DISTRACTORS)]
    store = InMemoryVectorStore(HashingEmbeddings())
    store.add_documents(docs)
    return store


def answers(retriever: VectorStoreRetriever) -> list[dict[str, Any]]:
    """The retriever run on every question, as dataset rows."""
    rows = []
    for i, (question, facts) in enumerate(TOPICS):
        docs = retriever.invoke(question)
        rows.append(
            {
                "sample_id": sample_id(i),
                "user_input": question,
                "reference": " ".join(ref for ref, _ in facts),
                "retrieved_contexts": [{"id": d.id, "text": d.page_content} for d in docs],
            }
        )
    return rows


def facts_retrieved(row: dict[str, Any]) -> int:
    return sum(str(c["id"]).startswith(f"{row['sample_id']}-") for c in row["retrieved_contexts"])


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def first_samples(results: Path, n: int, out: Path) -> Path:
    """The lines of a results file for the first ``n`` questions (by sample id: ``eval`` writes
    samples in the order they finish)."""
    ids = {sample_id(i) for i in range(n)}
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
    assert [facts_retrieved(r) for r in good] == [3] * len(TOPICS)
    assert [facts_retrieved(r) for r in bad] == [1] * len(TOPICS)
    data_a, data_b = write_jsonl(tmp_path / "A.jsonl", good), write_jsonl(tmp_path / "B.jsonl", bad)
    claims = tmp_path / "claims.jsonl"
    ra, rb = tmp_path / "ra.jsonl", tmp_path / "rb.jsonl"

    assert main(["claims", str(data_a), "--claim-mode", "sentences", "--out", str(claims)]) == 0
    locked = [json.loads(ln) for ln in claims.read_text("utf-8").splitlines()]
    assert [len(c["claims"]) for c in locked] == [3] * len(TOPICS)
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
