"""Claim decomposition: the claims ragrecall scores against hand-written gold claims.

    python -m benchmarks.quality.decomposition [--mode atomic|sentences|gold]
        [--formats prose steps bullets table code pronouns] [--limit N]
        [--judge local | --base-url URL] [--refs benchmarks/data/decomposition_refs.jsonl]
        [--out benchmarks/out/decomposition.jsonl] [--summary benchmarks/out/decomposition.json]
        [--decontext-both]

``--refs`` takes several files (``decontext_refs.jsonl``: 33 references written for issue 28,
plural pronouns, definite descriptions, demonstratives, quantified references and compound
clauses, format ``pronouns``). ``--decontext-both`` (atomic) measures the claims without and
with decontextualisation (``ContextRecall(decontext_prompt=None)`` and the default) in one
run: both metrics share one memoised decomposition call per reference, so the judge splits
each reference once; the second table's seconds add the decontext call to the split's.

Each reference of ``decomposition_refs.jsonl`` (prose, numbered steps, bullets, tables, code and
pronoun-heavy prose, each with its gold claims) is split by ``ContextRecall(judge,
claims=mode).claim_set(...)`` with a fresh ``ClaimCache()``, so that nothing comes from an earlier
run. ``--mode sentences`` is rule-based and is given no judge (``judge=None``; the judge options
are ignored): it should not load the embedded judge; the script reports whether it did (the
embedded judge's module was imported) and how many judge calls were made.
``--mode gold`` uses the gold claims as the produced claims: a check of the matcher itself
(coverage and precision 1.0, no heading), no library call.

Matching (deterministic, no model):

- content words of a text: its lowercased ``\\w+`` tokens (digits included, so ``az``, ``aks``,
  ``kubectl``, ``2024`` and ``5`` all count) minus a small English stopword list (``STOPWORDS``;
  negations are kept), as a set;
- a produced claim p matches a gold claim g when the F1 of their content-word sets,
  2 |p & g| / (|p| + |g|), is >= 0.6 (a claim without content words matches nothing);
- coverage = share of gold claims matched by some produced claim; precision = share of produced
  claims that match some gold claim; per format and overall they are micro-averaged over claims
  (total matched / total); claim count error = |produced| - |gold| per reference, reported as
  the mean absolute and the mean signed error;
- since sibling gold claims often match each other ("X stores keys" / "X stores secrets", F1
  0.8), coverage and precision are also given one to one (``cov1:1``, ``prec1:1``: the size
  of a largest matching in which each claim is used at most once, over gold / over produced;
  no target): a produced claim that covers several gold claims by that rule counts once;
- headings emitted: produced claims whose normalised text equals a heading of the reference.
  A heading is a line that starts with ``#``, or a line ending with ``:`` that is directly
  followed by a list item line (``-``, ``*``, ``+``, ``•``, ``1.``, ``1)`` or ``Step 1:``);
  for a heading line of several sentences ("... 15 minutes. Follow these steps:") its last
  sentence counts as a heading too. Normalised = casefold, leading markers (``#``, ``-``,
  ``*``, ``+``, ``•``, ``1.``, ``1)``) stripped, whitespace collapsed, trailing ``:`` and
  ``.`` stripped. A heading that is also a gold claim of the reference ("The migration plan
  has three phases:") is a statement, not a heading, and does not count.

Also reported: judge calls, prompt (and cached) and completion tokens, and seconds per
reference; and the 5 worst references by the F1 of their coverage and precision, with their
produced and gold claims. Targets, printed next to the figures: coverage and precision >= 0.95
overall and >= 0.90 per format; 0 headings emitted. Asserts nothing. Skips cleanly (exit 0)
without the gold file.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import (
    DATA,
    add_judge_args,
    commit,
    fmt,
    make_judge,
    write_json,
    write_jsonl,
)

REFS = DATA / "decomposition_refs.jsonl"
FORMATS = ("prose", "steps", "bullets", "table", "code", "pronouns")
MATCH_F1 = 0.6
TARGET_OVERALL = 0.95
TARGET_FORMAT = 0.90

_STOPWORD_TEXT = """
a an the and or but if then than so as of to in on at by for with from into onto over under
about after before between during up out off via per is are was were be been being am it its
this that these those there here which who whom whose what when where why how he she him her
his hers they them their theirs we us our you your i me my mine s do does did done has have
had having can could should would will shall may might must also only very just all any each
some such more most other another same own too both either neither e g etc
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_WORD = re.compile(r"\w+")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]\s|\d+[.)]\s|step\s+\d+\s*:)", re.IGNORECASE)
_MARKERS = re.compile(r"^(?:\s*(?:#+|[-*+•]|\d+[.)])\s*)+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


# Matching ------------------------------------------------------------------------------------


def content_words(text: str) -> frozenset[str]:
    """Lowercased ``\\w+`` tokens of ``text``, stopwords removed."""
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in STOPWORDS)


def word_f1(a: frozenset[str], b: frozenset[str]) -> float:
    """F1 of two content-word sets (0.0 when either is empty)."""
    if not a or not b:
        return 0.0
    return 2 * len(a & b) / (len(a) + len(b))


def match(produced: Sequence[str], gold: Sequence[str]) -> list[dict[str, Any]]:
    """Every (produced, gold) pair whose content-word F1 reaches ``MATCH_F1``."""
    gold_words = [content_words(g) for g in gold]
    pairs = []
    for i, claim in enumerate(produced):
        words = content_words(claim)
        for j, target in enumerate(gold_words):
            f1 = word_f1(words, target)
            if f1 >= MATCH_F1:
                pairs.append({"produced": i, "gold": j, "f1": round(f1, 3)})
    return pairs


def one_to_one(pairs: Sequence[dict[str, Any]]) -> int:
    """Size of a largest matching that pairs each produced claim with at most one gold claim
    and the reverse (augmenting paths, in index order: deterministic)."""
    edges: dict[int, list[int]] = {}
    for p in pairs:
        edges.setdefault(p["produced"], []).append(p["gold"])
    owner: dict[int, int] = {}  # gold -> produced

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return sum(augment(i, set()) for i in sorted(edges))


def normalise(text: str) -> str:
    """Casefolded, leading list / heading markers stripped, whitespace collapsed, trailing
    ``:`` and ``.`` stripped."""
    text = _MARKERS.sub("", text.casefold())
    return " ".join(text.split()).rstrip(":. ").strip()


def headings(reference: str) -> set[str]:
    """Normalised headings of ``reference``: ``#`` lines, and ``...:`` lines directly followed
    by a list item line (and, for such a line of several sentences, its last sentence)."""
    lines = reference.splitlines()
    found = set()
    for i, line in enumerate(lines):
        text = line.strip()
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if text.startswith("#"):
            found.add(normalise(text))
        elif text.endswith(":") and _LIST_ITEM.match(following):
            found.add(normalise(text))
            found.add(normalise(_SENTENCE_END.split(text)[-1]))
    found.discard("")
    return found


# Running -------------------------------------------------------------------------------------


def load_refs(
    paths: Sequence[Path], formats: Sequence[str], limit: int | None
) -> list[dict[str, Any]]:
    """References of the chosen formats, in file order, at most ``limit`` per format."""
    rows = [json.loads(line) for path in paths for line in path.open() if line.strip()]
    taken: dict[str, int] = {}
    chosen = []
    for row in rows:
        if row["format"] not in formats:
            continue
        if limit is not None and taken.get(row["format"], 0) >= limit:
            continue
        taken[row["format"]] = taken.get(row["format"], 0) + 1
        chosen.append(row)
    return chosen


def make_metric(args: argparse.Namespace) -> Any:
    from ragrecall import ClaimCache, ContextRecall

    judge = None if args.mode == "sentences" else make_judge(args)
    return ContextRecall(judge, claims=args.mode, cache=ClaimCache())


def make_pair(args: argparse.Namespace) -> tuple[Any, Any]:
    """Without and with decontextualisation, sharing one memoised decomposition call."""
    from langchain_core.runnables import RunnableLambda

    from ragrecall import ClaimCache, ContextRecall

    judge = make_judge(args)
    before = ContextRecall(judge, claims="atomic", cache=ClaimCache(), decontext_prompt=None)
    after = ContextRecall(judge, claims="atomic", cache=ClaimCache())
    real = before._chain("decompose")
    memo: dict[str, Any] = {}

    def once(x: dict[str, Any]) -> Any:
        key = json.dumps([x["question"], x["reference"], len(x.get("retry") or [])])
        if key not in memo:
            memo[key] = real.invoke(x)
        return memo[key]

    before._chains["decompose"] = after._chains["decompose"] = RunnableLambda(once)
    return before, after


def decompose(metric: Any, row: dict[str, Any], mode: str) -> dict[str, Any]:
    """The produced claims of one reference, with usage and seconds (or the error)."""
    if mode == "gold":
        return {"produced": list(row["claims"]), "usage": None, "seconds": 0.0, "error": None}
    sample = {"user_input": row["question"], "reference": row["reference"]}
    start = time.perf_counter()
    try:
        claim_set = metric.claim_set(sample)
    except Exception as exc:  # recorded and counted as no claims, never skipped
        return {
            "produced": [],
            "usage": None,
            "seconds": time.perf_counter() - start,
            "error": f"{type(exc).__name__}: {exc}",
        }
    return {
        "produced": list(claim_set.claims),
        "usage": claim_set.usage.model_dump(),
        "seconds": time.perf_counter() - start,
        "error": None,
    }


def evaluate_row(row: dict[str, Any], found: dict[str, Any]) -> dict[str, Any]:
    produced, gold = found["produced"], row["claims"]
    pairs = match(produced, gold)
    gold_hit = {p["gold"] for p in pairs}
    produced_hit = {p["produced"] for p in pairs}
    # a heading line that the gold itself keeps as a claim ("The plan has three phases:") is a
    # statement, not a heading
    heads = headings(row["reference"]) - {normalise(g) for g in gold}
    coverage = len(gold_hit) / len(gold) if gold else None
    precision = len(produced_hit) / len(produced) if produced else None
    c, p = coverage or 0.0, precision or 0.0
    return {
        "id": row["id"],
        "format": row["format"],
        "produced": produced,
        "gold": gold,
        "matches": pairs,
        "coverage": coverage,
        "precision": precision,
        "f1": 2 * c * p / (c + p) if c + p else 0.0,
        "gold_matched": len(gold_hit),
        "produced_matched": len(produced_hit),
        "one_to_one": one_to_one(pairs),
        "count_error": len(produced) - len(gold),
        "headings": [claim for claim in produced if normalise(claim) in heads],
        "usage": found["usage"],
        "seconds": found["seconds"],
        "error": found["error"],
    }


def aggregate(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    n = len(items)
    gold = sum(len(i["gold"]) for i in items)
    produced = sum(len(i["produced"]) for i in items)

    def per_ref(values: Iterable[float]) -> float:
        return sum(values) / n

    def usage(field: str) -> float:
        return per_ref((i["usage"] or {}).get(field, 0) for i in items)

    return {
        "references": n,
        "gold_claims": gold,
        "produced_claims": produced,
        "coverage": sum(i["gold_matched"] for i in items) / gold if gold else None,
        "precision": sum(i["produced_matched"] for i in items) / produced if produced else None,
        "coverage_1to1": sum(i["one_to_one"] for i in items) / gold if gold else None,
        "precision_1to1": sum(i["one_to_one"] for i in items) / produced if produced else None,
        "count_error_abs": per_ref(abs(i["count_error"]) for i in items),
        "count_error_signed": per_ref(i["count_error"] for i in items),
        "headings": sum(len(i["headings"]) for i in items),
        "errors": sum(i["error"] is not None for i in items),
        "calls_per_ref": usage("calls"),
        "prompt_tokens_per_ref": usage("prompt_tokens"),
        "cached_tokens_per_ref": usage("cached_tokens"),
        "completion_tokens_per_ref": usage("completion_tokens"),
        "seconds_per_ref": per_ref(i["seconds"] for i in items),
    }


def mark(value: float | None, target: float) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f} {'ok' if value >= target else 'MISS'}"


def print_table(summary: dict[str, Any]) -> None:
    print(
        f"{'format':9s} {'refs':>4s} {'gold':>4s} {'prod':>4s}  {'coverage':10s} "
        f"{'precision':10s} {'cov1:1':>6s} {'prec1:1':>7s} {'|err|':>5s} {'err':>5s}  "
        f"{'headings':8s} {'calls':>5s} {'prompt':>6s} {'compl':>5s} {'s/ref':>6s}"
    )
    rows = [*summary["formats"].items(), ("overall", summary["overall"])]
    for name, s in rows:
        target = TARGET_OVERALL if name == "overall" else TARGET_FORMAT
        heads = f"{s['headings']} {'ok' if s['headings'] == 0 else 'MISS'}"
        print(
            f"{name:9s} {s['references']:4d} {s['gold_claims']:4d} {s['produced_claims']:4d}  "
            f"{mark(s['coverage'], target):10s} {mark(s['precision'], target):10s} "
            f"{fmt(s['coverage_1to1']):>6s} {fmt(s['precision_1to1']):>7s} "
            f"{s['count_error_abs']:5.2f} {s['count_error_signed']:+5.2f}  {heads:8s} "
            f"{s['calls_per_ref']:5.1f} {s['prompt_tokens_per_ref']:6.0f} "
            f"{s['completion_tokens_per_ref']:5.0f} {s['seconds_per_ref']:6.2f}"
        )
    o = summary["overall"]
    print(
        f"targets: coverage and precision >= {TARGET_OVERALL} overall and >= {TARGET_FORMAT} "
        f"per format; 0 headings.\ncov1:1, prec1:1: each claim matched at most once (no "
        f"target). |err|, err: mean absolute and signed (produced - gold) claim count per "
        f"reference.\ncalls, prompt and completion tokens, seconds: per reference "
        f"({o['cached_tokens_per_ref']:.0f} of the prompt tokens cached, overall)."
    )
    if o["errors"]:
        print(
            f"{o['errors']} references failed (counted as no claims); see the worst list and --out"
        )


def print_worst(worst: Sequence[dict[str, Any]]) -> None:
    print(f"\nworst {len(worst)} references (F1 of coverage and precision):")
    for item in worst:
        print(
            f"\n  {item['id']} ({item['format']}): F1 {fmt(item['f1'])}  coverage "
            f"{fmt(item['coverage'])}  precision {fmt(item['precision'])}"
            + (f"  error: {item['error']}" if item["error"] else "")
        )
        gold_of = {}  # each produced claim's best gold claim
        for p in sorted(item["matches"], key=lambda p: p["f1"]):
            gold_of[p["produced"]] = p["gold"]
        hit = {p["gold"] for p in item["matches"]}
        print("    produced:")
        for i, claim in enumerate(item["produced"]):
            tag = f"= g{gold_of[i] + 1}" if i in gold_of else "  --"
            heading = "  [heading]" if claim in item["headings"] else ""
            print(f"     {tag:5s} p{i + 1}. {claim!r}{heading}")
        print("    gold:")
        for j, claim in enumerate(item["gold"]):
            tag = "  ok" if j in hit else "MISS"
            print(f"     {tag:5s} g{j + 1}. {claim!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--mode",
        default="atomic",
        choices=["atomic", "sentences", "gold"],
        help="how the reference is split: the judge (atomic), by rule "
        "(sentences, no judge), or the gold claims (checks the matcher)",
    )
    parser.add_argument("--formats", nargs="+", default=list(FORMATS), choices=FORMATS)
    parser.add_argument("--limit", type=int, help="at most N references per format")
    parser.add_argument("--refs", type=Path, nargs="+", default=[REFS], help="the gold files")
    parser.add_argument(
        "--decontext-both",
        action="store_true",
        help="atomic: the claims without and with decontextualisation, from one split",
    )
    parser.add_argument("--out", type=Path, help="per-reference JSONL")
    parser.add_argument("--summary", type=Path, help="JSON summary")
    add_judge_args(parser)
    args = parser.parse_args()

    command = shlex.join(["python", *sys.argv])
    date = time.strftime("%Y-%m-%d %H:%M")
    load_start = os.getloadavg()
    print(f"command: {command}")
    print(
        f"commit {commit()}  date {date}  load average {load_start[0]:.2f} {load_start[1]:.2f} "
        f"{load_start[2]:.2f}"
    )
    absent = [str(p) for p in args.refs if not p.is_file()]
    if absent:
        print(f"skipped: the gold file {', '.join(absent)} is absent")
        return 0
    rows = load_refs(args.refs, args.formats, args.limit)
    if not rows:
        print("skipped: no reference of the chosen formats in the gold file")
        return 0

    both = args.decontext_both and args.mode == "atomic"
    metric, after = make_pair(args) if both else (None, None)
    if metric is None and args.mode != "gold":
        metric = make_metric(args)
    items, items_after = [], []
    # each reference as it finishes, so that a stopped run keeps what it measured
    partial = args.out.with_suffix(".partial.jsonl").open("w") if args.out else None
    for n, row in enumerate(rows, 1):
        items.append(evaluate_row(row, decompose(metric, row, args.mode)))
        if after is not None:
            found = decompose(after, row, args.mode)
            found["seconds"] += items[-1]["seconds"]
            items_after.append(evaluate_row(row, found))
        if args.mode == "atomic":
            print(
                f"  {n}/{len(rows)} {row['id']}: {len(items[-1]['produced'])} claims, "
                f"{items[-1]['seconds']:.1f} s"
                + (f"; decontextualised {len(items_after[-1]['produced'])}" if both else ""),
                flush=True,
            )
        if partial is not None:
            partial.write(json.dumps([items[-1], *items_after[-1:]], ensure_ascii=False) + "\n")
            partial.flush()
    if both:
        summarise(args, items, "without decontextualisation", args.out, args.summary)
        out = args.out and args.out.with_suffix(".decontext.jsonl")
        summary = args.summary and args.summary.with_suffix(".decontext.json")
        summarise(args, items_after, "with decontextualisation", out, summary)
        return 0
    summarise(args, items, "", args.out, args.summary)
    return 0


def summarise(
    args: argparse.Namespace,
    items: list[dict[str, Any]],
    title: str,
    out: Path | None,
    summary_path: Path | None,
) -> None:
    command = shlex.join(["python", *sys.argv])
    date = time.strftime("%Y-%m-%d %H:%M")
    load_start = os.getloadavg()
    # The embedded judge's machinery is imported only when the judge is resolved.
    judge_loaded = "ragrecall._judge.local" in sys.modules

    formats = [f for f in FORMATS if any(i["format"] == f for i in items)]
    summary: dict[str, Any] = {
        "commit": commit(),
        "date": date,
        "command": command,
        "args": {k: str(v) for k, v in vars(args).items()},
        "mode": args.mode,
        "match_f1": MATCH_F1,
        "targets": {"overall": TARGET_OVERALL, "per_format": TARGET_FORMAT, "headings": 0},
        "load_avg_start": load_start,
        "load_avg_end": os.getloadavg(),
        "embedded_judge_loaded": judge_loaded,
        "formats": {f: aggregate([i for i in items if i["format"] == f]) for f in formats},
        "overall": aggregate(items),
    }
    worst = sorted(items, key=lambda i: (i["f1"], i["id"]))[:5]
    summary["worst"] = [i["id"] for i in worst]

    print(
        f"\nmode {args.mode}{' ' + title if title else ''}: {len(items)} references, match "
        f"when content-word F1 >= {MATCH_F1}"
    )
    if args.mode == "sentences":
        calls = sum((i["usage"] or {}).get("calls", 0) for i in items)
        state = (
            "YES: ContextRecall resolved it (LocalJudge built) though no call needs it"
            if judge_loaded
            else "no"
        )
        print(f"embedded judge loaded: {state}; {calls} judge calls")
    print_table(summary)
    print_worst(worst)
    load_end = summary["load_avg_end"]
    print(f"\nload average at the end {load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f}")
    write_jsonl(out, items)
    write_json(summary_path, summary)


if __name__ == "__main__":
    sys.exit(main())
