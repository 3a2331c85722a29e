"""Two retrievers on the same questions: does ``ragrecall compare`` catch a real regression?

    python -m benchmarks.quality.compare_retrievers [--questions 20] [--k-good 4] [--k-bad 1]
        [--claim-mode atomic|sentences] [--small 4] [--alpha 0.05] [--workdir DIR]
        [--summary benchmarks/out/compare_retrievers.json] [--testset FILE --corpus FILE]

A small corpus written for this benchmark (``retriever_topics.json``: 20 tasks, each with a
question and a reference of three short facts, each stated in its own document; distractors) in a
real ``langchain_core.vectorstores.InMemoryVectorStore`` on the tests' ``HashingEmbeddings``
(``testkit/``). Retriever A is ``as_retriever(search_kwargs={"k": K_GOOD})`` (4: brings back the
three facts), retriever B the same store at ``k = K_BAD`` (1: one fact at most), a deliberately
degraded candidate. ``--testset`` and ``--corpus`` replace the hand-written tasks and documents by
a generated test set and the chunks it was generated from (``generate.py`` writes both:
``testset.jsonl``, ``chunks.jsonl``); a task's facts are then its source chunks
(``reference_context_ids``) and its checked claims go along. Each retriever answers the first
``--questions`` questions and its answers are written as a JSONL dataset (sample_id, user_input,
reference, retrieved_contexts with the documents' ids). Then the user's workflow, through the
``ragrecall`` command (``ragrecall.cli.main``), on the embedded judge:

    ragrecall claims A.jsonl --out claims.jsonl --claims-store DIR/claims.sqlite
    ragrecall eval A.jsonl --claims claims.jsonl --out ra.jsonl
    ragrecall eval B.jsonl --claims claims.jsonl --out rb.jsonl
    ragrecall compare ra.jsonl rb.jsonl --fail-if-worse

(``claims`` decomposes each reference once with the judge, ``--claim-mode atomic``, the
default; a fresh claim store, so that nothing comes from an earlier run.) The same comparison
is then made on the records of the first ``--small`` questions only (4: too few pairs for the
exact sign-flip test to reach alpha 0.05, whatever the data; the expected verdict is "too few
pairs", not "no significant difference").

Printed: the retrieval itself (facts of the reference among the retrieved documents, judge-free:
what a perfect judge would score with one claim per fact), each command's output verbatim with
its exit code and seconds, and a summary row per comparison, ready for ``RESULTS.md``: pairs,
only in A / B, means, mean difference B - A with its 95 % bootstrap interval, permutation p,
paired effect size, smallest detectable difference (80 % power), the verdict and exit code of
``compare --fail-if-worse``, and wall seconds. The summary figures are computed again from the
results files with ``ragrecall.stats`` (same seed and resamples as ``compare``), so that the
row does not depend on the table's layout; the verdict is the command's own. Asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import re
import shlex
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import DATA, commit, write_json

METRIC = "context_recall"
SEED, RESAMPLES = 0, 10_000  # compare's defaults

# retriever_topics.json, written for this benchmark: 20 tasks whose reference states three facts,
# each fact the text of its own document (id <sample_id>-<n>), and distractor documents.
CORPUS = json.loads((DATA / "retriever_topics.json").read_text())
TASKS: list[dict[str, Any]] = CORPUS["tasks"]


def build_store(documents: Sequence[dict[str, str]]) -> Any:
    """The documents in an ``InMemoryVectorStore`` on ``HashingEmbeddings``."""
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore

    from testkit.hashing_embeddings import HashingEmbeddings

    store = InMemoryVectorStore(HashingEmbeddings())
    store.add_documents([Document(d["text"], id=d["id"]) for d in documents])
    return store


def dataset(retriever: Any, tasks: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The retriever's answers to the tasks' questions, as dataset rows."""
    from langchain_ragrecall import retrieve_samples

    samples = retrieve_samples(retriever, list(tasks))
    return [s.model_dump(mode="json", exclude_none=True) for s in samples]


def facts_found(rows: Sequence[dict[str, Any]], tasks: Sequence[dict[str, Any]]) -> list[float]:
    """Per row, the share of its task's fact documents among the retrieved ones (the three
    ``<sample_id>-<n>`` documents of a hand-written task; a generated task's source chunks)."""
    shares = []
    for row, task in zip(rows, tasks, strict=True):
        wanted = set(task.get("reference_context_ids") or ())
        wanted = wanted or {f"{task['sample_id']}-{n}" for n in (1, 2, 3)}
        found = {str(c["id"]) for c in row["retrieved_contexts"]}
        shares.append(len(wanted & found) / len(wanted))
    return shares


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def generated_tasks(path: Path) -> list[dict[str, Any]]:
    """A generated test set's rows as tasks: the question, reference, checked claims and
    source chunk ids."""
    keep = ("sample_id", "user_input", "reference", "reference_claims", "reference_context_ids")
    return [{k: row[k] for k in keep if k in row} for row in read_rows(path)]


def write_rows(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")


def ragrecall(argv: list[str]) -> tuple[int, str, float]:
    """``ragrecall ARGV`` in this process: exit code, what it printed, seconds; printed as it
    goes, indented."""
    from ragrecall.cli import main as cli

    print(f"\n$ ragrecall {shlex.join(argv)}", flush=True)
    out = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out):
        code = cli(argv)
    seconds = time.perf_counter() - start
    text = out.getvalue()
    for line in text.rstrip("\n").splitlines():
        print(f"    {line}")
    print(f"  exit {code}, {seconds:.1f} s", flush=True)
    return code, text, seconds


def scores(path: Path) -> dict[str, float | None]:
    """Score by task key from a results file (the last line of a key wins, as in ragrecall)."""
    found: dict[str, float | None] = {}
    for line in path.read_text("utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            found[record["key"]] = record["results"][METRIC]["score"]
    return found


def subset(path: Path, ids: set[str], out: Path) -> None:
    """The lines of results file ``path`` whose sample id is in ``ids``."""
    lines = [
        line
        for line in path.read_text("utf-8").splitlines(keepends=True)
        if line.strip() and json.loads(line)["sample"].get("sample_id") in ids
    ]
    out.write_text("".join(lines), "utf-8")


def figures(a: dict[str, float | None], b: dict[str, float | None], alpha: float) -> dict[str, Any]:
    """Pairs, means, interval, tests and detectable difference, with ``ragrecall.stats``."""
    from ragrecall.stats import (
        bootstrap_ci,
        mean,
        minimum_detectable_difference,
        paired_effect_size,
        sign_flip_test,
    )

    shared = [k for k in b if k in a]
    pairs: list[tuple[float, float]] = []
    for key in shared:
        x, y = a[key], b[key]
        if x is not None and y is not None:
            pairs.append((x, y))
    diffs = [y - x for x, y in pairs]
    result: dict[str, Any] = {
        "samples_a": len(a),
        "samples_b": len(b),
        "paired": len(shared),
        "only_a": len(a) - len(shared),
        "only_b": len(b) - len(shared),
        "both_scored": len(pairs),
        "worse": sum(d < 0 for d in diffs),
        "better": sum(d > 0 for d in diffs),
        "same": sum(d == 0 for d in diffs),
    }
    if diffs:
        result.update(
            mean_a=mean([x for x, _ in pairs]),
            mean_b=mean([y for _, y in pairs]),
            mean_diff=mean(diffs),
            ci=bootstrap_ci(diffs, resamples=RESAMPLES, seed=SEED),
            p=sign_flip_test(diffs, resamples=RESAMPLES, seed=SEED),
            d=paired_effect_size(diffs),
            mdd=minimum_detectable_difference(diffs, alpha=alpha),
        )
    return result


def verdict_of(text: str) -> str:
    found = re.search(r"^verdict: (.+?) \(alpha", text, re.MULTILINE)
    return found.group(1) if found else "(no verdict line)"


def signed(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.2f}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")


def mdd_text(value: float | None) -> str:
    if value is None:
        return "n/a"
    return "none (too few pairs)" if value == math.inf else f"±{value:.3f}"


def row(label: str, f: dict[str, Any], verdict: str, code: int) -> str:
    if "mean_diff" in f:
        lo, hi = f["ci"]
        means = (
            f"{f['mean_a']:.3f} | {f['mean_b']:.3f} | {f['mean_diff']:+.3f} [{lo:+.3f}, {hi:+.3f}]"
        )
        tests = f"{f['p']:.4g} | {signed(f['d'])} | {mdd_text(f['mdd'])}"
    else:
        means, tests = "n/a | n/a | n/a", "n/a | n/a | n/a"
    return (
        f"| {label} | {f['paired']} | {f['only_a']} / {f['only_b']} | {means} | "
        f"{f['better']} / {f['worse']} / {f['same']} | {tests} | {verdict} | {code} |"
    )


HEADER = (
    "| comparison | pairs | only in A / B | mean A | mean B | B - A [95% CI] | better / worse "
    "/ same | permutation p | paired d | smallest detectable (80% power) | verdict | exit "
    "(--fail-if-worse) |\n|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=20, help=f"at most {len(TASKS)}")
    parser.add_argument("--k-good", type=int, default=4, help="A: documents retrieved (4)")
    parser.add_argument("--k-bad", type=int, default=1, help="B, degraded: documents (1)")
    parser.add_argument(
        "--claim-mode",
        choices=["atomic", "sentences"],
        default="atomic",
        help="how `ragrecall claims` splits the references (atomic: the judge)",
    )
    parser.add_argument("--small", type=int, default=4, help="questions of the small comparison")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--workdir", type=Path, help="where the files go (default: a temp dir)")
    parser.add_argument("--summary", type=Path, help="JSON summary")
    parser.add_argument("--testset", type=Path, help="a generated test set instead of the tasks")
    parser.add_argument("--corpus", type=Path, help="with --testset: its chunks (id, text)")
    args = parser.parse_args()
    if (args.testset is None) != (args.corpus is None):
        parser.error("--testset and --corpus go together")
    tasks = TASKS if args.testset is None else generated_tasks(args.testset)
    documents = CORPUS["documents"] if args.corpus is None else read_rows(args.corpus)
    if not 1 <= args.questions <= len(tasks):
        parser.error(f"--questions must be in [1, {len(tasks)}]")

    command = shlex.join(["python", *sys.argv])
    date = time.strftime("%Y-%m-%d %H:%M")
    load_start = os.getloadavg()
    print(f"command: {command}")
    print(
        f"commit {commit()}  date {date}  load average {load_start[0]:.2f} {load_start[1]:.2f} "
        f"{load_start[2]:.2f}"
    )
    work = args.workdir or Path(tempfile.mkdtemp(prefix="ragrecall-compare-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"workdir {work}")
    wall_start = time.perf_counter()

    store = build_store(documents)
    data = {}
    chosen = tasks[: args.questions]
    for name, k in (("A", args.k_good), ("B", args.k_bad)):
        rows = dataset(store.as_retriever(search_kwargs={"k": k}), chosen)
        data[name] = work / f"{name}.jsonl"
        write_rows(data[name], rows)
        shares = facts_found(rows, chosen)
        print(
            f"retriever {name} (k={k}): {args.questions} questions, reference facts among the "
            f"retrieved documents {sum(shares) / len(shares):.3f} on average, all found on "
            f"{sum(s == 1 for s in shares)}, none on {sum(s == 0 for s in shares)}"
        )

    claims, results = work / "claims.jsonl", {n: work / f"r{n.lower()}.jsonl" for n in "AB"}
    for path in (claims, *results.values()):
        path.unlink(missing_ok=True)  # fresh runs: eval --out would resume from an old file
    steps: dict[str, dict[str, Any]] = {}
    code, _, seconds = ragrecall(
        [
            "claims",
            str(data["A"]),
            "--out",
            str(claims),
            "--claim-mode",
            args.claim_mode,
            "--claims-store",
            str(work / "claims.sqlite"),
        ]
    )
    steps["claims"] = {"exit": code, "seconds": seconds}
    for name in "AB":
        code, _, seconds = ragrecall(
            ["eval", str(data[name]), "--claims", str(claims), "--out", str(results[name])]
        )
        steps[f"eval {name}"] = {"exit": code, "seconds": seconds}

    small_ids = {task["sample_id"] for task in chosen[: args.small]}
    small = {n: work / f"r{n.lower()}-first{args.small}.jsonl" for n in "AB"}
    for name in "AB":
        subset(results[name], small_ids, small[name])
    comparisons = []
    for label, files in (
        (f"{args.questions} questions", results),
        (f"first {len(small_ids)} questions", small),
    ):
        code, text, seconds = ragrecall(
            [
                "compare",
                str(files["A"]),
                str(files["B"]),
                "--fail-if-worse",
                "--alpha",
                str(args.alpha),
            ]
        )
        f = figures(scores(files["A"]), scores(files["B"]), args.alpha)
        comparisons.append(
            {"label": label, "exit": code, "verdict": verdict_of(text), "seconds": seconds, **f}
        )
    wall = time.perf_counter() - wall_start

    load_end = os.getloadavg()
    print(
        f"\nk={args.k_good} (A) against k={args.k_bad} (B), claims {args.claim_mode}, embedded "
        f"judge, alpha {args.alpha}; steps: "
        + ", ".join(f"{n} {s['seconds']:.0f} s (exit {s['exit']})" for n, s in steps.items())
    )
    print(HEADER)
    total = sum(s["seconds"] for s in steps.values())
    for c in comparisons:
        print(row(c["label"], c, c["verdict"], c["exit"]))
    print(
        f"\nwall {wall:.1f} s (claims and scoring {total:.1f} s); load average at the end "
        f"{load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f}"
    )
    write_json(
        args.summary,
        {
            "commit": commit(),
            "date": date,
            "command": command,
            "args": {k: str(v) for k, v in vars(args).items()},
            "workdir": str(work),
            "steps": steps,
            "comparisons": comparisons,
            "wall_s": wall,
            "load_avg_start": load_start,
            "load_avg_end": load_end,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
