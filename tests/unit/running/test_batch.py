"""Batch mode (``evaluate_batch``, now ``evaluate(engine=BatchEngine(...))``, and ``eval
--engine batch``) against a server that speaks OpenAI's Files and Batches API
(``batchserver.BatchServer``: the keyword judge of ``fakes`` answers each request; expired,
rejected and partly failed batches are scripted).

The online reference is ``evaluate()`` against ``faultserver.FaultServer``, which answers a
chat completion exactly as the batch server answers a batch line.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from batch_samples import REFERENCES, N, chat, metric, rows
from batchserver import BatchServer
from faultserver import FaultServer

from ragrecall import ClaimCache, ContextRecall, RecallResult, evaluate, evaluate_batch

# The provider's Batch API client (private): uploads, polls, results and errors on a fake server.
from ragrecall._running.engines.batch.api import BatchAPI, ProviderError
from ragrecall.cli import main

VOLATILE = {"usage", "judge", "elapsed_s"}


def run_batch(server: BatchServer, data: list[dict[str, Any]], out: Path, **kw: Any) -> Any:
    return evaluate_batch(data, [metric], judge=chat(server.url), out=out, poll_interval=0, **kw)


def stable(result: RecallResult) -> dict[str, Any]:
    return result.model_dump(exclude=VOLATILE)


def lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_same_results_as_evaluate_in_two_rounds(tmp_path: Path) -> None:
    data = rows()
    with FaultServer() as online:
        expected = evaluate(data, [metric(chat(online.url))], show_progress=False)
    with BatchServer() as server:
        report = run_batch(server, data, tmp_path / "out.jsonl")
        sizes = [b.lines for b in server.batches]
    got = report.results["context_recall"]
    assert [stable(r) for r in got] == [stable(r) for r in expected.results["context_recall"]]
    assert {r.status for r in got} == {"scored"}
    assert sizes == [REFERENCES, N]  # each reference decomposed once, then one verdict call each
    assert report.usage.calls == REFERENCES + N and report.usage.retries == 0
    written = lines(tmp_path / "out.jsonl")
    assert sorted(r["sample"]["sample_id"] for r in written) == sorted(f"s{i}" for i in range(N))


def test_expired_batches_and_failed_items_are_sent_again(tmp_path: Path) -> None:
    marked = range(0, N, 7)  # a question of their own: a decomposition of their own too
    data = rows(marker={i: "item_500" for i in marked})
    with BatchServer(expire={0, 2}) as server:
        report = run_batch(server, data, tmp_path / "out.jsonl")
        statuses = [b.status for b in server.batches]
        attempts = Counter(a.attempt for a in server.log)
    results = report.results["context_recall"]
    assert {r.status for r in results} == {"scored"}, [r.reason for r in results]
    assert statuses[0] == "expired" and "completed" in statuses
    assert attempts[1] > 0  # an item_500 was executed a second time
    # every request answered once, plus each attempt that failed (expired ones included)
    assert report.usage.retries > attempts[1]
    assert report.usage.calls == REFERENCES + len(marked) + N + report.usage.retries
    assert len(lines(tmp_path / "out.jsonl")) == N  # each sample once


def test_failures_that_last_end_unscorable_with_the_batch_reason(tmp_path: Path) -> None:
    data = rows(marker={1: "always_500", 2: "item_400"})
    with BatchServer() as server:
        report = run_batch(server, data, tmp_path / "out.jsonl")
        tries = Counter(a.key for a in server.log if a.fault == "always_500")
    results = report.results["context_recall"]
    assert results[1].status == "unscorable"
    assert "500" in results[1].reason and "given up after 4 attempts" in results[1].reason
    assert results[2].status == "unscorable" and "400" in results[2].reason
    assert "batch_" in results[1].reason  # names the batch it failed in
    assert max(tries.values()) == 4  # the first attempt and 3 more
    assert sum(r.status == "scored" for r in results) == N - 2
    assert len(lines(tmp_path / "out.jsonl")) == N


def test_a_rejected_batch_makes_its_samples_unscorable(tmp_path: Path) -> None:
    data = rows(10)
    with BatchServer(fail={0}) as server:
        report = run_batch(server, data, tmp_path / "out.jsonl")
        assert len(server.batches) == 1
    reasons = {r.reason for r in report.results["context_recall"]}
    assert len(reasons) == 1 and "failed" in reasons.pop()
    assert len(lines(tmp_path / "out.jsonl")) == 10


def test_an_interrupted_run_collects_its_batches_and_pays_nothing_twice(tmp_path: Path) -> None:
    data = rows()
    out = tmp_path / "out.jsonl"

    def interrupt(message: str) -> None:
        if "round 2" in message:
            raise KeyboardInterrupt

    with BatchServer() as server:
        with pytest.raises(KeyboardInterrupt):
            run_batch(server, data, out, notify=interrupt)
        assert len(server.batches) == 2 and not out.read_text()
        report = run_batch(server, data, out)
        sent_twice = [k for k, n in Counter(a.key for a in server.log).items() if n > 1]
        assert len(server.batches) == 2  # the running batch was polled, not sent again
    assert sent_twice == []
    assert {r.status for r in report.results["context_recall"]} == {"scored"}
    assert len(lines(out)) == N


def test_the_budget_stops_sending_and_a_run_again_goes_on(tmp_path: Path) -> None:
    data = rows()
    out = tmp_path / "out.jsonl"
    with BatchServer() as server:
        report = run_batch(server, data, out, max_calls=REFERENCES + 5)
        results = report.results["context_recall"]
        assert report.usage.calls <= REFERENCES + 5
        scored = sum(r.status == "scored" for r in results)
        assert scored >= 10  # 2 calls a sample (its reference's claims, its verdicts)
        assert {r.reason for r in results if r.status == "not_reached"} == {
            "not scored: the budget was spent before it"
        }
        assert len(lines(out)) == scored
        again = run_batch(server, data, out)
    assert report.usage.calls + again.usage.calls == REFERENCES + N  # nothing paid twice
    assert {r.status for r in again.results["context_recall"]} == {"scored"}
    assert len(lines(out)) == N


def test_max_calls_admits_samples_by_their_estimated_total_and_finishes_them(
    tmp_path: Path,
) -> None:
    """60 samples with a reference each (2 calls a sample: decomposition, then verdicts in
    the next round) and a budget of 50 calls: the samples admitted are those whose whole
    estimate fits, and each of them finishes (not 50 decompositions and no sample)."""
    data = [{**row, "reference": row["reference"] + f" Sample {i}."} for i, row in
            enumerate(rows())]  # fmt: skip
    out = tmp_path / "out.jsonl"
    with BatchServer() as server:
        report = run_batch(server, data, out, max_calls=50)
    results = report.results["context_recall"]
    scored = sum(r.status == "scored" for r in results)
    assert report.usage.calls <= 50
    assert scored >= 20
    assert report.usage.calls == 2 * scored  # every call sent went to a finished sample
    assert len(lines(out)) == scored


def test_a_torn_journal_line_is_a_batch_to_poll_again(tmp_path: Path) -> None:
    data = rows(10)
    out = tmp_path / "out.jsonl"
    with BatchServer() as server:
        run_batch(server, data, out)
        journal = tmp_path / "out.jsonl.batches.jsonl"
        text = journal.read_text()
        journal.write_text(text[: text.rindex('{"ended"')] + '{"ended": "ba')  # cut mid-line
        out.write_text("")  # as if the last samples were not written either
        report = run_batch(server, data, out)
        out.write_text("")
        again = run_batch(server, data, out)  # the torn tail was cut: the journal reads back
    assert {r.status for r in report.results["context_recall"]} == {"scored"}
    assert {r.status for r in again.results["context_recall"]} == {"scored"}


def write_jsonl(path: Path, data: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in data))
    return path


def test_cli_engine_batch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", rows(12))
    out = tmp_path / "out.jsonl"
    with BatchServer() as server:
        base = ["eval", str(data), "--engine", "batch", "--judge-url", server.url]
        base += ["--judge", "openai:keyword-judge", "--poll", "0"]
        assert main([*base, "--out", str(out), "--claims-store", str(tmp_path / "c.db")]) == 0
        printed = capsys.readouterr()
        assert "round 1" in printed.err and "round 2" in printed.err
        assert "PASS" in printed.out
        assert len(lines(out)) == 12
        assert main(base) == 2
        assert "needs --out" in capsys.readouterr().err
        assert main([*base, "--out", str(tmp_path / "o2.jsonl"), "--repeats", "2"]) == 2
    not_openai = ["eval", str(data), "--engine", "batch", "--out", str(tmp_path / "o3.jsonl")]
    not_openai += ["--judge", "anthropic:claude"]
    assert main(not_openai) == 2


def test_partial_metric_factories(tmp_path: Path) -> None:
    from ragrecall import ResponseRecall

    data = [{**r, "response": r["reference"].split(". ")[0] + "."} for r in rows(6)]
    deprecated = pytest.warns(DeprecationWarning, match="evaluate_batch is deprecated")
    with BatchServer() as server, deprecated:
        report = evaluate_batch(
            data,
            ["context_recall", partial(ResponseRecall, claims="sentences", cache=ClaimCache())],
            judge=chat(server.url),
            out=tmp_path / "out.jsonl",
            poll_interval=0,
        )
    assert set(report.results) == {"context_recall", "response_recall"}
    assert all(r.status == "scored" for rs in report.results.values() for r in rs)


def test_a_batch_cancelled_at_the_provider_ends_its_open_requests(tmp_path: Path) -> None:
    """Cancelling is the user's word: what was answered is kept, the rest is unscorable with
    the provider's reason (not sent again)."""
    data = rows(8)
    with BatchServer(polls_to_finish=4) as server:

        def cancel(message: str) -> None:
            if "round 2" in message:
                server.cancel(server.batches[-1])

        report = run_batch(server, data, tmp_path / "out.jsonl", notify=cancel)
        assert [b.status for b in server.batches] == ["completed", "cancelled"]
    reasons = {r.reason for r in report.results["context_recall"] if r.status == "unscorable"}
    assert reasons and all("batch_cancelled" in r for r in reasons)
    assert len(lines(tmp_path / "out.jsonl")) == 8


def test_requests_that_change_at_every_replay_stop_the_run(tmp_path: Path) -> None:
    """A prompt with a fresh nonce at each rendering is never answered by its batch: the run
    stops after max_rounds with a message saying why, instead of sending batches forever."""
    from langchain_core.prompts import ChatPromptTemplate

    from ragrecall.prompts import DECOMPOSE_PROMPT

    messages = [("system", "Nonce {nonce}."), *DECOMPOSE_PROMPT.messages]
    nonce = ChatPromptTemplate.from_messages(messages).partial(nonce=lambda: uuid.uuid4().hex)

    def restless(judge: Any) -> ContextRecall:
        return ContextRecall(judge, strategy="batched", cache=ClaimCache(), decompose_prompt=nonce)

    with BatchServer(polls_to_finish=1) as server, pytest.raises(RuntimeError, match="30 rounds"):
        evaluate_batch(
            rows(2), [restless], judge=chat(server.url), out=tmp_path / "o.jsonl", poll_interval=0
        )


# -- no orphaned batch (issue 32, item 2) ------------------------------------------------


def stop_at_create(after: bool, times: int = 1) -> Any:
    """A ``BatchAPI.create`` that stops the run (as a kill would) at its first ``times``
    calls: after the provider created the batch (``after``) or before the call."""
    original = BatchAPI.create
    calls = {"n": 0}

    def create(self: BatchAPI, file_id: str, metadata: Any) -> str:
        calls["n"] += 1
        if calls["n"] <= times and not after:
            raise KeyboardInterrupt
        batch = original(self, file_id, metadata)
        if calls["n"] <= times:
            raise KeyboardInterrupt
        return batch

    return create


def journal_lines(out: Path) -> list[dict[str, Any]]:
    return lines(out.with_name(out.name + ".batches.jsonl"))


def test_a_batch_created_before_a_stop_is_adopted_not_sent_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped after the provider created round 1's batch and before its id was journaled:
    the run started again finds it by its tags (this run, the digest of its requests), polls
    it and uses its answers; nothing is sent twice."""
    data = rows()
    out = tmp_path / "out.jsonl"
    said: list[str] = []
    with BatchServer() as server:
        with monkeypatch.context() as patch:
            patch.setattr(BatchAPI, "create", stop_at_create(after=True))
            with pytest.raises(KeyboardInterrupt):
                run_batch(server, data, out)
        assert len(server.batches) == 1
        journal = journal_lines(out)
        assert not any("sent" in line for line in journal)  # the id never reached the journal
        (intent,) = [line for line in journal if "intent" in line]
        run = journal[0]["run"]
        tags = server.batches[0].obj["metadata"]
        assert tags["ragrecall_run"] == run and tags["ragrecall_digest"] == intent["digest"]
        report = run_batch(server, data, out, notify=said.append)
        executed = Counter(a.key for a in server.log)
        assert len(server.batches) == 2  # round 1's batch adopted, round 2's sent
        assert server.cancels == []
    assert max(executed.values()) == 1
    assert any("adopted" in s for s in said)
    assert {r.status for r in report.results["context_recall"]} == {"scored"}
    assert report.usage.calls == REFERENCES + N
    assert len(lines(out)) == N


def test_duplicates_with_this_runs_tags_are_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two batches at the provider carry the run's tags and the intent's digest (a create the
    provider answered twice): one is adopted, the other cancelled, nothing runs twice."""
    import openai

    data = rows(12)
    out = tmp_path / "out.jsonl"
    said: list[str] = []
    with BatchServer() as server:
        with monkeypatch.context() as patch:
            patch.setattr(BatchAPI, "create", stop_at_create(after=True))
            with pytest.raises(KeyboardInterrupt):
                run_batch(server, data, out)
        first = server.batches[0].obj
        client = openai.OpenAI(base_url=server.url, api_key="test")
        twin = client.batches.create(
            input_file_id=first["input_file_id"],
            endpoint="/v1/chat/completions",
            completion_window="24h",
            metadata=first["metadata"],
        )
        other_run = client.batches.create(  # another run's batch: left alone
            input_file_id=first["input_file_id"],
            endpoint="/v1/chat/completions",
            completion_window="24h",
            metadata={**first["metadata"], "ragrecall_run": "someone-else"},
        )
        report = run_batch(server, data, out, notify=said.append)
        executed = Counter(a.key for a in server.log)
        assert server.cancels == [twin.id]
        assert server.batch(twin.id).status in ("cancelling", "cancelled")  # type: ignore[union-attr]
        assert other_run.id not in server.cancels
    assert max(executed.values()) == 1
    assert any("duplicate" in s and twin.id in s for s in said)
    assert {r.status for r in report.results["context_recall"]} == {"scored"}


def test_an_intent_stopped_before_its_create_call_is_sent_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = rows(12)
    out = tmp_path / "out.jsonl"
    with BatchServer() as server:
        with monkeypatch.context() as patch:
            patch.setattr(BatchAPI, "create", stop_at_create(after=False))
            with pytest.raises(KeyboardInterrupt):
                run_batch(server, data, out)
        assert server.batches == []
        report = run_batch(server, data, out)
        assert len(server.batches) == 2
        assert server.listed == 2  # looked for it on starting, and for a late create at the end
    assert any("dropped" in line for line in journal_lines(out))
    assert {r.status for r in report.results["context_recall"]} == {"scored"}


def test_a_provider_that_cannot_list_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """404 on GET /v1/batches (no listing): the documented fallback, the requests sent again
    with a warning naming the run's tag. 401 (a key that may not list): a clear error (exit 2
    from the CLI) before anything is sent."""
    for status in (404, 401):
        out = tmp_path / f"out{status}.jsonl"
        data = rows(12)
        said: list[str] = []
        with BatchServer(list_status=status) as server:
            with monkeypatch.context() as patch:
                patch.setattr(BatchAPI, "create", stop_at_create(after=True))
                with pytest.raises(KeyboardInterrupt):
                    run_batch(server, data, out)
            run = journal_lines(out)[0]["run"]
            if status == 404:
                report = run_batch(server, data, out, notify=said.append)
                assert len(server.batches) == 3  # the orphan could not be found: sent again
                warning = next(s for s in said if "cannot list" in s)
                assert f"ragrecall_run={run}" in warning
                assert {r.status for r in report.results["context_recall"]} == {"scored"}
            else:
                with pytest.raises(ProviderError, match=r"401.*GET /batches"):
                    run_batch(server, data, out)
                assert len(server.batches) == 1


def test_a_server_without_the_batch_api_is_a_usage_error_not_a_bug(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A server without the Files API answers 404 to POST /files: exit 2 with the reason,
    not exit 5."""
    data = write_jsonl(tmp_path / "data.jsonl", rows(4))
    with BatchServer() as server:  # it serves /v1 only
        url = server.url.removesuffix("/v1") + "/v2"
        code = main(
            ["eval", str(data), "--engine", "batch", "--judge-url", url, "--judge",
             "openai:keyword-judge", "--poll", "0", "--out", str(tmp_path / "o.jsonl")]
        )  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "404" in err and "Files and Batches API" in err
