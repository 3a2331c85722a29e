"""`ragrecall generate` and `ragrecall.generate`: corpus reading and chunking, each question kind,
the overlap limit, dedup, each rejection reason, determinism, resume, budget, dry run, and
LangChain / LlamaIndex objects as the corpus.

The judge is ragrecall.testing's keyword judge (decomposes at ". ", supports a claim whose words
are all in a passage) behind a scripted writer: for a generation prompt it asks "Tell me about
<the passages' names>" and answers with each passage's first sentence.
"""

from __future__ import annotations

import json
import re
import sys
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

import ragrecall
from ragrecall import generate, load_chunks
from ragrecall.cli import main
from ragrecall.testing import ScriptedJudge, keyword_reply, passages

RIVERS = ["Arvel", "Brisk", "Cobalt", "Dunmore", "Elkwater", "Fenlow", "Garnet", "Hollin"]


def corpus_rows() -> list[dict[str, Any]]:
    return [
        {
            "id": f"d{i}",
            "text": f"The {name} river rises in the {name} hills. The {name} river is "
            f"{10 + i} km long. Trout live in the {name} river.",
            "metadata": {"title": name},
        }
        for i, name in enumerate(RIVERS)
    ]


def write_jsonl(path: Path, rows: Sequence[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def first_sentence(text: str) -> str:
    return text.split(". ")[0].rstrip(".") + "."


def name_of(text: str) -> str:
    return re.findall(r"The (\w+) river", text)[0]


Writer = Callable[[dict[int, str]], Any]


def writer(found: dict[int, str]) -> Any:
    """A question in its own words, answered by each passage's first sentence."""
    names = " and ".join(name_of(t) for t in found.values())
    answer = " ".join(first_sentence(t) for t in found.values())
    return {"question": f"Tell me about {names}?", "answer": answer}


def judge_with(
    write: Writer = writer, check: Callable[..., Any] = keyword_reply, name: str = "scripted"
) -> ScriptedJudge:
    def reply(messages: Sequence[BaseMessage]) -> Any:
        if str(messages[0].content).startswith("You write test questions"):
            return write(passages(messages))
        return check(messages)

    return ScriptedJudge(reply=reply, model_name=name)  # the name keys the claim store


def generation_calls(judge: ScriptedJudge) -> int:
    return sum(str(m[0].content).startswith("You write test questions") for m in judge.calls)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "corpus.jsonl", corpus_rows())


# --- the corpus ------------------------------------------------------------------------


def test_a_folder_of_text_markdown_and_html(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.txt").write_text("Plain text here.", encoding="utf-8")
    (tmp_path / "sub" / "b.md").write_text("Some *markdown* here.", encoding="utf-8")
    (tmp_path / "c.html").write_text(
        "<html><head><title>T</title><script>var x = 1;</script></head>"
        "<body><p>First &amp; para.</p><p>Second para.</p></body></html>",
        encoding="utf-8",
    )
    (tmp_path / "d.pdf").write_bytes(b"%PDF")
    (tmp_path / "e.txt").write_text("  \n", encoding="utf-8")  # empty: skipped
    docs = load_chunks(tmp_path, chunk_size=None)  # the documents as read
    assert [d.id for d in docs] == ["a.txt", "c.html", "sub/b.md"]
    assert docs[1].text == "First & para.\nSecond para."
    assert docs[2].metadata == {"source": "sub/b.md"}


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("{not json", "corpus.jsonl:2: not a JSON object"),
        ('["a list"]', "corpus.jsonl:2: expected a JSON object"),
        ('{"text": "no id"}', "corpus.jsonl:2: field 'id'"),
        ('{"id": "x", "text": ""}', "corpus.jsonl:2: field 'text'"),
        ('{"id": "x", "text": 3}', "corpus.jsonl:2: field 'text'"),
        ('{"id": "x", "text": "t", "metadata": [1]}', "corpus.jsonl:2: field 'metadata'"),
        ('{"id": "a", "text": "again"}', "corpus.jsonl:2: field 'id': id 'a' is also on line 1"),
    ],
)
def test_each_bad_row_is_named_and_exits_2(
    tmp_path: Path, line: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"id": "a", "text": "fine"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(ragrecall.SampleError, match=re.escape(said)):
        load_chunks(path)
    code = main(["generate", str(path), "--n", "1", "--out", str(tmp_path / "o.jsonl")])
    assert code == 2
    assert said in " ".join(capsys.readouterr().err.split())


def test_bad_files_and_folders_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "o.jsonl")
    (tmp_path / "empty").mkdir()
    assert main(["generate", str(tmp_path / "empty"), "--n", "1", "--out", out]) == 2
    assert "no .txt, .md" in capsys.readouterr().err
    assert main(["generate", str(tmp_path / "missing"), "--n", "1", "--out", out]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    assert main(["generate", str(tmp_path / "bad"), "--n", "1", "--out", out]) == 2
    assert "latin1.txt: not UTF-8" in " ".join(capsys.readouterr().err.split())


def test_chunks_are_sentence_windows_with_overlap() -> None:
    text = " ".join(f"Sentence number {i} is here." for i in range(10))  # 27 chars each
    doc = {"id": "long", "text": text, "metadata": {"k": 1}}
    chunks = load_chunks([doc], chunk_size=90, overlap=1)
    assert [c.id for c in chunks][:2] == ["long#1", "long#2"]
    assert all(len(c.text) <= 90 for c in chunks)
    first, second = (c.text.split(". ") for c in chunks[:2])
    assert second[0] + "." == first[-1]  # one sentence shared
    assert chunks[0].metadata == {"k": 1, "document_id": "long"}
    joined = " ".join(c.text for c in chunks)
    assert all(f"number {i} " in joined for i in range(10))
    assert load_chunks([doc], chunk_size=None)[0].id == "long"  # kept as given
    assert load_chunks(["One sentence."])[0].id == "1"  # one window: the document's id
    with pytest.raises(ValueError, match="chunk size"):
        load_chunks([doc], chunk_size=0)


def test_langchain_documents_and_llamaindex_nodes_are_a_corpus() -> None:
    from langchain_core.documents import Document
    from llama_index.core.schema import NodeWithScore, TextNode

    rows = corpus_rows()
    items: list[Any] = [Document(page_content=rows[0]["text"], id="lc-0")]
    items.append(Document(page_content=rows[1]["text"], metadata={"id": "lc-1"}))
    items.append(TextNode(text=rows[2]["text"], id_="li-2", metadata={"title": "C"}))
    items.append(NodeWithScore(node=TextNode(text=rows[3]["text"], id_="li-3"), score=0.5))
    docs = load_chunks(items, chunk_size=None)
    assert [d.id for d in docs] == ["lc-0", "lc-1", "li-2", "li-3"]
    assert docs[2].metadata == {"title": "C"}
    report = generate(items, 2, judge=judge_with(), chunk_size=None, mix={"single": 1})
    assert {tuple(i["reference_context_ids"]) for i in report.items} <= {
        ("lc-0",),
        ("lc-1",),
        ("li-2",),
        ("li-3",),
    }
    with pytest.raises(ragrecall.SampleError, match="corpus item 0: a int"):
        load_chunks([3])


# --- checks ----------------------------------------------------------------------------


def asking(*questions: str) -> ScriptedJudge:
    """A writer that asks these questions in turn, answered by the passage's first sentence."""
    asked = iter(questions)
    return judge_with(lambda found: {"question": next(asked), "answer": first_sentence(found[1])})


def test_copy_overlap_and_near_duplicates(tmp_path: Path) -> None:
    """Each item records the share of its question's word trigrams found in its chunks."""
    corpus = write_jsonl(tmp_path / "one.jsonl", corpus_rows()[:1])  # "The Arvel river rises..."
    for question, overlap in [
        ("Where does the Arvel river rise?", 1 / 4),
        ("The Arvel river rises in the Arvel hills?", 1.0),
        ("Tell me about Arvel?", 0.0),
        ("Arvel?", 1.0),  # shorter than a trigram: by word
    ]:
        report = generate(corpus, 1, judge=asking(question), max_overlap=1.0, max_attempts=1)
        (item,) = report.items
        assert item["user_input"] == question and item["overlap"] == pytest.approx(overlap)
    kw: dict[str, Any] = {"mix": {"single": 1}, "max_attempts": 2, "duplicate_threshold": 0.7}
    first = "How long is the Arvel river?"
    report = generate(corpus, 2, judge=asking(first, "Arvel river: how long?"), **kw)
    assert report.rejected == {"duplicate": 1} and len(report.items) == 1
    report = generate(corpus, 2, judge=asking(first, "How long is Brisk?"), **kw)
    assert not report.rejected and len(report.items) == 2


def test_single_chunk_items_carry_ragas_fields_and_settings(corpus: Path) -> None:
    report = generate(corpus, 3, judge=judge_with(), mix={"single": 1}, seed=1)
    assert len(report.items) == 3 and not report.rejected and report.stopped == ""
    item = report.items[0]
    (cid,) = item["reference_context_ids"]
    text = {r["id"]: r["text"] for r in corpus_rows()}[cid]
    assert item["reference_contexts"] == [text]
    assert item["reference"] == first_sentence(text)
    assert item["user_input"] == f"Tell me about {name_of(text)}?"
    assert item["question_kind"] == "single"
    assert item["reference_claims"] == [first_sentence(text)]
    made = item["generation"]
    # A reply and a decomposition; no verdict call: the chunk states the answer word for word.
    assert made["usage"]["calls"] == 2 and made["usage"]["prompt_tokens"] == 200
    assert made["seed"] == 1 and made["mix"] == {"single": 1.0} and made["attempt"] == 0
    assert made["judge"] == "scripted:scripted"
    assert report.usage.calls == 3 * 2


@pytest.mark.parametrize("kind", ["multi_hop", "comparison", "aggregation"])
def test_multi_chunk_kinds_need_every_chunk(corpus: Path, kind: str) -> None:
    report = generate(corpus, 2, judge=judge_with(), mix={kind: 1})
    assert len(report.items) == 2, report.rejected
    for item in report.items:
        wanted = 3 if kind == "aggregation" else 2
        assert item["question_kind"] == kind
        assert len(item["reference_context_ids"]) == wanted
        assert len(set(item["reference_context_ids"])) == wanted
        assert len(item["reference_claims"]) == wanted


def test_the_mix_is_followed(corpus: Path) -> None:
    report = generate(corpus, 12, judge=judge_with(), seed=3)
    kinds = {i["question_kind"] for i in report.items}
    assert kinds == {"single", "multi_hop", "comparison", "aggregation"}
    with pytest.raises(ValueError, match="unknown question kind 'trivia'"):
        generate(corpus, 1, judge=judge_with(), mix={"trivia": 1})


def copying(found: dict[int, str]) -> Any:
    text = found[1]
    return {"question": first_sentence(text).rstrip(".") + "?", "answer": first_sentence(text)}


def reworded(found: dict[int, str]) -> Any:
    """``writer``'s answer in other words than the passage's: checking it takes a verdict."""
    return {**writer(found), "answer": first_sentence(found[1]).rstrip(".") + ", it says."}


def naming(found: dict[int, str]) -> Any:
    return {**writer(found), "question": "What does the first passage say?"}


def unsupported(found: dict[int, str]) -> Any:
    return {**writer(found), "answer": first_sentence(found[1]) + " Salmon jump waterfalls."}


def first_only(found: dict[int, str]) -> Any:
    sentences = found[1].split(". ")
    return {**writer(found), "answer": sentences[0] + ". " + sentences[1].rstrip(".") + "."}


def no_verdicts(messages: Sequence[BaseMessage]) -> Any:
    """A judge that decomposes but gives no valid verdict: the reference cannot be checked."""
    human = str(messages[1].content)
    return keyword_reply(messages) if human.startswith("Question:") else {"nonsense": 1}


def cites_last(messages: Sequence[BaseMessage]) -> Any:
    """The keyword judge, but a claim that several passages support cites the last one."""
    reply = keyword_reply(messages)
    if "verdicts" not in reply:
        return reply
    found = passages(messages)
    claims = str(messages[-1].content).split("\n\nClaims:\n", 1)[1].splitlines()
    for verdict, line in zip(reply["verdicts"], claims, strict=True):
        words = set(re.findall(r"[a-z0-9]+", line.split(". ", 1)[1].lower()))
        hits = [n for n, t in found.items() if words <= set(re.findall(r"[a-z0-9]+", t.lower()))]
        if hits:
            verdict.update(passage=hits[-1], quote=found[hits[-1]])
    return reply


@pytest.mark.parametrize(
    ("judge", "mix", "reason"),
    [
        (judge_with(lambda found: {"nonsense": 1}), {"single": 1}, "invalid_reply"),
        (judge_with(lambda found: {"question": "", "answer": "x"}), {"single": 1}, "invalid_reply"),
        (judge_with(copying), {"single": 1}, "copies_chunk"),
        (judge_with(naming), {"single": 1}, "names_source"),
        (judge_with(lambda found: writer({1: found[1]})), {"single": 1}, "duplicate"),
        (judge_with(reworded, no_verdicts, "no-verdicts"), {"single": 1}, "unscorable"),
        (judge_with(unsupported), {"single": 1}, "unsupported"),
        (judge_with(first_only), {"multi_hop": 1}, "one_chunk_suffices"),
    ],
)
def test_each_rejection_reason(
    tmp_path: Path, corpus: Path, judge: ScriptedJudge, mix: dict[str, float], reason: str
) -> None:
    rejected = tmp_path / "rejected.jsonl"
    if reason == "duplicate":  # every attempt asks the same question
        judge = judge_with(lambda found: {"question": "Tell me about Arvel?", "answer": (
            "The Arvel river rises in the Arvel hills.")})  # fmt: skip
        corpus = write_jsonl(tmp_path / "one.jsonl", corpus_rows()[:1] * 1)
    report = generate(
        corpus,
        2,
        judge=judge,
        mix=mix,
        max_attempts=4,
        rejected_out=rejected,
        duplicate_threshold=0.7,
    )
    assert report.stopped == "attempts"
    assert report.rejected[reason] >= 1
    assert set(report.rejected) == {reason}
    rows = [json.loads(line) for line in rejected.read_text().splitlines()]
    assert {r["reason"] for r in rows} == {reason}
    assert all(r["detail"] for r in rows)


def test_a_chunk_that_supports_every_claim_alone_is_rejected(tmp_path: Path) -> None:
    """Both chunks state both facts: the claims cite both chunks, yet each alone suffices."""
    rows = [
        {"id": "a", "text": "The Arvel river is 10 km long. The Brisk river is 20 km long."},
        {"id": "b", "text": "The Brisk river is 20 km long. The Arvel river is 10 km long."},
    ]
    path = write_jsonl(tmp_path / "c.jsonl", rows)

    def write(found: dict[int, str]) -> Any:
        return {"question": "Which is longer, Arvel or Brisk?", "answer": found[1]}

    report = generate(
        path, 1, judge=judge_with(write, cites_last), mix={"comparison": 1}, max_attempts=1
    )
    assert report.rejected == {"one_chunk_suffices": 1}


# --- running ---------------------------------------------------------------------------


def timeless(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows without each attempt's seconds (the one thing a rerun changes)."""
    return [{**r, "generation": {**r["generation"], "usage": None}} for r in rows]


def test_the_same_seed_makes_the_same_items(tmp_path: Path, corpus: Path) -> None:
    runs = [timeless(generate(corpus, 5, judge=judge_with(), seed=s).items) for s in (7, 7, 8)]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


async def test_agenerate_makes_the_same_items_with_awaited_calls(
    tmp_path: Path, corpus: Path
) -> None:
    sync = generate(corpus, 4, judge=judge_with(), seed=7, out=tmp_path / "a.jsonl")
    other = await ragrecall.agenerate(
        corpus, 4, judge=judge_with(), seed=7, out=tmp_path / "b.jsonl"
    )
    assert timeless(other.items) == timeless(sync.items)
    assert other.usage.calls == sync.usage.calls and other.rejected == sync.rejected
    assert timeless(
        [json.loads(line) for line in (tmp_path / "b.jsonl").read_text().splitlines()]
    ) == timeless(sync.items)


def test_a_rerun_resumes_from_out(tmp_path: Path, corpus: Path) -> None:
    out = tmp_path / "testset.jsonl"
    whole = generate(corpus, 4, judge=judge_with(), seed=2).items
    generate(corpus, 2, judge=judge_with(), seed=2, out=out)
    lines = out.read_text().splitlines()
    out.write_text(lines[0] + "\n" + lines[1][:20])  # a kill tore the second row
    judge = judge_with()
    report = generate(corpus, 4, judge=judge, seed=2, out=out)
    assert report.resumed == 1
    assert generation_calls(judge) == 3  # the torn row is made again, the first is not
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert timeless(written) == timeless(whole) == timeless(report.items)
    judge = judge_with()
    assert generate(corpus, 4, judge=judge, seed=2, out=out).attempts == 0  # all there
    assert not judge.calls
    with pytest.raises(ragrecall.SampleError, match="made with other settings \\(seed\\)"):
        generate(corpus, 5, judge=judge_with(), seed=3, out=out)


def test_budget_stop_exits_3_and_keeps_what_was_made(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = types.ModuleType("generate_test_judges")
    module.judge = judge_with  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "generate_test_judges", module)
    out = tmp_path / "testset.jsonl"
    args = ["generate", str(corpus), "--n", "5", "--out", str(out), "--mix", "single=1"]
    args += ["--judge-factory", "generate_test_judges:judge"]
    args += ["--claims-store", str(tmp_path / "claims.sqlite")]  # no claims stored yet
    # An attempt reserves 4 calls and makes 2 (no verdict: the chunk states the answer word
    # for word), so 3 fit in 8.
    assert main([*args, "--max-calls", "8"]) == 3
    assert len(out.read_text().splitlines()) == 3
    assert main(args) == 0
    assert len(out.read_text().splitlines()) == 5


def test_cli_writes_rejected_items_and_a_summary(
    tmp_path: Path,
    corpus: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    module = types.ModuleType("generate_test_judges")
    module.judge = lambda: judge_with(unsupported)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "generate_test_judges", module)
    out, rejected = tmp_path / "testset.jsonl", tmp_path / "rejected.jsonl"
    args = ["generate", str(corpus), "--n", "2", "--out", str(out), "--rejected", str(rejected)]
    args += ["--judge-factory", "generate_test_judges:judge", "--max-attempts", "3"]
    assert main(args) == 1  # stopped after --max-attempts with fewer items
    printed = capsys.readouterr()
    assert "rejected: unsupported 3" in printed.out
    assert "stopped after 3 attempts" in printed.err
    assert len(rejected.read_text().splitlines()) == 3
    assert main([*args[:-2], "--mix", "single=x"]) == 2
    assert "--mix: expected 'kind=weight'" in capsys.readouterr().err


def test_dry_run_calls_no_judge(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "testset.jsonl"
    args = ["generate", str(corpus), "--n", "10", "--out", str(out), "--dry-run"]
    assert main([*args, "--judge-factory", "no_such_module:judge"]) == 0
    shown = capsys.readouterr().out
    assert "chunks" in shown and "8" in shown and "~20" in shown  # 10 items, 20 attempts
    assert not out.exists()


def test_the_test_set_loads_back(tmp_path: Path, corpus: Path) -> None:
    import datasets
    import pandas as pd

    out = tmp_path / "testset.jsonl"
    generate(corpus, 4, judge=judge_with(), out=out, seed=4)
    frame = pd.read_json(out, lines=True)
    assert list(frame.columns[:6]) == [
        "sample_id", "user_input", "reference", "reference_context_ids",
        "reference_contexts", "question_kind",
    ]  # fmt: skip
    loaded = datasets.load_dataset("json", data_files=str(out), split="train")
    assert len(loaded) == 4
    samples = ragrecall.load_samples(out)
    assert samples[0].reference_ids == frame["reference_context_ids"][0]
    # retrieved with a perfect retriever, then scored by `ragrecall eval`
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    for row in rows:
        row["retrieved_contexts"] = row["reference_contexts"]
        row["retrieved_context_ids"] = row["reference_context_ids"]
    scored = write_jsonl(tmp_path / "retrieved.jsonl", rows)
    results = tmp_path / "results.jsonl"
    args = ["eval", str(scored), "--judge-factory", "fakes:ScriptedJudge", "--out", str(results)]
    assert main([*args, "--min-score", "1.0"]) == 0


def test_the_workflow_generate_retrieve_eval_compare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/generate.md end to end on real parts: LangChain Documents in, a real vector store
    (top-4 and top-1) retrieved through `retrieve_samples`, both runs scored by `eval`, then
    `compare`d (paired by the generated sample ids)."""
    from hashing_embeddings import HashingEmbeddings
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore
    from langchain_ragrecall import retrieve_samples

    docs = [Document(page_content=r["text"], id=r["id"]) for r in corpus_rows()]
    out = tmp_path / "testset.jsonl"
    generate(docs, 6, judge=judge_with(), out=out, chunk_size=None, seed=5)
    store = InMemoryVectorStore(HashingEmbeddings())
    store.add_documents(docs)
    monkeypatch.chdir(tmp_path)
    for name, k in (("top4", 4), ("top1", 1)):
        samples = retrieve_samples(store.as_retriever(search_kwargs={"k": k}), str(out))
        Path(f"{name}.jsonl").write_text("".join(s.model_dump_json() + "\n" for s in samples))
        args = ["eval", f"{name}.jsonl", "--metric", "retrieval_recall", "--out", f"r-{name}.jsonl"]
        assert main(args) == 0, capsys.readouterr()
    capsys.readouterr()
    assert main(["compare", "r-top4.jsonl", "r-top1.jsonl"]) == 0
    shown = capsys.readouterr().out
    assert "6 pairs" in " ".join(shown.split()) or "pairs 6" in " ".join(shown.split()), shown


def test_a_judge_that_fails_exits_4_and_keeps_what_was_made(
    tmp_path: Path,
    corpus: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    made = []

    def write(found: dict[int, str]) -> Any:
        made.append(1)
        if len(made) > 2:
            return RuntimeError("the judge went away")  # not transient: no retries
        return writer(found)

    module = types.ModuleType("generate_test_judges")
    module.judge = lambda: judge_with(write)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "generate_test_judges", module)
    out = tmp_path / "testset.jsonl"
    args = ["generate", str(corpus), "--n", "4", "--out", str(out), "--mix", "single=1"]
    args += ["--judge-factory", "generate_test_judges:judge", "--timeout", "5"]
    assert main(args) == 4
    assert "the judge failed: RuntimeError" in capsys.readouterr().err
    assert len(out.read_text().splitlines()) == 2
