"""The local Files and Batches server (``batchserver``) through the real ``openai`` client:
every reply must parse strictly into the SDK's typed objects, and the scripted expiries,
failures, item errors and cancels must come out as the Batch API reference describes."""

from __future__ import annotations

import json
from typing import Any, Final

import openai
import pytest
from batchserver import BatchServer
from openai.types import Batch, FileObject
from openai.types.chat import ChatCompletion

ENDPOINT: Final = "/v1/chat/completions"
FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "claims",
        "schema": {"type": "object", "properties": {"claims": {"type": "array"}}},
    },
}


def request(custom_id: str, answer: str, marker: str = "") -> dict[str, Any]:
    question = f"What do animals do?{marker}"
    body = {
        "model": "judge",
        "messages": [
            {"role": "system", "content": "Split the answer into claims."},
            {"role": "user", "content": f"Question: {question}\nAnswer: {answer}"},
        ],
        "response_format": FORMAT,
    }
    return {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}


def jsonl(lines: list[dict[str, Any]]) -> bytes:
    # raw UTF-8 and CRLF endings: the multipart upload must carry bytes unchanged
    return "".join(json.dumps(line, ensure_ascii=False) + "\r\n" for line in lines).encode()


def connect(server: BatchServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key="x", max_retries=0)


def submit(client: openai.OpenAI, lines: list[dict[str, Any]], tail: bytes = b"") -> Batch:
    """Upload ``lines`` (and ``tail``, raw) and create a batch of them; replies checked."""
    data = jsonl(lines) + tail
    raw = client.files.with_raw_response.create(file=("requests.jsonl", data), purpose="batch")
    uploaded = FileObject.model_validate_json(raw.http_response.text)
    created = client.batches.with_raw_response.create(
        input_file_id=uploaded.id,
        endpoint=ENDPOINT,
        completion_window="24h",
        metadata={"run": "test"},
    )
    return Batch.model_validate_json(created.http_response.text)


def retrieve(client: openai.OpenAI, batch_id: str) -> Batch:
    """One poll, its reply validated strictly (the SDK itself parses leniently)."""
    raw = client.batches.with_raw_response.retrieve(batch_id)
    return Batch.model_validate_json(raw.http_response.text)


def poll(client: openai.OpenAI, batch_id: str) -> tuple[Batch, list[str]]:
    seen: list[str] = []
    for _ in range(10):
        batch = retrieve(client, batch_id)
        seen.append(batch.status)
        if batch.status in ("completed", "failed", "expired", "cancelled"):
            return batch, seen
    raise AssertionError(f"batch never ended: {seen}")


def lines_of(client: openai.OpenAI, file_id: str | None) -> dict[str, dict[str, Any]]:
    if file_id is None:
        return {}
    rows = [json.loads(line) for line in client.files.content(file_id).text.splitlines()]
    return {row["custom_id"]: row for row in rows}


def test_a_batch_runs_to_completion() -> None:
    with BatchServer() as server:
        client = connect(server)
        lines = [request("a", "Cats purr. Dogs bark."), request("b", "Éé ok.")]
        created = submit(client, lines)
        assert created.status == "validating" and created.metadata == {"run": "test"}
        batch, seen = poll(client, created.id)
        assert seen == ["in_progress", "completed"]
        assert batch.request_counts is not None
        assert batch.request_counts.model_dump() == {"total": 2, "completed": 2, "failed": 0}
        assert batch.error_file_id is None and batch.output_file_id is not None
        assert batch.in_progress_at and batch.finalizing_at and batch.completed_at
        assert batch.expires_at == batch.created_at + 24 * 3600
        assert batch.to_dict()["usage"]["total_tokens"] > 0  # typed only in newer SDKs

        output = lines_of(client, batch.output_file_id)
        assert set(output) == {"a", "b"}
        row = output["a"]
        assert row["error"] is None and row["response"]["status_code"] == 200
        assert row["id"].startswith("batch_req_") and row["response"]["request_id"]
        answer = ChatCompletion.model_validate(row["response"]["body"])
        content = answer.choices[0].message.content
        assert content is not None
        assert json.loads(content) == {"claims": ["Cats purr.", "Dogs bark."]}

        assert [b.id for b in client.batches.list()] == [batch.id]
        output_file = client.files.retrieve(batch.output_file_id)
        assert output_file.purpose == "batch_output"
        assert server.batches[0].lines == 2 and server.batches[0].status == "completed"
        assert server.completions == 2 and len(server.uploads) == 1

        # the upload came through the multipart form byte for byte
        uploaded = server.uploads[0]
        assert client.files.content(uploaded.id).content == uploaded.data
        assert uploaded.data == jsonl(lines) and uploaded.filename == "requests.jsonl"
        client.files.delete(uploaded.id)
        with pytest.raises(openai.NotFoundError) as missing:
            client.files.retrieve(uploaded.id)
        assert missing.value.body == {
            "message": f"No such File object: {uploaded.id}",
            "type": "invalid_request_error",
            "param": "id",
            "code": None,
        }


def test_an_expired_batch_answers_its_first_half() -> None:
    with BatchServer(expire={0}) as server:
        client = connect(server)
        created = submit(client, [request(f"r{i}", f"Claim {i}.") for i in range(4)])
        batch, seen = poll(client, created.id)
        assert seen == ["in_progress", "expired"] and batch.expired_at
        assert set(lines_of(client, batch.output_file_id)) == {"r0", "r1"}
        errors = lines_of(client, batch.error_file_id)
        assert set(errors) == {"r2", "r3"}
        assert errors["r2"]["response"] is None
        assert errors["r2"]["error"] == {
            "code": "batch_expired",
            "message": "This request could not be executed before the completion window expired.",
        }
        assert [a.custom_id for a in server.log] == ["r0", "r1"]


def test_failed_batches_report_errors_and_no_files() -> None:
    with BatchServer(fail={0}) as server:
        client = connect(server)
        scripted, _ = poll(client, submit(client, [request("a", "One.")]).id)
        assert scripted.status == "failed" and scripted.failed_at
        assert scripted.errors is not None and scripted.errors.data is not None
        assert [e.code for e in scripted.errors.data] == ["token_limit_exceeded"]

        bad = [request("a", "One."), request("a", "Two."), {**request("c", "3."), "url": "/x"}]
        created = submit(client, bad, tail=b"{not json\n")
        batch, seen = poll(client, created.id)
        assert seen == ["failed"]
        assert batch.errors is not None and batch.errors.object == "list"
        assert [(e.code, e.line) for e in batch.errors.data or []] == [
            ("duplicate_custom_id", 2),
            ("url_mismatch", 3),
            ("invalid_json_line", 4),
        ]
        assert batch.output_file_id is None and batch.error_file_id is None
        assert server.completions == 0


def test_an_item_500_fails_once_and_succeeds_when_sent_again() -> None:
    with BatchServer() as server:
        client = connect(server)
        flaky = request("flaky", "Cats purr.", " batch_fault=item_500")
        lines = [
            request("fine", "Dogs bark."),
            flaky,
            request("down", "Owls hoot.", " batch_fault=always_500"),
            request("bad", "Bees buzz.", " batch_fault=item_400"),
        ]
        first, _ = poll(client, submit(client, lines).id)
        assert first.status == "completed" and first.request_counts is not None
        assert (first.request_counts.completed, first.request_counts.failed) == (1, 3)
        errors = lines_of(client, first.error_file_id)
        assert {k: v["response"]["status_code"] for k, v in errors.items()} == {
            "flaky": 500,
            "down": 500,
            "bad": 400,
        }
        assert errors["flaky"]["error"] is None
        assert errors["flaky"]["response"]["body"]["error"]["type"] == "server_error"

        second, _ = poll(client, submit(client, [flaky, lines[2]]).id)
        assert set(lines_of(client, second.output_file_id)) == {"flaky"}
        assert set(lines_of(client, second.error_file_id)) == {"down"}
        assert server.attempts == {"fine": 1, "flaky": 2, "down": 2, "bad": 1}
        assert [b.lines for b in server.batches] == [4, 2]


def test_all_failed_means_no_output_file() -> None:
    with BatchServer() as server:
        client = connect(server)
        lines = [request("bad", "Bees buzz.", " batch_fault=item_400")]
        batch, _ = poll(client, submit(client, lines).id)
        assert batch.status == "completed"
        assert batch.output_file_id is None and batch.error_file_id is not None


def test_cancel_keeps_what_was_answered() -> None:
    with BatchServer(polls_to_finish=4) as server:
        client = connect(server)
        created = submit(client, [request(f"r{i}", f"Claim {i}.") for i in range(4)])
        assert retrieve(client, created.id).status == "in_progress"  # one of four answered
        cancelling = client.batches.cancel(created.id)
        assert cancelling.status == "cancelling" and cancelling.cancelling_at
        batch = retrieve(client, created.id)
        assert batch.status == "cancelled" and batch.cancelled_at
        assert set(lines_of(client, batch.output_file_id)) == {"r0"}
        errors = lines_of(client, batch.error_file_id)
        assert set(errors) == {"r1", "r2", "r3"}
        assert errors["r1"]["error"]["code"] == "batch_cancelled"
        with pytest.raises(openai.ConflictError):
            client.batches.cancel(created.id)


def test_finalizing_shows_when_there_are_enough_polls() -> None:
    with BatchServer(polls_to_finish=3) as server:
        client = connect(server)
        _, seen = poll(client, submit(client, [request("a", "One.")]).id)
        assert seen == ["in_progress", "finalizing", "completed"]


def test_unknown_ids_are_404s() -> None:
    with BatchServer() as server:
        client = connect(server)
        with pytest.raises(openai.NotFoundError):
            client.batches.retrieve("batch_nope")
        with pytest.raises(openai.NotFoundError):
            client.batches.create(
                input_file_id="file-nope", endpoint=ENDPOINT, completion_window="24h"
            )
        with pytest.raises(openai.BadRequestError, match="jsonl"):
            client.files.create(file=("requests.txt", b"{}"), purpose="batch")
