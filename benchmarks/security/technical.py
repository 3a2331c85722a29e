"""Honest technical chunks keep their support: JSON, code, tables, imperative docs, encoded
blobs and other languages (``benchmarks/data/honest_technical.jsonl``), each scored with its
own text as the reference, beside one unrelated chunk, with the judge's defaults.

    python -m benchmarks.security.technical [--judge local | --base-url URL --model NAME]
        [--limit N] [--out benchmarks/out/technical.json]

Prints the share of claims supported and of chunks fully supported, the chunks the injection
rules withheld or redacted, the second looks (``ContextRecall``'s check with a suspect passage
in view) that confirmed or refused a verdict, and why each claim that did not count did not.
Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks._common import DATA, OUT, add_judge_args, commit, make_judge, write_json
from ragrecall import ContextRecall

TECHNICAL = DATA / "honest_technical.jsonl"
UNRELATED = "Loam holds water well and suits most vegetables."
SECOND_LOOK = ("confirmed with it out of view", "not with what could hold an order out of view")


def reason_kind(reason: str) -> str:
    """A claim's reason without its details (passage numbers, P)."""
    for marker in (*SECOND_LOOK, "its evidence does not state the claim"):
        if marker in reason:
            return marker
    return reason.split(" (")[0].split(";")[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_judge_args(parser)
    parser.add_argument("--data", type=Path, default=TECHNICAL)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--out", type=Path, default=OUT / "technical.json")
    args = parser.parse_args()
    chunks = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]
    chunks = chunks[: args.limit]
    metric = ContextRecall(make_judge(args))  # type: ignore[arg-type]
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    for chunk in chunks:
        result = metric.score(
            {
                "user_input": "What does this document say?",
                "reference": chunk["text"],
                "retrieved_contexts": [
                    {"id": "other", "text": UNRELATED},
                    {"id": "doc", "text": chunk["text"]},
                ],
            }
        )
        verdicts = [
            {"claim": v.claim, "attributed": v.attributed, "reason": v.reason}
            for v in result.verdicts
        ]
        rows.append(
            {
                "id": chunk["id"],
                "kind": chunk["kind"],
                "language": chunk["language"],
                "status": result.status,
                "note": result.reason,
                "verdicts": verdicts,
            }
        )
        held = sum(v["attributed"] for v in verdicts)
        print(f"{chunk['id']:28} {result.status:10} {held}/{len(verdicts)}", flush=True)
    claims = [v for r in rows for v in r["verdicts"]]
    supported = sum(v["attributed"] for v in claims)
    full = sum(bool(r["verdicts"]) and all(v["attributed"] for v in r["verdicts"]) for r in rows)
    touched = [r["id"] for r in rows if "address the judge" in (r["note"] or "")]
    looks = Counter(marker for v in claims for marker in SECOND_LOOK if marker in v["reason"])
    why = Counter(reason_kind(v["reason"]) for v in claims if not v["attributed"])
    summary = {
        "chunks": len(rows),
        "claims": len(claims),
        "supported": supported,
        "fully_supported_chunks": full,
        "withheld_or_redacted": touched,
        "second_looks": dict(looks),
        "not_counted_because": dict(why),
        "unscorable": [r["id"] for r in rows if r["status"] != "scored"],
        "seconds": round(time.perf_counter() - start, 1),
    }
    print(
        f"claims supported {supported}/{len(claims)} = {supported / max(len(claims), 1):.1%}; "
        f"chunks fully supported {full}/{len(rows)}; withheld or redacted {len(touched)}/"
        f"{len(rows)} {touched}; second looks {dict(looks)}; not counted because {dict(why)}"
    )
    meta = {"commit": commit(), "judge": str(getattr(metric.judge, "model_name", "local"))}
    write_json(args.out, {**meta, "summary": summary, "rows": rows})
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
