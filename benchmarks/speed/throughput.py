"""Throughput: ragrecall's own overhead, and how well it keeps a slow judge busy.

    python -m benchmarks.speed.throughput [--fake-samples 2000] [--samples 1000] [--delay 0.2]
        [--concurrency 1 8 32 64] [--serial-samples 50] [--tools ragrecall ragas chatopenai]
        [--http httpx|aiohttp]
        [--profile 32] [--summary out.json]

1. Overhead: ``--fake-samples`` samples through ``ragrecall.evaluate`` with a zero-latency fake
   chat model (in process, native structured output through tool calls): samples per second
   and microseconds per sample, i.e. everything ragrecall and LangChain do around a judge call.
2. Concurrency: a local OpenAI-compatible server (a child process, loopback, asyncio streams)
   answers every chat completion after ``--delay`` seconds. ``--samples`` samples of one claim
   and one chunk each (``reference_claims``, sentences mode: one judge call per sample) go
   through the real ``ChatOpenAI`` client at each ``--concurrency``. Ideal wall time =
   samples x calls x delay / concurrency; efficiency = ideal / measured. Concurrency 1 runs only
   ``--serial-samples`` samples (its ideal is scaled to that count). The server also reports the
   most requests it saw in flight at once.
   ``--tools ragas`` runs RAGAS' context recall the same way (needs ``ragas``: run this script
   with ``.venv-peers/bin/python``); ``--tools chatopenai`` sends the same requests straight
   through ``ChatOpenAI.ainvoke`` under a semaphore, the floor for any framework on that
   client. ``--http aiohttp`` gives ragrecall's ``ChatOpenAI`` the OpenAI client's aiohttp
   transport (``openai.DefaultAioHttpClient``, ``openai[aiohttp]``) instead of httpx.

``--profile C`` prints a cProfile of ragrecall at concurrency C. Targets (issue 8): overhead
under 5 % of judge time; efficiency over 90 % at 32 concurrent requests.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io
import json
import os
import pstats
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks._common import ROOT, commit, write_json

# ---------------------------------------------------------------------------------------------
# The delayed OpenAI-compatible server (runs as `throughput.py --serve`, in a child process)


def _dummy(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A minimal instance of a JSON schema (true, 1, "x", one-item lists)."""
    if "$ref" in schema:
        return _dummy(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return _dummy(schema[key][0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "object")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        props = schema.get("properties", {})
        return {name: _dummy(sub, defs) for name, sub in props.items()}
    if kind == "array":
        return [_dummy(schema.get("items", {}), defs)]
    return {"boolean": True, "integer": 1, "number": 1.0, "null": None}.get(kind, "x")


def reply_for(request: dict[str, Any]) -> str:
    """The reply text: an instance of the requested JSON schema, or a RAGAS-shaped verdict."""
    fmt = request.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        schema = fmt["json_schema"]["schema"]
        return json.dumps(_dummy(schema, schema.get("$defs", {})))
    text = json.dumps(request.get("messages", []))
    if "classifications" in text:  # RAGAS' context recall prompt, without response_format
        return json.dumps(
            {"classifications": [{"statement": "The claim.", "reason": "stated", "attributed": 1}]}
        )
    return json.dumps({"supported": True, "passage": 1})


def completion(request: dict[str, Any], number: int) -> bytes:
    content = reply_for(request)
    body = {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "logprobs": None,
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
    }
    return json.dumps(body).encode()


async def serve(delay: float, idle_exit: float, lifetime: float) -> None:
    """HTTP/1.1 keep-alive on 127.0.0.1; exits after ``idle_exit`` s without requests or after
    ``lifetime`` s, whichever is first, or when its parent is gone."""
    stats = {"requests": 0, "in_flight": 0, "max_in_flight": 0, "connections": 0}
    last = time.monotonic()
    parent = os.getppid()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal last
        stats["connections"] += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
                length = int({k.lower(): v for k, v in headers.items()}.get("content-length", 0))
                body = await reader.readexactly(length) if length else b""
                last = time.monotonic()
                if method == "GET" and path.endswith("/stats"):
                    data = json.dumps(stats).encode()
                    if path.endswith("/reset/stats"):
                        stats.update(requests=0, max_in_flight=0, connections=0)
                else:
                    stats["requests"] += 1
                    stats["in_flight"] += 1
                    stats["max_in_flight"] = max(stats["max_in_flight"], stats["in_flight"])
                    try:
                        await asyncio.sleep(delay)
                    finally:
                        stats["in_flight"] -= 1
                    data = completion(json.loads(body or b"{}"), stats["requests"])
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: " + str(len(data)).encode() + b"\r\n\r\n" + data
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=256)
    print(server.sockets[0].getsockname()[1], flush=True)
    started = time.monotonic()
    while time.monotonic() - last < idle_exit and time.monotonic() - started < lifetime:
        if os.getppid() != parent:
            break
        await asyncio.sleep(0.5)
    server.close()


@contextlib.contextmanager
def delayed_server(delay: float) -> Iterator[str]:
    """Start the delayed server in a child process; yield its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.speed.throughput", "--serve", "--delay", str(delay)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(10)


def server_stats(base_url: str, reset: bool = False) -> dict[str, int]:
    url = base_url + ("/reset/stats" if reset else "/stats")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=10) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------
# ragrecall


def rows(count: int) -> list[dict[str, Any]]:
    """One claim, one chunk per sample: one judge call each."""
    return [
        {
            "user_input": f"What is fact {i}?",
            "reference_claims": [f"Fact {i} is that the sky is blue."],
            "retrieved_contexts": [
                {
                    "id": f"c{i}",
                    "text": f"Fact {i} is that the sky is blue. Other sentences follow here.",
                }
            ],
        }
        for i in range(count)
    ]


def fake_judge() -> Any:
    """A zero-latency chat model with native structured output (tool calls)."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from pydantic import Field

    class FakeJudge(BaseChatModel):
        tool: dict[str, Any] = Field(default_factory=dict)
        model_name: str = "fake"

        @property
        def _llm_type(self) -> str:
            return "fake"

        def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
            return self.model_copy(update={"tool": convert_to_openai_tool(tools[0])["function"]})

        def _generate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
        ) -> ChatResult:
            params = self.tool["parameters"]
            message = AIMessage(
                content="",
                tool_calls=[
                    {
                        "name": self.tool["name"],
                        "id": "call_1",
                        "args": _dummy(params, params.get("$defs", {})),
                    }
                ],
                usage_metadata={"input_tokens": 100, "output_tokens": 10, "total_tokens": 110},
            )
            return ChatResult(generations=[ChatGeneration(message=message)])

        async def _agenerate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
        ) -> ChatResult:
            return self._generate(messages, stop, run_manager, **kwargs)  # no executor hop

    return FakeJudge()


def openai_judge(base_url: str, http: str = "httpx") -> Any:
    """``ChatOpenAI`` at ``base_url``; ``http="aiohttp"``: its async requests go through
    aiohttp (``openai.DefaultAioHttpClient``, from ``pip install 'openai[aiohttp]'``)."""
    import openai
    from langchain_openai import ChatOpenAI

    async_client = (
        openai.DefaultAioHttpClient()
        if http == "aiohttp"
        else openai.DefaultAsyncHttpxClient(trust_env=False)
    )
    return ChatOpenAI(
        base_url=base_url,
        api_key="none",
        model="fake",
        temperature=0,
        max_retries=0,
        timeout=120,
        http_client=openai.DefaultHttpxClient(trust_env=False),
        http_async_client=async_client,
    )


def overhead(count: int) -> dict[str, Any]:
    from ragrecall import ContextRecall, evaluate

    metric = ContextRecall(
        fake_judge(), claims="sentences", strategy="per_claim", window_tokens=4096
    )
    evaluate(rows(20), [metric], show_progress=False)  # warm up imports and caches
    data = rows(count)
    cpu = time.process_time()
    start = time.perf_counter()
    report = evaluate(data, [metric], show_progress=False)
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    scored = sum(r.score is not None for r in report.results["context_recall"])
    return {
        "samples": count,
        "scored": scored,
        "calls": report.usage.calls,
        "seconds": seconds,
        "samples_per_s": count / seconds,
        "us_per_sample": seconds / count * 1e6,
        "us_per_call": seconds / max(report.usage.calls, 1) * 1e6,
        "cpu_us_per_sample": cpu / count * 1e6,
    }


async def _ragrecall_run(base_url: str, count: int, concurrency: int, http: str = "httpx") -> int:
    from ragrecall import ContextRecall, aevaluate

    judge = openai_judge(base_url, http)
    metric = ContextRecall(judge, claims="sentences", window_tokens=4096)
    report = await aevaluate(
        rows(count), [metric], concurrency=concurrency, show_progress=False, max_retries=0
    )
    await judge.root_async_client.close()
    return sum(r.score is not None for r in report.results["context_recall"])


async def breakdown(base_url: str, count: int) -> dict[str, float]:
    """Client CPU milliseconds per call, one call at a time, layer by layer: where it goes."""
    import httpx
    from langchain_core.messages import HumanMessage

    from ragrecall import ContextRecall
    from ragrecall.judges import attribution_chain
    from ragrecall.prompts import Support, response_format

    judge = openai_judge(base_url)
    body = {"model": "fake", "messages": [{"role": "user", "content": "Claim: x"}]}
    messages = [HumanMessage("Passages: ...\n\nClaim: x")]
    chain = attribution_chain(judge, "per_claim", "align")
    sample = rows(1)[0]
    metric = ContextRecall(judge, claims="sentences", window_tokens=4096)
    structured_out = judge.with_structured_output(Support, include_raw=True)
    # Cheaper alternatives for the same reply (candidates for a core fix):
    dict_out = judge.with_structured_output(
        Support.model_json_schema(), include_raw=True, method="json_schema"
    )
    bound = judge.bind(
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "Support", "schema": Support.model_json_schema()},
        }
    )

    extra = judge.bind(extra_body={"response_format": response_format(Support)})

    async def bound_call() -> Any:
        return Support.model_validate_json((await bound.ainvoke(messages)).content)

    async def extra_call() -> Any:
        return Support.model_validate_json((await extra.ainvoke(messages)).content)

    async with httpx.AsyncClient(trust_env=False) as raw:
        steps = {
            "httpx post": lambda: raw.post(base_url + "/chat/completions", json=body),
            "openai create": lambda: judge.root_async_client.chat.completions.create(**body),
            "openai parse(json_schema)": lambda: judge.root_async_client.chat.completions.parse(
                **body, response_format=Support
            ),
            "ChatOpenAI.ainvoke": lambda: judge.ainvoke(messages),
            "+ with_structured_output": lambda: structured_out.ainvoke(messages),
            "  (alt: with_structured_output(dict))": lambda: dict_out.ainvoke(messages),
            "  (alt: bind(response_format) + validate)": bound_call,
            "  (alt: bind(extra_body) + validate)": extra_call,
            "+ prompt, salvage (attribution_chain)": lambda: chain.ainvoke(
                {"passages": '<passage id="1">\nx\n</passage>', "claim": "x"}
            ),
            "+ retries, timeout, result (ascore)": lambda: metric.ascore(sample),
        }
        out = {}
        for name, call in steps.items():
            for _ in range(5):
                await call()
            cpu = time.process_time()
            for _ in range(count):
                await call()
            out[name] = (time.process_time() - cpu) / count * 1e3
    return out


async def _bare_run(base_url: str, count: int, concurrency: int) -> int:
    """The floor for any framework on ``ChatOpenAI``: the same requests (prompt formatted
    beforehand, response_format bound), ``concurrency`` at a time, no evaluation around them."""
    from ragrecall import Chunk
    from ragrecall.prompts import (
        PER_CLAIM_PROMPT,
        Passage,
        Support,
        render_passages,
        response_format,
    )

    model = openai_judge(base_url).bind(extra_body={"response_format": response_format(Support)})
    requests = []
    for row in rows(count):
        chunks = [Chunk(**c) for c in row["retrieved_contexts"]]
        passages = render_passages([Passage(n, c, c.text) for n, c in enumerate(chunks, 1)])
        requests.append(
            PER_CLAIM_PROMPT.format_messages(passages=passages, claim=row["reference_claims"][0])
        )
    gate = asyncio.Semaphore(concurrency)

    async def one(messages: Any) -> bool:
        async with gate:
            reply = await model.ainvoke(messages)
        return Support.model_validate_json(reply.content) is not None

    return sum(await asyncio.gather(*(one(m) for m in requests)))


# ---------------------------------------------------------------------------------------------
# RAGAS (optional)


async def _ragas_run(base_url: str, count: int, concurrency: int) -> int:
    from benchmarks.peers.peers import ragas_scores  # needs ragas (.venv-peers)

    scores, _ = await ragas_scores(base_url, "none", "fake", rows_for_ragas(count), concurrency)
    return sum(s is not None for s in scores)


def rows_for_ragas(count: int) -> list[dict[str, Any]]:
    return [
        {
            "user_input": r["user_input"],
            "reference": r["reference_claims"][0],
            "retrieved_contexts": [c["text"] for c in r["retrieved_contexts"]],
        }
        for r in rows(count)
    ]


def ragas_available() -> bool:
    from benchmarks.peers.peers import (
        available,  # sets the no-telemetry variables, shims ragas' imports
    )

    return available("ragas")


RUNS = {"ragrecall": _ragrecall_run, "ragas": _ragas_run, "chatopenai": _bare_run}


def runner(tool: str, http: str) -> Any:
    """The run of ``tool``; ``http`` picks ragrecall's client transport."""
    return partial(_ragrecall_run, http=http) if tool == "ragrecall" else RUNS[tool]


# ---------------------------------------------------------------------------------------------


def concurrency_run(
    tool: str,
    base_url: str,
    count: int,
    concurrency: int,
    delay: float,
    profile: bool,
    http: str = "httpx",
) -> dict[str, Any]:
    run = runner(tool, http)
    server_stats(base_url, reset=True)
    profiler = cProfile.Profile() if profile else None
    cpu = time.process_time()
    start = time.perf_counter()
    if profiler:
        profiler.enable()
    scored = asyncio.run(run(base_url, count, concurrency))
    if profiler:
        profiler.disable()
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    stats = server_stats(base_url)
    ideal = stats["requests"] * delay / concurrency
    if tool == "ragrecall" and http != "httpx":
        tool += f" ({http})"
    out = {
        "tool": tool,
        "concurrency": concurrency,
        "samples": count,
        "scored": scored,
        "requests": stats["requests"],
        "max_in_flight": stats["max_in_flight"],
        "connections": stats["connections"],
        "seconds": seconds,
        "ideal_s": ideal,
        "efficiency": ideal / seconds,
        "client_cpu_s": cpu,
        "client_cpu_ms_per_call": cpu / max(stats["requests"], 1) * 1e3,
        # the best a client that needs that much CPU per call can do on one core
        "cpu_bound_efficiency": min(1.0, ideal / cpu) if cpu else None,
    }
    if profiler:
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(25)
        out["profile_tottime"] = text.getvalue()
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(40)
        out["profile_cumulative"] = text.getvalue()
    return out


def print_run(r: dict[str, Any]) -> None:
    print(
        f"{r['tool']:10s} {r['concurrency']:4d} {r['samples']:7d} {r['scored']:6d} "
        f"{r['max_in_flight']:13d} {r['seconds']:7.2f} {r['ideal_s']:7.2f} "
        f"{r['efficiency']:10.1%} {r['client_cpu_ms_per_call']:18.2f} "
        f"{r['cpu_bound_efficiency']:17.1%}",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fake-samples", type=int, default=2000)
    parser.add_argument(
        "--samples", type=int, default=1000, help="samples per concurrency run (0: skip those runs)"
    )
    parser.add_argument("--serial-samples", type=int, default=50, help="samples at concurrency 1")
    parser.add_argument("--delay", type=float, default=0.2, help="server delay, seconds")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32, 64])
    parser.add_argument("--tools", nargs="+", default=["ragrecall"], choices=list(RUNS))
    parser.add_argument(
        "--http",
        default="httpx",
        choices=["httpx", "aiohttp"],
        help="ragrecall's judge client transport (aiohttp: openai[aiohttp])",
    )
    parser.add_argument("--profile", type=int, metavar="C", help="cProfile ragrecall at C")
    parser.add_argument(
        "--breakdown",
        type=int,
        default=200,
        metavar="N",
        help="client CPU per call, layer by layer, over N calls (0: skip)",
    )
    parser.add_argument("--summary", type=Path, help="JSON summary")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.delay, idle_exit=120, lifetime=3600))
        return 0
    load = os.getloadavg()
    summary: dict[str, Any] = {
        "commit": commit(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "load_avg_start": load,
        "args": {k: str(v) for k, v in vars(args).items()},
    }
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, {os.cpu_count()} CPUs")
    if args.fake_samples:
        summary["overhead"] = o = overhead(args.fake_samples)
        print(
            f"overhead (fake judge, ragrecall.evaluate): {o['samples']} samples in "
            f"{o['seconds']:.2f} s = {o['samples_per_s']:.0f} samples/s, "
            f"{o['us_per_sample']:.0f} us/sample ({o['cpu_us_per_sample']:.0f} us CPU), "
            f"{o['us_per_call']:.0f} us/call "
            f"= {o['us_per_call'] / (args.delay * 1e6):.2%} of a {args.delay * 1e3:.0f} ms call"
        )
    tools = [t for t in args.tools if t != "ragas" or ragas_available()]
    if "ragas" in args.tools and "ragas" not in tools:
        print("ragas: skipped (not installed; run with .venv-peers/bin/python)")
    runs: list[dict[str, Any]] = []
    if args.breakdown:
        with delayed_server(0.0) as base_url:
            summary["cpu_ms_per_call"] = layers = asyncio.run(breakdown(base_url, args.breakdown))
        print(f"client CPU per call, one at a time, zero-delay server ({args.breakdown} calls):")
        for name, ms in layers.items():
            print(f"  {name:40s} {ms:6.2f} ms")
    if not args.samples:
        tools = []
    server = delayed_server(args.delay) if tools else contextlib.nullcontext("")
    with server as base_url:
        if tools:
            print(
                f"{'tool':10s} {'conc':>4s} {'samples':>7s} {'scored':>6s} "
                f"{'max in flight':>13s} "
                f"{'wall s':>7s} {'ideal s':>7s} {'efficiency':>10s} "
                f"{'client CPU ms/call':>18s} {'CPU-bound ceiling':>17s}"
            )
        for tool in tools:
            # warm up the same path: imports, schemas, first connections
            asyncio.run(runner(tool, args.http)(base_url, 10, 2))
            for conc in args.concurrency:
                count = args.serial_samples if conc == 1 else args.samples
                runs.append(
                    concurrency_run(tool, base_url, count, conc, args.delay, False, args.http)
                )
                print_run(runs[-1])
        if args.profile:  # a separate run: the profiler doubles the client's CPU time
            runs.append(
                concurrency_run(
                    "ragrecall", base_url, args.samples, args.profile, args.delay, True, args.http
                )
            )
            print("profiled:")
            print_run(runs[-1])
    summary["concurrency"] = [
        {k: v for k, v in r.items() if not k.startswith("profile")}
        for r in runs
        if "profile_tottime" not in r
    ]
    summary["load_avg_end"] = os.getloadavg()
    for r in runs:
        if "profile_tottime" in r:
            print(f"\ncProfile, ragrecall at concurrency {r['concurrency']} (by own time):")
            print(r["profile_tottime"])
            print("(by cumulative time):")
            print(r["profile_cumulative"])
    load = summary["load_avg_end"]
    print(f"load average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    write_json(args.summary, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
