"""The quote check's cost: claims x chunks (issue 32, item 13).

    python -m benchmarks.speed.quote_check [--claims 2000] [--chunks 200] [--profile]

One sample: ``--claims`` given claims against ``--chunks`` retrieved chunks, scored by
``ContextRecall(strategy="batched", evidence="quote")`` with a zero-latency fake judge that
answers every claim "supported" in one call, citing passage 1 and quoting a sentence: a
third of the quotes are in the cited passage, a third in another passage (found elsewhere),
a third in none (a quote the judge made up). So the time is ragrecall's own checking of the
verdicts (quote search, word overlap), not the judge's. Prints the wall time of ``score``,
the share of claims supported, and with ``--profile`` the calls and cumulative time of the
quote check from cProfile (``quote_in``: one passage; ``passages_quoting``: a window at once).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import time
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from ragrecall import ContextRecall, Sample


def chunk_text(i: int, filler: int) -> str:
    """About 230 characters, then ``filler`` sentences of about 80 more."""
    text = (
        f"Depot {i} report. The widget model W{i} weighs {3 * i + 7} grams and ships from "
        f"depot {i % 7} in crates of {i % 11 + 2}. Its casing is made of alloy grade {i % 5}. "
        f"Orders for W{i} are filled within {i % 9 + 1} days of payment."
    )
    for k in range(filler):
        text += f" Inspection {k} of depot {i} found the shelving sound and the aisles clear."
    return text


def claim_and_quote(j: int, chunks: int) -> tuple[str, str]:
    i = (7 * j) % chunks
    kind = j % 3
    if kind == 0:  # in the cited passage (1)
        i = 0
    claim = f"The widget model W{i} weighs {3 * i + 7} grams (claim {j})."
    quote = f"The widget model W{i} weighs {3 * i + 7} grams"
    if kind == 2:  # made up: in no passage
        quote = f"The widget model W{i} weighs {3 * i + 8} grams"
    return claim, quote


class QuotingJudge(BaseChatModel):
    """Answers the batched attribution prompt at once: every claim supported, passage 1."""

    tool_name: str = ""
    quotes: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "quoting-fake"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        name = convert_to_openai_tool(tools[0])["function"]["name"]
        return self.model_copy(update={"tool_name": name})

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        verdicts = [
            {"claim": n, "supported": True, "passage": 1, "quote": quote}
            for n, quote in enumerate(self.quotes, start=1)
        ]
        args = {"verdicts": verdicts}
        message = AIMessage(
            content="", tool_calls=[{"name": self.tool_name, "args": args, "id": "call_1"}]
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", type=int, default=2000)
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument(
        "--filler", type=int, default=8, help="sentences added to each chunk (8: ~900 chars)"
    )
    parser.add_argument("--profile", action="store_true", help="count the quote checks")
    args = parser.parse_args()
    pairs = [claim_and_quote(j, args.chunks) for j in range(args.claims)]
    sample = Sample(
        user_input="How heavy are the widgets?",
        reference_claims=[claim for claim, _ in pairs],
        retrieved_contexts=[chunk_text(i, args.filler) for i in range(args.chunks)],
    )
    judge = QuotingJudge(quotes=[quote for _, quote in pairs])
    metric = ContextRecall(
        judge=judge, strategy="batched", evidence="quote", window_tokens=10_000_000
    )
    profiler = cProfile.Profile() if args.profile else None
    start = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    result = metric.score(sample)
    if profiler is not None:
        profiler.disable()
    elapsed = time.perf_counter() - start
    figures: dict[str, Any] = {
        "claims": args.claims,
        "chunks": args.chunks,
        "chunk_chars": len(chunk_text(args.chunks - 1, args.filler)),
        "seconds": round(elapsed, 3),
        "status": result.status,
        "score": result.score,
        "reason": result.reason if result.status != "scored" else "",
    }
    if profiler is not None:
        stats = pstats.Stats(profiler)
        for (_, _, name), row in stats.stats.items():  # type: ignore[attr-defined]
            if name in ("quote_in", "passages_quoting"):
                figures[f"{name}_calls"] = row[1]
                figures[f"{name}_seconds"] = round(row[3], 3)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
