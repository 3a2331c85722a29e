"""How well the reference-free score tracks people's recall on LFQA-Verification answers.

    python -m benchmarks.quality.lfqa_tracking --run DIR [--limit N] [--judge local]

``DIR`` is a ``judge_scores.py`` folder (``data.jsonl``, ``gold.jsonl`` and ``results.jsonl``:
ContextRecall's scores with the same judge). For the answers ContextRecall scored there (any
prefix of that run is a random sample), Sufficiency scores the question against the same
documents, without the reference; each score is appended to ``DIR/sufficiency.jsonl`` (a rerun
goes on where it stopped). Then, on the answers both scored: Pearson's r of people's recall
(the share of the answer's sentences the annotators' majority calls supported) with
Sufficiency's score, with its ``p_sufficient`` and with ContextRecall's score; and the AUC of
each for telling the answers people put below 0.5 (higher score, less likely below). Asserts
nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks._common import add_judge_args, auc, make_judge


def rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def people_recall(labels: list[Any]) -> float | None:
    known = [bool(label) for label in labels if label is not None]
    return sum(known) / len(known) if known else None


def score(args: argparse.Namespace) -> None:
    from ragrecall import ClaimCache, Sufficiency

    folder: Path = args.run
    recalled = [
        r["sample"]["sample_id"]
        for r in rows(folder / "results.jsonl")
        if r["results"]["context_recall"]["status"] == "scored"
    ][: args.limit]
    data = {r["sample_id"]: r for r in rows(folder / "data.jsonl")}
    out = folder / "sufficiency.jsonl"
    done = {r["sample_id"] for r in rows(out)}
    todo = [sid for sid in recalled if sid not in done]
    if not todo:
        return
    metric = Sufficiency(make_judge(args), cache=ClaimCache())  # type: ignore[arg-type]
    with out.open("a") as sink:
        for sid in todo:
            start = time.perf_counter()
            sample = data[sid]
            result = metric.score(
                {
                    "user_input": sample["user_input"],
                    "retrieved_contexts": sample["retrieved_contexts"],
                }
            )
            line = {
                "sample_id": sid,
                "status": result.status,
                "score": result.score,
                "p_sufficient": getattr(result, "p_sufficient", None),
                "seconds": round(time.perf_counter() - start, 1),
            }
            sink.write(json.dumps(line) + "\n")
            sink.flush()
            print(f"{sid}: {result.status} {result.score} ({line['seconds']} s)", flush=True)


def report(folder: Path) -> None:
    gold = {r["sample_id"]: people_recall(r["gold"]) for r in rows(folder / "gold.jsonl")}
    recall = {
        r["sample"]["sample_id"]: r["results"]["context_recall"]["score"]
        for r in rows(folder / "results.jsonl")
        if r["results"]["context_recall"]["status"] == "scored"
    }
    suff = {
        r["sample_id"]: r for r in rows(folder / "sufficiency.jsonl") if r["status"] == "scored"
    }
    ids = [s for s in suff if s in recall and gold.get(s) is not None]
    people = [gold[s] for s in ids]
    below = [p < 0.5 for p in people]
    columns = {
        "Sufficiency score": [suff[s]["score"] for s in ids],
        "Sufficiency p_sufficient": [suff[s]["p_sufficient"] for s in ids],
        "ContextRecall score (with the reference)": [recall[s] for s in ids],
    }
    print(f"{len(ids)} answers, {sum(below)} of them below 0.5 by people's recall")
    for name, values in columns.items():
        if any(v is None for v in values):
            print(f"{name:42} (missing values)")
            continue
        r = statistics.correlation(values, people) if len(set(values)) > 1 else float("nan")
        area = auc(below, [-v for v in values])
        shown = "n/a" if area is None else f"{area:.3f}"
        print(f"{name:42} Pearson r {r:.3f}   AUC for below 0.5 {shown}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_judge_args(parser)
    parser.add_argument("--run", type=Path, required=True, help="a judge_scores.py folder")
    parser.add_argument("--limit", type=int, default=600)
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args()
    if not args.report_only:
        score(args)
    report(args.run)


if __name__ == "__main__":
    main()
