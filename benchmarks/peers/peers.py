"""Peers on the same judge: ragrecall, RAGAS and DeepEval context recall against people.

    .venv-peers/bin/python -m benchmarks.peers.peers [--data ../shared/datasets] [--limit 10]
        [--seed 0] [--tools ragrecall ragas deepeval] [--concurrency 2] [--deepeval-reason]
        [--out items.jsonl] [--summary summary.json]

One embedded judge (``LocalJudge``, llama.cpp) serves all three tools through its
OpenAI-compatible endpoint, with a counting proxy in between (``_usage_proxy``), so calls and
tokens are counted the same way for every tool, from the server's ``usage``. Data: a seeded
sample of LFQA-Verification answers (as in ``agreement.py``): reference = the labelled
sentences joined, contexts = the question's documents, gold recall = the supported share.

- ragrecall: ``ContextRecall(judge, claims="sentences")`` with the sentences as
  ``reference_claims`` (so its claims are the labelled ones), a ``ChatOpenAI`` at the proxy.
- RAGAS 0.4: ``ragas.metrics.collections.ContextRecall`` with ``llm_factory`` over an
  ``AsyncOpenAI`` client (instructor, JSON mode), temperature 0, its other defaults.
- DeepEval: ``ContextualRecallMetric`` with its ``LocalModel`` (OpenAI-compatible), temperature
  0; ``include_reason`` off unless ``--deepeval-reason`` (the reason is an extra call that
  does not change the score).

Every tool runs ``--concurrency`` answers at a time (default: the judge's 2 slots). Reports per
answer Pearson, Spearman and MAE against the gold recall, the unscorable (error or NaN) count,
wall seconds per answer, and calls and prompt / cached / completion tokens per answer. The
peers are optional benchmark dependencies: install them in a separate venv (README.md).
Skips cleanly without the data.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
import time
import types
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# The network is closed and these are benchmarks: no telemetry, whatever the user's settings.
os.environ["RAGAS_DO_NOT_TRACK"] = "true"
os.environ["DEEPEVAL_TELEMETRY_OPT_OUT"] = "YES"
os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")


from benchmarks._common import (
    commit,
    data_dir,
    fmt,
    judge_at,
    lfqa_answers,
    mae,
    pearson,
    spearman,
    write_json,
    write_jsonl,
)
from benchmarks._usage_proxy import UsageProxy

TOOLS = ("ragrecall", "ragas", "deepeval")
TIMEOUT = 600.0  # seconds per judge request (--timeout); a full window takes a minute on 2 cores

Scores = list[float | None]  # None: unscorable (an error, or NaN)


def _score(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


async def ragrecall_scores(
    base_url: str,
    api_key: str,
    model: str,
    rows: Sequence[dict[str, Any]],
    concurrency: int,
    window_tokens: int = 4096,
    timeout: float = TIMEOUT,
) -> tuple[Scores, list[Any]]:
    from ragrecall import ContextRecall, aevaluate

    judge = judge_at(base_url, api_key, model, timeout)  # what LocalJudge is, at the proxy
    # verdict="token": what "auto" picks for LocalJudge itself
    metric = ContextRecall(
        judge, claims="sentences", window_tokens=window_tokens, verdict="token", timeout=timeout
    )
    report = await aevaluate(list(rows), [metric], concurrency=concurrency, show_progress=False)
    results = report.results["context_recall"]
    return [r.score for r in results], [r.model_dump(mode="json") for r in results]


async def ragas_scores(
    base_url: str,
    api_key: str,
    model: str,
    rows: Sequence[dict[str, Any]],
    concurrency: int,
    timeout: float = TIMEOUT,
) -> tuple[Scores, list[Any]]:
    """RAGAS 0.4's context recall; rows have user_input, reference, retrieved_contexts (str)."""
    import openai

    ragas_shim()
    from ragas.llms import llm_factory
    from ragas.metrics.collections import ContextRecall as RagasContextRecall

    client = openai.AsyncOpenAI(
        base_url=base_url,
        api_key=api_key,
        max_retries=0,
        timeout=timeout,
        http_client=openai.DefaultAsyncHttpxClient(trust_env=False),
    )
    metric = RagasContextRecall(llm=llm_factory(model, client=client, temperature=0.0))
    gate = asyncio.Semaphore(concurrency)

    async def one(row: dict[str, Any]) -> tuple[float | None, Any]:
        async with gate:
            try:
                result = await metric.ascore(
                    user_input=row["user_input"],
                    retrieved_contexts=_texts(row),
                    reference=row["reference"],
                )
            except Exception as exc:
                return None, f"{type(exc).__name__}: {exc}"[:2000]
            return _score(result.value), {
                "value": _score(result.value),
                "reason": getattr(result, "reason", None),
            }

    found = await asyncio.gather(*(one(r) for r in rows))
    return [s for s, _ in found], [d for _, d in found]


async def deepeval_scores(
    base_url: str,
    api_key: str,
    model: str,
    rows: Sequence[dict[str, Any]],
    concurrency: int,
    reason: bool,
    timeout: float = TIMEOUT,
) -> tuple[Scores, list[Any]]:
    from deepeval.metrics import ContextualRecallMetric
    from deepeval.models import LocalModel
    from deepeval.test_case import LLMTestCase

    judge = LocalModel(
        model=model, api_key=api_key, base_url=base_url, temperature=0, timeout=timeout
    )
    gate = asyncio.Semaphore(concurrency)

    async def one(row: dict[str, Any]) -> tuple[float | None, Any]:
        metric = ContextualRecallMetric(model=judge, include_reason=reason, async_mode=True)
        case = LLMTestCase(
            input=row["user_input"],
            actual_output=row["reference"],
            expected_output=row["reference"],
            retrieval_context=_texts(row),
        )
        async with gate:
            try:
                value = await metric.a_measure(case, _show_indicator=False)
            except Exception as exc:
                return None, f"{type(exc).__name__}: {exc}"[:2000]
        verdicts = [v.model_dump() for v in (metric.verdicts or [])]
        return _score(value), {
            "value": _score(value),
            "verdicts": verdicts,
            "reason": metric.reason,
        }

    found = await asyncio.gather(*(one(r) for r in rows))
    return [s for s, _ in found], [d for _, d in found]


def ragas_shim() -> None:
    """ragas 0.4.3 imports ``langchain_community.chat_models.vertexai``, which
    langchain-community 0.4 removed; ragas only uses the class in isinstance checks."""
    name = "langchain_community.chat_models.vertexai"
    warnings.filterwarnings("ignore", message=".*langchain-community.*sunset")
    try:
        __import__(name)
    except ImportError:
        module = types.ModuleType(name)
        module.ChatVertexAI = type("ChatVertexAI", (), {})  # type: ignore[attr-defined]
        sys.modules[name] = module


def _texts(row: dict[str, Any]) -> list[str]:
    return [c["text"] if isinstance(c, dict) else str(c) for c in row["retrieved_contexts"]]


def available(tool: str) -> bool:
    if tool == "ragas":
        ragas_shim()
    try:
        __import__(tool)
    except ImportError:
        return False
    return True


def compare(rows: Sequence[dict[str, Any]], scores: Scores) -> dict[str, Any]:
    gold = [sum(r["gold"]) / len(r["gold"]) for r in rows]
    pairs = [(s, g) for s, g in zip(scores, gold, strict=True) if s is not None]
    pred, ref = [p for p, _ in pairs], [g for _, g in pairs]
    return {
        "scored": len(pairs),
        "unscorable": len(rows) - len(pairs),
        "pearson": pearson(pred, ref),
        "spearman": spearman(pred, ref),
        "mae": mae(pred, ref) if pairs else None,
    }


def run_tool(
    tool: str,
    proxy: UsageProxy,
    api_key: str,
    model: str,
    rows: Sequence[dict[str, Any]],
    args: argparse.Namespace,
) -> tuple[dict[str, Any], list[Any]]:
    base_url = proxy.base_url(tool)
    start = time.perf_counter()
    if tool == "ragrecall":
        coro = ragrecall_scores(
            base_url, api_key, model, rows, args.concurrency, timeout=args.timeout
        )
    elif tool == "ragas":
        coro = ragas_scores(base_url, api_key, model, rows, args.concurrency, args.timeout)
    else:
        coro = deepeval_scores(
            base_url, api_key, model, rows, args.concurrency, args.deepeval_reason, args.timeout
        )
    scores, details = asyncio.run(coro)
    seconds = time.perf_counter() - start
    proxy.wait_idle(args.timeout)  # requests a tool gave up on still hold the judge
    tally = proxy.tally(tool)
    n = len(rows)
    summary = {
        **compare(rows, scores),
        "seconds_per_answer": seconds / n,
        "calls_per_answer": tally.calls / n,
        "prompt_tokens_per_answer": tally.prompt_tokens / n,
        "cached_tokens_per_answer": tally.cached_tokens / n,
        "completion_tokens_per_answer": tally.completion_tokens / n,
        "http_errors": tally.errors,
        "truncated_replies": tally.truncated,
        "abandoned_requests": tally.abandoned,
        "load_avg_after": os.getloadavg(),
    }
    items = [
        {
            "tool": tool,
            "id": r["id"],
            "gold": sum(r["gold"]) / len(r["gold"]),
            "score": s,
            "detail": d,
        }
        for r, s, d in zip(rows, scores, details, strict=True)
    ]
    return summary, items


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="the shared datasets folder")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tools", nargs="+", default=list(TOOLS), choices=TOOLS)
    parser.add_argument(
        "--concurrency",
        type=int,
        default=2,
        help="answers in flight per tool (default: the judge's 2 slots)",
    )
    parser.add_argument(
        "--deepeval-reason",
        action="store_true",
        help="let DeepEval write its reason (one more call per answer)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=TIMEOUT,
        help="seconds per judge request, the same for every tool",
    )
    parser.add_argument(
        "--threads",
        type=int,
        help="judge CPU threads (default: all usable; 1 can be faster when "
        "other jobs load the CPU)",
    )
    parser.add_argument("--out", type=Path, help="per-answer JSONL")
    parser.add_argument("--summary", type=Path, help="JSON summary")
    args = parser.parse_args()
    # DeepEval's own deadline (180 s a test case by default) cuts off a slow CPU judge: give it
    # the same per-request deadline as the other tools (read when deepeval is imported).
    os.environ["DEEPEVAL_PER_ATTEMPT_TIMEOUT_SECONDS_OVERRIDE"] = str(args.timeout)
    root = data_dir(args.data)
    if root is None:
        print("skipped: the shared datasets folder is absent (pass --data)")
        return 0
    tools = [t for t in args.tools if available(t)]
    for tool in sorted(set(args.tools) - set(tools)):
        print(f"{tool}: skipped (not installed; use the .venv-peers venv, see README.md)")
    if not tools:
        return 0
    rows = lfqa_answers(root, args.limit, args.seed)
    from ragrecall.judges import LocalJudge

    local = LocalJudge(threads=args.threads)
    server = local._server
    start = time.perf_counter()
    server.ensure_running()
    startup = time.perf_counter() - start
    summary: dict[str, Any] = {
        "commit": commit(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "load_avg_start": os.getloadavg(),
        "judge": local.model_name,
        "judge_startup_s": startup,
        "answers": len(rows),
        "sentences": sum(len(r["gold"]) for r in rows),
        "args": {k: str(v) for k, v in vars(args).items()},
        "tools": {},
    }
    print(
        f"judge {local.model_name} ready in {startup:.1f} s; {len(rows)} answers, "
        f"{summary['sentences']} sentences; load average "
        + " ".join(f"{x:.2f}" for x in summary["load_avg_start"]),
        flush=True,
    )
    items: list[Any] = []
    summary["judge_threads"] = server.config.threads
    with UsageProxy(server.base_url, timeout=args.timeout + 60) as proxy:
        for tool in tools:
            summary["tools"][tool], found = run_tool(
                tool, proxy, server.api_key, local.model_name, rows, args
            )
            items += found
            print_row(tool, summary["tools"][tool], header=tool == tools[0])
    summary["load_avg_end"] = os.getloadavg()
    print("load average at the end " + " ".join(f"{x:.2f}" for x in summary["load_avg_end"]))
    write_jsonl(args.out, items)
    write_json(args.summary, summary)
    return 0


def print_row(tool: str, s: dict[str, Any], header: bool) -> None:
    if header:
        print(
            f"{'tool':10s} {'Pearson':>7s} {'Spearman':>8s} {'MAE':>6s} {'unscorable':>10s} "
            f"{'s/answer':>8s} {'calls':>6s} {'prompt tok':>10s} {'cached':>7s} "
            f"{'compl tok':>9s} {'HTTP err':>8s} {'truncated':>9s} {'abandoned':>9s}"
        )
    print(
        f"{tool:10s} {fmt(s['pearson']):>7s} {fmt(s['spearman']):>8s} {fmt(s['mae']):>6s} "
        f"{s['unscorable']:>10d} {s['seconds_per_answer']:8.1f} {s['calls_per_answer']:6.1f} "
        f"{s['prompt_tokens_per_answer']:10.0f} {s['cached_tokens_per_answer']:7.0f} "
        f"{s['completion_tokens_per_answer']:9.0f} {s['http_errors']:>8d} "
        f"{s['truncated_replies']:>9d} {s['abandoned_requests']:>9d}",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
