"""`ragrecall generate` on the LFQA-Verification documents: acceptance by question kind, cost per
accepted item on the judge, and the judge-free checks of the items (BM25 hit rate, overlap).

    python -m benchmarks.quality.generate [--n 12] [--workdir benchmarks/out/generate] [--seed 0]
        [--max-attempts 40] [--second-pass] [--random-check] [--show 30] [--judge local]

The corpus: every document of ``lfqa_verification/docs/docs-webgpt.json`` in the shared
datasets (unique by ``doc_id``), written as a JSONL corpus; skipped cleanly when absent. The run
writes ``WORKDIR/testset.jsonl`` and ``WORKDIR/rejected.jsonl`` and resumes from them (run the
same command again to go on; each row carries its attempt's calls, tokens and seconds, so the
costs below cover every attempt of every run), and the corpus's chunks as
``WORKDIR/chunks.jsonl`` (for ``compare_retrievers.py --testset --corpus``).

Printed:
- attempts, accepted and acceptance rate by kind; rejections by reason;
- cost per accepted item: judge calls, tokens, seconds (all attempts' cost / accepted items);
- judge-free: for single-chunk items, whether a BM25 retriever (k1 1.5, b 0.75, written here)
  over every chunk of the corpus puts the source chunk in its top 5; the questions' word-trigram
  overlap with their chunks (accepted and rejected attempts);
- ``--second-pass``: the accepted items' claims checked again by an independent prompt (per-claim
  JSON verdict with a quote that must be found in the chunk: ``PER_CLAIM_QUOTE_PROMPT``, where the
  generator's check used the embedded judge's verdict token and aligned evidence);
- ``--random-check``: each single-chunk item's claims scored against one random other chunk
  (is the question answerable elsewhere?);
- ``--show N``: the first N accepted items, to read by hand.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks._common import add_judge_args, data_dir, make_judge

KINDS = ("single", "multi_hop", "comparison", "aggregation")
_WORD = re.compile(r"\w+")
_STOPWORDS = (
    "a an the and or of in on at to for from by with as is are was were be it its this that "
    "what which who how why when where do does did can you your i"
)
_STOP = frozenset(_STOPWORDS.split())


def words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


class BM25:
    def __init__(self, texts: list[str], k1: float = 1.5, b: float = 0.75):
        self.docs = [Counter(words(t)) for t in texts]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.mean = sum(self.lengths) / len(self.lengths)
        df: Counter[str] = Counter(w for d in self.docs for w in d)
        n = len(self.docs)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}
        self.k1, self.b = k1, b

    def top(self, query: str, k: int) -> list[int]:
        q = set(words(query))
        scores = []
        for i, (doc, length) in enumerate(zip(self.docs, self.lengths, strict=True)):
            s = 0.0
            for w in q & doc.keys():
                tf = doc[w]
                s += (
                    self.idf[w]
                    * tf
                    * (self.k1 + 1)
                    / (tf + self.k1 * (1 - self.b + self.b * length / self.mean))
                )
            scores.append((-s, i))
        return [i for _, i in sorted(scores)[:k]]


def read(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="the shared datasets folder")
    parser.add_argument("--workdir", type=Path, default=Path("benchmarks/out/generate"))
    parser.add_argument("--n", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-attempts", type=int, default=40)
    parser.add_argument("--second-pass", action="store_true")
    parser.add_argument("--random-check", action="store_true")
    parser.add_argument("--show", type=int, default=0)
    add_judge_args(parser)
    args = parser.parse_args()
    from ragrecall import Chunk, ContextRecall, generate, load_chunks

    folder = data_dir(args.data)
    source = folder / "lfqa_verification" / "docs" / "docs-webgpt.json" if folder else None
    if source is None or not source.is_file():
        print("skipped: the LFQA-Verification documents are not here (--data)")
        return 0
    args.workdir.mkdir(parents=True, exist_ok=True)
    corpus = args.workdir / "corpus.jsonl"
    docs: dict[str, dict[str, Any]] = {}
    for question in json.loads(source.read_text()):
        for d in question["docs"]:
            if d["text"].strip():
                docs.setdefault(
                    d["doc_id"],
                    {"id": d["doc_id"], "text": d["text"], "metadata": {"title": d["title"]}},
                )
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs.values()))
    chunks = load_chunks(corpus)
    print(f"corpus: {len(docs)} documents, {len(chunks)} chunks")
    (args.workdir / "chunks.jsonl").write_text(
        "".join(json.dumps({"id": c.id, "text": c.text}) + "\n" for c in chunks)
    )
    judge = make_judge(args)
    out, rejected = args.workdir / "testset.jsonl", args.workdir / "rejected.jsonl"
    start = time.perf_counter()
    report = generate(
        corpus,
        args.n,
        judge=judge,
        out=out,
        rejected_out=rejected,
        seed=args.seed,
        max_attempts=args.max_attempts,
        show_progress=True,
    )
    print(
        f"this run: {report.attempts} attempts, stopped={report.stopped or 'no'}, "
        f"{time.perf_counter() - start:.0f} s"
    )
    kept, refused = read(out), read(rejected)
    attempts = kept + refused
    print("\n| kind | attempts | accepted | acceptance |\n|---|---|---|---|")
    for kind in (*KINDS, "all"):
        tried = [r for r in attempts if kind in ("all", r["question_kind"])]
        ok = [r for r in kept if kind in ("all", r["question_kind"])]
        if tried:
            print(f"| {kind} | {len(tried)} | {len(ok)} | {len(ok) / len(tried):.0%} |")
    print("\nrejected by reason:", dict(Counter(r["reason"] for r in refused)))
    usage = [r["generation"]["usage"] for r in attempts]
    calls = sum(u["calls"] for u in usage)
    tokens = sum(u["prompt_tokens"] + u["completion_tokens"] for u in usage)
    seconds = sum(u["seconds"] for u in usage)
    if kept:
        n = len(kept)
        print(
            f"\ncost per accepted item (all attempts / {n} accepted): {calls / n:.1f} calls, "
            f"{tokens / n:.0f} tokens, {seconds / n:.0f} s "
            f"(totals: {calls} calls, {tokens} tokens, {seconds:.0f} s)"
        )
    # judge-free checks
    index = BM25([c.text for c in chunks])
    ids = [c.id for c in chunks]
    single = [r for r in kept if r["question_kind"] == "single"]
    hits = [
        r["reference_context_ids"][0] in {ids[i] for i in index.top(r["user_input"], 5)}
        for r in single
    ]
    if single:
        print(
            f"\nBM25 top-5 hit rate of the source chunk (single-chunk items): "
            f"{sum(hits)}/{len(hits)} = {sum(hits) / len(hits):.0%}"
        )
    for name, rows in (("accepted", kept), ("all attempts", attempts)):
        values = [r["overlap"] for r in rows if "overlap" in r]
        if values:
            mean = statistics.mean(values)
            print(
                f"word-trigram overlap, {name} ({len(values)}): mean {mean:.2f}, "
                f"median {statistics.median(values):.2f}, max {max(values):.2f}, "
                f"share 0: {sum(v == 0 for v in values) / len(values):.0%}"
            )
    if args.second_pass and kept:
        second = ContextRecall(judge, strategy="per_claim", evidence="quote", verdict="json")
        passed: Counter[str] = Counter()
        claims: Counter[str] = Counter()
        for n, r in enumerate(kept, 1):
            pairs = zip(r["reference_context_ids"], r["reference_contexts"], strict=True)
            contexts = [Chunk(id=i, text=t) for i, t in pairs]
            result = second.score(
                {
                    "user_input": r["user_input"],
                    "reference_claims": r["reference_claims"],
                    "retrieved_contexts": contexts,
                }
            )
            group = "single" if r["question_kind"] == "single" else "multi-chunk"
            claims[group] += len(r["reference_claims"])
            for v in result.verdicts:
                if v.attributed and v.evidence_verified:
                    passed[group] += 1
                else:
                    print(f"  second pass refuses #{n} ({r['question_kind']}): {v.claim!r}")
            if result.status != "scored":
                print(f"  second pass: #{n} {result.status}: {result.reason}")
        for group in ("single", "multi-chunk", "all"):
            got = passed.total() if group == "all" else passed[group]
            of = claims.total() if group == "all" else claims[group]
            print(
                f"second pass (per-claim JSON verdict + quote found in the chunk), {group}: "
                f"{got}/{of} claims supported = {got / max(of, 1):.1%}"
            )
    if args.random_check and single:
        recall = ContextRecall(judge)
        rng = random.Random(args.seed)
        answerable = 0
        for r in single:
            other = rng.choice([c for c in chunks if c.id != r["reference_context_ids"][0]])
            result = recall.score(
                {
                    "user_input": r["user_input"],
                    "reference_claims": r["reference_claims"],
                    "retrieved_contexts": [other],
                }
            )
            answerable += result.score == 1.0
        print(f"answerable from a random other chunk: {answerable}/{len(single)}")
    for r in kept[: args.show]:
        print(f"\n[{r['question_kind']}] Q: {r['user_input']}\nA: {r['reference']}")
        for cid, text in zip(r["reference_context_ids"], r["reference_contexts"], strict=True):
            print(f"  <{cid}> {text[:600]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
