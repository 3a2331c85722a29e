"""Speed of context recall on the embedded judge, and ragrecall's overhead over the server.

    python -m benchmarks.speed.judge_speed [--data ../shared/datasets] [--limit 20] [--seed 0]
        [--concurrency 1] [--summary benchmarks/out/judge_speed.json]

LFQA-Verification answers (the answer's sentences as the claims, the question's documents as
the chunks) are scored by ``ContextRecall`` on the embedded judge, reached through the
counting proxy (``_usage_proxy.py``), which sums the prompt, cached and completion tokens and
the server's own processing time (llama.cpp's ``timings``: prompt_ms + predicted_ms) of every
reply. Overhead = (ragrecall's wall time - the server's processing time) / the server's time,
at concurrency 1 so that requests do not overlap. Run it on an idle machine: it prints the load
average at its start and end. Skips cleanly without the data. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._common import commit, data_dir, judge_at, lfqa_answers, write_json
from benchmarks._usage_proxy import UsageProxy


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="the shared datasets folder")
    parser.add_argument("--limit", type=int, default=20, help="LFQA answers")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--summary", type=Path, help="JSON summary")
    args = parser.parse_args()
    root = data_dir(args.data)
    if root is None:
        print("skipped: the shared datasets folder is absent (pass --data)")
        return 0
    rows = lfqa_answers(root, args.limit, args.seed)

    from ragrecall import ContextRecall, evaluate
    from ragrecall.judges import LocalJudge

    local = LocalJudge()
    server = local._server
    server.ensure_running()
    load_start = os.getloadavg()
    with UsageProxy(server.base_url) as proxy:
        judge = judge_at(proxy.base_url("ragrecall"), server.api_key, local.model_name)
        metric = ContextRecall(
            judge, claims="sentences", window_tokens=local.context_window, verdict="token"
        )  # what "auto" picks for LocalJudge itself
        start = time.perf_counter()
        report = evaluate(rows, [metric], concurrency=args.concurrency, show_progress=False)
        wall = time.perf_counter() - start
        tally = proxy.tally("ragrecall")
    results = report.results["context_recall"]
    claims = sum(len(r.verdicts) for r in results)
    n = len(rows)
    summary: dict[str, Any] = {
        "commit": commit(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "load_avg_start": load_start,
        "load_avg_end": os.getloadavg(),
        "judge": local.model_name,
        "threads": server.config.threads,
        "concurrency": args.concurrency,
        "answers": n,
        "claims": claims,
        "unscorable": len(report.unscorable()),
        "wall_s": wall,
        "seconds_per_answer": wall / n,
        "seconds_per_claim": wall / max(claims, 1),
        "calls_per_answer": tally.calls / n,
        "prompt_tokens_per_answer": tally.prompt_tokens / n,
        "uncached_prompt_tokens_per_answer": (tally.prompt_tokens - tally.cached_tokens) / n,
        "completion_tokens_per_answer": tally.completion_tokens / n,
        "server_s": tally.server_s,
        "http_s": tally.busy_s,
        "overhead": None,
        "client_overhead": None,  # meaningful only without overlap
    }
    if args.concurrency == 1 and tally.server_s:
        summary["overhead"] = (wall - tally.server_s) / tally.server_s
        summary["client_overhead"] = (wall - tally.busy_s) / tally.server_s
    print_summary(summary)
    write_json(args.summary, summary)
    return 0


def print_summary(s: dict[str, Any]) -> None:
    print(
        f"{s['judge']}, {s['threads']} threads, concurrency {s['concurrency']}; load average "
        + " / ".join(f"{x:.2f}" for x in (s["load_avg_start"][0], s["load_avg_end"][0]))
        + " (start / end)"
    )
    print(f"{s['answers']} LFQA answers, {s['claims']} claims, {s['unscorable']} unscorable")
    print(
        f"  {s['seconds_per_answer']:.1f} s per answer, {s['seconds_per_claim']:.2f} s per claim"
        f", {s['calls_per_answer']:.1f} calls per answer"
    )
    print(
        f"  per answer: {s['prompt_tokens_per_answer']:.0f} prompt tokens "
        f"({s['uncached_prompt_tokens_per_answer']:.0f} uncached), "
        f"{s['completion_tokens_per_answer']:.0f} completion tokens"
    )
    if s["overhead"] is not None:
        print(
            f"  wall {s['wall_s']:.1f} s; server processing {s['server_s']:.1f} s; "
            f"in HTTP {s['http_s']:.1f} s"
        )
        print(
            f"  overhead over the server's time {100 * s['overhead']:.1f} % "
            f"(of which outside HTTP calls {100 * s['client_overhead']:.1f} %)"
        )


if __name__ == "__main__":
    sys.exit(main())
