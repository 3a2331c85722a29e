"""Sufficiency against people: is the question answerable from the context, with no reference?

    python -m benchmarks.quality.sufficiency run --split dev --per-source 30 --threshold 0.5 \
        --metric sufficiency --out benchmarks/out/suff-dev.jsonl
    python -m benchmarks.quality.sufficiency fit benchmarks/out/suff-dev.jsonl
    python -m benchmarks.quality.sufficiency run --split heldout --per-source 50 \
        --metric sufficiency --metric question_recall --out benchmarks/out/suff-heldout.jsonl
    python -m benchmarks.quality.sufficiency report benchmarks/out/suff-heldout.jsonl
    python -m benchmarks.quality.sufficiency run --split heldout --per-source 40 \
        --source cast_answerability --history --out benchmarks/out/suff-heldout-history.jsonl

Data: public sets labelled by people as answerable or not from a passage, converted to rows
``{id, source, question, contexts, sufficient, split, ...}`` by
``python -m benchmarks.quality.sufficiency_data`` into ``--bench-data`` (default
``$RAGRECALL_BENCH_DATA``, else ``~/.cache/ragrecall/bench-data``; each source's folder holds
its raw files and PROVENANCE.md). Absent: prints ``skipped`` and exits 0. Each source's rows
carry a fixed split (dev about 30 %, heldout the rest, by a hash of the id or dialogue):
``fit`` reads dev only; ``report`` is for heldout, never tuned on.

``run`` picks ``--per-source`` rows of the split per source, half answerable, half not (by
``--seed``), scores them with each ``--metric`` on one judge and appends one line per row and
metric to ``--out`` (a rerun goes on where it stopped), with the ``answered_threshold`` it ran
at (``--threshold``; default the library's). The judge's P(answerable) and the check of each
sub-question's answer are recorded, so ``fit`` and ``report --threshold T`` replay any threshold
at or above the run's without the judge (``--threshold 0`` checks every answer).

``--source conditionalqa_without_evidence`` is derived, not labelled by people: each
answerable ConditionalQA question of the split twice, with its page excerpt as is (sufficient)
and without the evidence sentences people selected for it (insufficient; the excerpt keeps
other questions' evidence from the same page, so it stays on topic). Another question's
evidence can still answer it, so some "insufficient" rows are not. ``--source
hotpotqa_without_support`` is derived the same way from HotpotQA's dev questions (two-hop,
Wikipedia): with the two paragraphs people marked as supporting it plus two distractors
(sufficient), and with the one that holds the answer swapped for a third distractor
(insufficient); no paragraph left holds the answer's words (bar yes/no answers).

``--history`` gives each row its dialogue's earlier turns (CAsT is conversational: "Now my
garage door opener stopped working. Why?"), so the question is made to stand alone by the judge
first; such a run is reported as ``sufficiency+history``, beside the rows scored without them.

``report``: per source and metric, the answer-level AUC (of the score, and of Sufficiency's
graded ``p_sufficient``), balanced accuracy (answerable when every sub-question is answered),
and judge time per row; Sufficiency's time over QuestionRecall's on the same rows.
``--threshold T`` first replays Sufficiency's verdicts at T.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import add_judge_args, auc, fmt, make_judge
from benchmarks.quality.sufficiency_data import HOTPOT, clean_evidence

SOURCES = ("cast_answerability", "conditionalqa")
# Derived from ConditionalQA's answerable questions: each paired with its page excerpt as is
# (sufficient) and without the evidence sentences people selected for it (insufficient).
WITHOUT_EVIDENCE = "conditionalqa_without_evidence"
PAIRED = (WITHOUT_EVIDENCE, HOTPOT)  # derived: each question with and without its support


def bench_data(value: str | None) -> Path | None:
    default = Path.home() / ".cache" / "ragrecall" / "bench-data"
    path = Path(value or os.environ.get("RAGRECALL_BENCH_DATA") or default)
    return path if all((path / s / "rows.jsonl").is_file() for s in SOURCES) else None


def _rows(root: Path, source: str) -> list[dict[str, Any]]:
    if source != WITHOUT_EVIDENCE:
        if not (root / source / "rows.jsonl").is_file():
            raise SystemExit(f"{root / source / 'rows.jsonl'}: absent; run sufficiency_data")
        lines = (root / source / "rows.jsonl").read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines]
    raw = root / "conditionalqa" / "raw" / "v1_0"
    evidence = {
        f"cqa-{x['id']}": {clean_evidence(e) for e in x["evidences"]}
        for name in ("train", "dev")
        for x in json.loads((raw / f"{name}.json").read_text(encoding="utf-8"))
    }
    rows = []
    for row in _rows(root, "conditionalqa"):
        if not row["sufficient"]:
            continue
        kept = [s for s in row["contexts"][0].split("\n") if s not in evidence[row["id"]]]
        if kept:  # the excerpt holds other questions' evidence from the same page
            pair = {**row, "source": WITHOUT_EVIDENCE, "question_id": row["id"]}
            rows.append({**pair, "id": row["id"] + "+evidence"})
            rows.append(
                {
                    **pair,
                    "id": row["id"] + "-evidence",
                    "contexts": ["\n".join(kept)],
                    "sufficient": False,
                }
            )
    return rows


def pick(
    root: Path, split: str, per_source: int, seed: int, sources: Sequence[str] = SOURCES
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for source in (*SOURCES, *PAIRED):
        if source not in sources:
            continue
        found = [r for r in _rows(root, source) if r["split"] == split]
        rng = random.Random(f"{seed}:{source}")
        if source in PAIRED:  # both rows of a question, or neither
            questions = sorted({r["question_id"] for r in found})
            chosen = rng.sample(questions, min(len(questions), per_source // 2))
            rows += [r for r in found if r["question_id"] in chosen]
            continue
        for label in (True, False):
            group = sorted((r for r in found if r["sufficient"] is label), key=lambda r: r["id"])
            rows += rng.sample(group, min(len(group), per_source // 2))
    random.Random(seed).shuffle(rows)  # any prefix of a run mixes sources and labels
    return rows


def run(args: argparse.Namespace, root: Path) -> int:
    import ragrecall

    rows = pick(root, args.split, args.per_source, args.seed, args.source or SOURCES)
    done = set()
    if args.out.exists():
        for line in args.out.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            done.add((item["id"], item["metric"]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    judge = make_judge(args)
    given = args.threshold is not None  # else the library's default
    policy: dict[str, Any] = {"answered_threshold": args.threshold} if given else {}
    # A store each (in memory): each metric pays for its own split of the question, so their
    # judge times compare; the order alternates by row, so the machine's drift falls on both.
    metrics = {
        "sufficiency": ragrecall.Sufficiency(judge, cache=ragrecall.ClaimCache(), **policy),
        "question_recall": ragrecall.QuestionRecall(judge, cache=ragrecall.ClaimCache()),
    }
    if not isinstance(judge, str):
        judge.invoke("Reply OK.")  # the embedded judge starts here, not in the first row's time
    print(f"load {os.getloadavg()[0]:.1f}; {len(rows)} rows, split {args.split}")
    for n, row in enumerate(rows, 1):
        sample: dict[str, Any] = {
            "user_input": row["question"],
            "retrieved_contexts": row["contexts"],
        }
        if args.history:  # the dialogue's earlier turns: the question is made to stand alone
            turns = row.get("history") or []
            sample["history"] = [{"question": q, "answer": a} for q, a in turns]
        for name in args.metric if n % 2 else reversed(args.metric):
            label = f"{name}+history" if args.history else name
            if (row["id"], label) in done:
                continue
            start = time.perf_counter()
            result = metrics[name].score(sample)
            item = {
                "id": row["id"],
                "source": row["source"],
                "metric": label,
                "standalone": getattr(result, "standalone_question", None),
                "sufficient": row["sufficient"],
                "label_kind": row.get("label_kind"),
                "status": result.status,
                "reason": result.reason,
                "score": result.score,
                "p_sufficient": getattr(result, "p_sufficient", None),
                "threshold": getattr(metrics[name], "answered_threshold", None),
                "subs": [
                    {
                        "q": v.question,
                        "answerable": v.answerable,
                        "p": v.p_answered,
                        "verified": v.evidence_verified,
                        "reason": v.reason,
                        "answer": v.answer,
                        "chunk_ids": v.chunk_ids,
                    }
                    for v in getattr(result, "sub_questions", [])
                ],
                "calls": result.usage.calls if result.usage else None,
                "seconds": time.perf_counter() - start,
            }
            with args.out.open("a", encoding="utf-8") as f:
                f.write(json.dumps(item) + "\n")
            print(f"{n}/{len(rows)} {name} {row['sufficient']} -> {result.score} "
                  f"({item['seconds']:.1f} s)", flush=True)  # fmt: skip
    print(f"load {os.getloadavg()[0]:.1f}")
    return 0


def _items(paths: Sequence[Path]) -> list[dict[str, Any]]:
    lines = [line for path in paths for line in path.read_text(encoding="utf-8").splitlines()]
    return [i for i in map(json.loads, lines) if i["status"] == "scored"]


def balanced_accuracy(gold: Sequence[bool], said: Sequence[bool]) -> float | None:
    rates = []
    for label in (True, False):
        hits = [s == g for g, s in zip(gold, said, strict=True) if g is label]
        if not hits:
            return None
        rates.append(sum(hits) / len(hits))
    return sum(rates) / 2


def replayed(item: dict[str, Any], threshold: float) -> bool:
    """Sufficiency's answer-level verdict at ``threshold`` from a run at or below it."""
    return all(_answered(s, threshold) for s in item["subs"])


def _answered(sub: dict[str, Any], threshold: float) -> bool:
    return bool(sub["verified"]) and (sub["p"] or 0.0) >= threshold


def at_threshold(items: Sequence[dict[str, Any]], threshold: float) -> list[dict[str, Any]]:
    """The items with Sufficiency's score replayed at ``threshold`` (sub-questions answered at
    it / sub-questions); other metrics' items as they are. A run at a higher threshold did not
    check the answers between the two: refused. Files without a threshold ran at 0.5."""
    out = []
    for item in items:
        if item["metric"] == "sufficiency" and item["subs"]:
            ran = item.get("threshold", 0.5)
            if ran > threshold:
                raise SystemExit(f"{item['id']}: run at {ran}, cannot replay at {threshold}")
            answered = sum(_answered(s, threshold) for s in item["subs"])
            item = {**item, "score": answered / len(item["subs"])}
        out.append(item)
    return out


def fit(args: argparse.Namespace) -> int:
    items = [i for i in _items(args.results) if i["metric"] == "sufficiency"]
    gold = [i["sufficient"] for i in items]
    print(f"{len(items)} dev rows; AUC of p_sufficient "
          f"{fmt(auc(gold, [i['p_sufficient'] or 0.0 for i in items]))}")  # fmt: skip
    best = (0.0, -1.0)
    low = max(i.get("threshold", 0.5) for i in items)  # below a run's threshold: unchecked
    for step in range(math.ceil(low * 20), 20):
        t = step / 20
        said = [replayed(i, t) for i in items]
        ba = balanced_accuracy(gold, said) or 0.0
        per = []
        for source in SOURCES:
            pairs = [(i["sufficient"], replayed(i, t)) for i in items if i["source"] == source]
            if pairs:
                g, x = zip(*pairs, strict=True)
                per.append(f"{source} {fmt(balanced_accuracy(g, x))}")
        print(f"threshold {t:.2f}: balanced accuracy {ba:.3f} ({', '.join(per)})")
        best = max(best, (ba, -t))
    print(f"best threshold {-best[1]:.2f} (balanced accuracy {best[0]:.3f})")
    return 0


def report(args: argparse.Namespace) -> int:
    items = _items(args.results)
    if args.threshold is not None:
        items = at_threshold(items, args.threshold)
    by: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for i in items:
        by[i["source"], i["metric"]].append(i)
        by["all", i["metric"]].append(i)
    seconds: dict[tuple[str, str], float] = {}
    for (source, metric), group in sorted(by.items()):
        gold = [i["sufficient"] for i in group]
        scores = [i["score"] for i in group]
        graded = [i["p_sufficient"] for i in group]
        seconds[source, metric] = sum(i["seconds"] for i in group) / len(group)
        line = (
            f"{source:20} {metric:16} n={len(group):4} AUC(score) {fmt(auc(gold, scores))}  "
            f"balanced accuracy {fmt(balanced_accuracy(gold, [s == 1.0 for s in scores]))}"
        )
        if None not in graded:
            line += f"  AUC(p_sufficient) {fmt(auc(gold, graded))}"
        print(line + f"  {seconds[source, metric]:.1f} s/row")
    for source in sorted({source for source, _ in seconds}):
        a, b = seconds.get((source, "sufficiency")), seconds.get((source, "question_recall"))
        if a and b:
            print(f"{source}: judge time, sufficiency / question_recall = {a / b:.2f}")
            print(f"{source}: {_paired(by[source, 'sufficiency'], by[source, 'question_recall'])}")
    return 0


def _paired(ours: list[dict[str, Any]], theirs: list[dict[str, Any]], draws: int = 2000) -> str:
    """On the rows both metrics scored: Sufficiency's AUC(p_sufficient) and its lead over
    QuestionRecall's AUC(score), each with a 90 % interval from ``draws`` bootstrap resamples
    of the rows (seed 0)."""
    score = {i["id"]: i["score"] for i in theirs}
    rows = [(i["sufficient"], i["p_sufficient"], score[i["id"]]) for i in ours if i["id"] in score]
    if not rows or any(p is None for _, p, _ in rows):
        return "no paired rows with p_sufficient"

    def both(sample: Sequence[tuple[bool, float, float]]) -> tuple[float, float] | None:
        gold = [g for g, _, _ in sample]
        a, b = auc(gold, [p for _, p, _ in sample]), auc(gold, [q for _, _, q in sample])
        return None if a is None or b is None else (a, a - b)

    found = both(rows)
    rng = random.Random(0)
    drawn = [both([rng.choice(rows) for _ in rows]) for _ in range(draws)]
    kept = [d for d in drawn if d is not None]
    if found is None or not kept:
        return "paired rows hold one label only"

    def interval(k: int) -> str:
        values = sorted(d[k] for d in kept)
        return f"{values[int(0.05 * len(values))]:.3f} to {values[int(0.95 * len(values)) - 1]:.3f}"

    return (
        f"n={len(rows)} paired: AUC(p_sufficient) {found[0]:.3f} (90 % {interval(0)}), "
        f"minus QuestionRecall's AUC(score) {found[1]:+.3f} (90 % {interval(1)})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="score rows with the judge (resumable)")
    r.add_argument("--bench-data", help="the converted answerability sets")
    r.add_argument("--split", default="dev", choices=["dev", "heldout"])
    r.add_argument("--per-source", type=int, default=30)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--threshold", type=float, help="Sufficiency's (default: the library's)")
    r.add_argument("--metric", action="append", choices=["sufficiency", "question_recall"])
    r.add_argument(
        "--source",
        action="append",
        choices=[*SOURCES, *PAIRED],
        help=f"default: {', '.join(SOURCES)}",
    )
    r.add_argument(
        "--history",
        action="store_true",
        help="give each row its dialogue's earlier turns (metric reported as NAME+history)",
    )
    r.add_argument("--out", type=Path, default=Path("benchmarks/out/sufficiency.jsonl"))
    add_judge_args(r)
    for name, helps in (("fit", "thresholds on a dev run"), ("report", "figures of a run")):
        p = sub.add_parser(name, help=helps)
        p.add_argument("results", type=Path, nargs="+")
    sub.choices["report"].add_argument(
        "--threshold", type=float, help="replay Sufficiency's verdicts at this threshold"
    )
    args = parser.parse_args()
    if args.command == "fit":
        return fit(args)
    if args.command == "report":
        return report(args)
    root = bench_data(args.bench_data)
    if root is None:
        print("skipped: the answerability sets are absent (see --bench-data)")
        return 0
    args.metric = args.metric or ["sufficiency"]
    return run(args, root)


if __name__ == "__main__":
    raise SystemExit(main())
