"""The real embedded judge: found as users find it (cache, else the chunk packages).

Slow (seconds per test on two cores): run with ``pytest -m judge``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from ragrecall.judges import DEFAULT_MODEL, LocalJudge

pytestmark = pytest.mark.judge

SYSTEM = (
    "You check a claim against numbered context chunks. The claim is supported only if a "
    "chunk states it. Answer in JSON: supported (true or false) and chunk (the number of the "
    "supporting chunk, or 0 if none supports it)."
)
CHUNKS = (
    "[1] Bananas are rich in potassium and grow in tropical regions.\n"
    "[2] The Eiffel Tower in Paris was completed in 1889 for the World's Fair.\n"
    "[3] Python was created by Guido van Rossum and first released in 1991."
)


class Verdict(BaseModel):
    supported: bool = Field(description="whether a chunk states the claim")
    chunk: int = Field(description="number of the supporting chunk, 0 if none")


def ask(claim: str) -> list[tuple[str, str]]:
    return [("system", SYSTEM), ("user", f"Chunks:\n{CHUNKS}\n\nClaim: {claim}")]


@pytest.fixture
def judge(local_judge: LocalJudge) -> LocalJudge:
    """The session's embedded judge (conftest.py), which these tests kill and restart."""
    return local_judge


def test_supported_and_unsupported_claims(judge: LocalJudge) -> None:
    structured = judge.with_structured_output(Verdict, include_raw=True)
    supported, unsupported = structured.batch(  # one per slot, in parallel
        [ask("The Eiffel Tower was finished in 1889."), ask("The Eiffel Tower is in Rome.")]
    )
    assert supported["parsed"] == Verdict(supported=True, chunk=2)
    assert unsupported["parsed"].supported is False
    raw = supported["raw"]
    assert raw.usage_metadata["input_tokens"] > 50
    assert raw.response_metadata["logprobs"]["content"][0]["top_logprobs"]
    assert judge._server.model is not None and judge._server.model.pinned
    assert judge.model_name == DEFAULT_MODEL.id


def test_listens_on_loopback_only(judge: LocalJudge) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("reads /proc/net")
    judge.invoke("Say OK.", max_tokens=2)
    port = judge._server.port
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            local, state = row.split()[1], row.split()[3]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                listening.append(local)
    assert listening == [f"0100007F:{port:04X}"]  # 127.0.0.1 only, no IPv6


def test_requests_need_the_key(judge: LocalJudge) -> None:
    judge.invoke("Say OK.", max_tokens=2)
    body = json.dumps({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1})
    for key in (None, "wrong"):
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(
            f"{judge._server.base_url}/chat/completions", body.encode(), headers
        )
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(request, timeout=30)
        assert err.value.code == 401


async def test_restarts_after_sigkill(judge: LocalJudge) -> None:
    await judge.ainvoke("Say OK.", max_tokens=2)
    proc = judge._server._proc
    assert proc is not None
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    out = await judge.with_structured_output(Verdict).ainvoke(ask("Python appeared in 1991."))
    assert out == Verdict(supported=True, chunk=3)
    assert judge._server.pid != proc.pid
