"""Memory at scale: does peak RSS grow with the dataset when results stream to a file?

    python -m benchmarks.speed.scale [--sizes 1000,10000] [--modes astream,cli] [--concurrency 16]

For each size a JSONL dataset is written to a temporary folder and scored in a fresh process
with a zero-latency fake judge (keyword verdicts, no network, no model), so only ragrecall's
own memory is measured:

- ``astream``: ``ragrecall.astream(path, [ContextRecall(...)])``, each finished sample
  appended to a JSONL file as it arrives;
- ``cli``: ``ragrecall eval data.jsonl --out results.jsonl`` (appends, fsyncs, then prints
  the summary).

Prints peak RSS per mode and size (``ru_maxrss`` of the child process) and the growth from
the smallest to the largest size. Asserts nothing; ``tests/unit/test_scale.py`` is the light
check.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool

ROOT = Path(__file__).resolve().parents[2]


class FastJudge(BaseChatModel):
    """Zero-latency keyword judge that keeps nothing between calls (unlike the test fakes,
    which record every call): a claim is supported when a passage contains its first word."""

    tool_name: str = ""
    model_name: str = "fast-fake"

    @property
    def _llm_type(self) -> str:
        return "fast-fake"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.model_copy(
            update={"tool_name": convert_to_openai_tool(tools[0])["function"]["name"]}
        )

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        human = next(str(m.content) for m in messages if m.type == "human")
        passages, _, claim = human.rpartition("\n\nClaim: ")
        word = claim.split()[0].lower() if claim.split() else ""
        hit = bool(word) and word in passages.lower()
        args = {"supported": hit, "passage": 1 if hit else 0, "quote": ""}
        message = AIMessage(
            content="", tool_calls=[{"name": self.tool_name, "args": args, "id": "call_1"}]
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


def fast_judge() -> FastJudge:
    return FastJudge()


def write_dataset(path: Path, n: int, claims: int = 3) -> None:
    """``n`` samples of ``claims`` claims (sentences) each."""
    sentences = ["Cats purr {i}.", "Dogs bark {i}.", "Birds sing {i}."][:claims]
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            row = {
                "question": f"What do animals do, case {i}?",
                "reference": " ".join(s.format(i=i) for s in sentences),
                "contexts": [f"Cats purr {i} loudly at home.", f"Birds sing {i} at dawn."],
            }
            f.write(json.dumps(row) + "\n")


ASTREAM = """
import asyncio, json, resource, sys
from benchmarks.speed.scale import fast_judge
from ragrecall import ClaimCache, ContextRecall, astream

async def main(data, out):
    metric = ContextRecall(fast_judge(), "sentences", strategy="per_claim", cache=ClaimCache())
    n = 0
    with open(out, "a", encoding="utf-8") as f:
        async for scored in astream(data, [metric], concurrency={concurrency}):
            record = {{"index": scored.index, "results": {{
                k: r.model_dump(mode="json") for k, r in scored.results.items()}}}}
            f.write(json.dumps(record) + "\\n")
            n += 1
    return n

n = asyncio.run(main(sys.argv[1], sys.argv[2]))
print(n)
"""


def run_child(argv: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run a child; its peak RSS in MiB (``wait4``'s own rusage) and its stdout."""
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    if process.returncode != 0:
        raise SystemExit(f"{argv[:4]} failed ({process.returncode}):\n{text[-2000:]}")
    return usage.ru_maxrss // 1024, text  # ru_maxrss is in KiB on Linux


def measure(
    mode: str, n: int, folder: Path, concurrency: int = 16, claims: int = 3
) -> tuple[int, int]:
    """Peak RSS (MiB) and the number of result lines written."""
    data = folder / f"data-{n}-{claims}.jsonl"
    if not data.exists():
        write_dataset(data, n, claims)
    out = folder / f"results-{mode}-{n}.jsonl"
    out.unlink(missing_ok=True)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    if mode == "astream":
        code = ASTREAM.format(concurrency=concurrency)
        rss, _ = run_child([sys.executable, "-c", code, str(data), str(out)], env)
    elif mode == "cli":
        argv = [
            sys.executable, "-m", "ragrecall.cli", "eval", str(data), "--out", str(out),
            "--judge-factory", "benchmarks.speed.scale:fast_judge", "--claim-mode", "sentences",
            "--strategy", "per_claim", "--concurrency", str(concurrency), "--no-progress",
            "--max-unscorable", "1",
        ]  # fmt: skip
        rss, _ = run_child(argv, env)
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    with out.open("rb") as f:
        lines = sum(1 for _ in f)
    return rss, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--modes", default="astream,cli")
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="ragrecall-scale-") as tmp:
        for mode in args.modes.split(","):
            peaks = []
            for n in sizes:
                rss, lines = measure(mode, n, Path(tmp), args.concurrency)
                peaks.append(rss)
                print(
                    f"{mode:8} {n:>7} samples: peak RSS {rss:5} MiB ({lines} result lines)",
                    flush=True,
                )
            print(
                f"{mode:8} growth {sizes[0]} -> {sizes[-1]} samples: {peaks[-1] - peaks[0]:+} MiB"
            )


if __name__ == "__main__":
    main()
