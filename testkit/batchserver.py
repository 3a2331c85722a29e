"""OpenAI's Files and Batches endpoints on 127.0.0.1, for tests of batch judging (stdlib only).

It serves what the ``openai`` SDK's ``client.files`` and ``client.batches`` call, shaped as the
API reference describes (https://developers.openai.com/api/reference/resources/batches and the
Batch guide, https://platform.openai.com/docs/guides/batch):

- ``POST /v1/files`` (multipart: ``file``, ``purpose``), ``GET /v1/files[/{id}[/content]]``,
  ``DELETE /v1/files/{id}``;
- ``POST /v1/batches``, ``GET /v1/batches[/{id}]``, ``POST /v1/batches/{id}/cancel``.

A batch is created ``validating``; each ``GET /v1/batches/{id}`` moves it on: the first
validates the input file (a bad file, or a batch whose creation index is in ``fail``, ends
``failed`` with an ``errors`` list), then ``in_progress`` (with ``finalizing`` just before the
end when ``polls_to_finish`` >= 3), and on retrieval number ``polls_to_finish`` it ends
``completed``, or ``expired`` when its index is in ``expire`` (the first half of its requests
answered, the rest ``batch_expired``). Requests are answered a share per poll, so a
``cancel`` (``cancelling``, then ``cancelled`` on the next retrieval) leaves some answered and
the rest ``batch_cancelled``. Successful answers go to the output file, failures to the error
file; a file with nothing in it is not made (its id stays ``None``). With ``reorder`` (the
default) both files list their lines in reverse input order, since the reference promises no
order: a client must match lines by ``custom_id``.

``create_delay``: seconds the server waits, after creating a batch, before it answers the
create call (``on_create`` is called with the new batch first, from the server's thread):
a client killed in that window leaves a batch it never learnt the id of. ``list_status``:
answer ``GET /v1/batches`` with this HTTP error instead (404: a provider without listing;
401: a key that may not list). ``listed`` counts the list calls (pages), ``cancels`` the
batch ids a client asked to cancel. ``GET /v1/batches`` pages newest first with ``after``
and ``limit`` (default 20, at most 100). ``requests`` counts every HTTP request.

Each request is answered as ``faultserver`` answers a chat completion (the keyword judge of
``fakes``). A marker ``batch_fault=NAME`` in its messages scripts a failure: ``item_500`` (the
first attempt of that request body fails with a 500), ``always_500`` (every attempt does),
``item_400`` (a 400 every time). Attempts are counted per request body, across batches.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from email import policy
from email.parser import BytesParser
from typing import Any
from urllib.parse import parse_qs, urlsplit

from _http import Handler, LoopbackServer
from faultserver import completion

__all__ = ["ITEM_FAULTS", "Attempt", "BatchRecord", "BatchServer", "StoredFile"]

ITEM_FAULTS = ("item_500", "always_500", "item_400")

ENDPOINTS = (
    "/v1/responses",
    "/v1/chat/completions",
    "/v1/embeddings",
    "/v1/completions",
    "/v1/moderations",
    "/v1/images/generations",
    "/v1/images/edits",
    "/v1/videos",
)
PURPOSES = ("assistants", "batch", "fine-tune", "vision", "user_data", "evals")
TERMINAL = ("failed", "completed", "expired", "cancelled")
DAY = 24 * 3600

EXPIRED = "This request could not be executed before the completion window expired."
CANCELLED = "This request could not be executed before the batch was cancelled."

_MARKER = re.compile(r"\bbatch_fault=([a-z0-9_]+)")


def _id(prefix: str) -> str:
    return prefix + uuid.uuid4().hex[:24]


@dataclass
class StoredFile:
    """A file the server holds: an upload or a batch's output or error file."""

    id: str
    filename: str
    purpose: str
    data: bytes
    created_at: int

    def object(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.data),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "expires_at": self.created_at + 30 * DAY,
            "status_details": None,
        }


@dataclass(frozen=True)
class Attempt:
    """One request of a batch, as the server executed it."""

    batch: int  # the batch's creation index
    custom_id: str
    key: str  # hash of the request body: attempts are counted per key
    attempt: int  # 0 for the first time this body was executed
    fault: str | None  # the batch_fault marker it carried
    status_code: int


@dataclass
class BatchRecord:
    """A batch: ``obj`` is the Batch object as served, ``lines`` its input line count."""

    index: int  # creation order: 0, 1, 2, ...
    obj: dict[str, Any]
    lines: int
    requests: list[dict[str, Any]] = field(default_factory=list)  # the valid input lines
    problems: list[dict[str, Any]] = field(default_factory=list)  # validation errors
    polls: int = 0
    done: int = 0  # requests executed so far
    output: list[dict[str, Any]] = field(default_factory=list)  # output-file lines so far
    errors: list[dict[str, Any]] = field(default_factory=list)  # error-file lines so far

    @property
    def id(self) -> str:
        return str(self.obj["id"])

    @property
    def status(self) -> str:
        return str(self.obj["status"])


class BatchServer(LoopbackServer):
    """The server; use as a context manager. ``url`` is the OpenAI ``base_url``.

    What tests read: ``batches`` (every batch in creation order), ``uploads`` (every file
    uploaded, deleted ones too), ``files`` (the files held now, by id), ``log`` (every request
    executed), ``attempts`` (executions per ``custom_id``) and ``completions`` (chat
    completions answered with a 200).
    """

    def __init__(
        self,
        *,
        polls_to_finish: int = 2,
        expire: Collection[int] = (),
        fail: Collection[int] = (),
        reorder: bool = True,
        lifetime: float = 120.0,
        create_delay: float = 0.0,
        on_create: Callable[[BatchRecord], None] | None = None,
        list_status: int = 200,
    ):
        if polls_to_finish < 1:
            raise ValueError("polls_to_finish must be at least 1")
        self.polls_to_finish = polls_to_finish
        self.expire = frozenset(expire)
        self.fail = frozenset(fail)
        self.reorder = reorder
        self.create_delay = create_delay
        self.on_create = on_create
        self.list_status = list_status
        self.listed = 0
        self.requests = 0
        self.cancels: list[str] = []
        self.batches: list[BatchRecord] = []
        self.uploads: list[StoredFile] = []
        self.files: dict[str, StoredFile] = {}
        self.log: list[Attempt] = []
        self.attempts: Counter[str] = Counter()
        self.completions = 0
        self._tries: Counter[str] = Counter()
        self._lock = threading.Lock()
        super().__init__(_Handler, lifetime=lifetime, poll_interval=0.05)

    def batch(self, batch_id: str) -> BatchRecord | None:
        return next((b for b in self.batches if b.id == batch_id), None)

    # -- files --------------------------------------------------------------------------

    def upload(self, filename: str, purpose: str, data: bytes) -> StoredFile:
        with self._lock:
            stored = StoredFile(_id("file-"), filename, purpose, data, int(time.time()))
            self.files[stored.id] = stored
            self.uploads.append(stored)
            return stored

    def delete(self, file_id: str) -> None:
        with self._lock:
            self.files.pop(file_id, None)

    def _store(self, batch: BatchRecord, kind: str, lines: list[dict[str, Any]]) -> str | None:
        if not lines:
            return None
        ordered = lines[::-1] if self.reorder else lines
        data = "".join(json.dumps(line) + "\n" for line in ordered).encode()
        name = f"{batch.id}_{kind}.jsonl"
        stored = StoredFile(_id("file-"), name, "batch_output", data, int(time.time()))
        self.files[stored.id] = stored
        return stored.id

    # -- batches ------------------------------------------------------------------------

    def create(self, input_file: StoredFile, request: dict[str, Any]) -> BatchRecord:
        now = int(time.time())
        with self._lock:
            index = len(self.batches)
            obj: dict[str, Any] = {
                "id": _id("batch_"),
                "object": "batch",
                "endpoint": request["endpoint"],
                "model": None,
                "errors": None,
                "input_file_id": input_file.id,
                "completion_window": request["completion_window"],
                "status": "validating",
                "output_file_id": None,
                "error_file_id": None,
                "created_at": now,
                "in_progress_at": None,
                "expires_at": now + DAY,
                "finalizing_at": None,
                "completed_at": None,
                "failed_at": None,
                "expired_at": None,
                "cancelling_at": None,
                "cancelled_at": None,
                "request_counts": {"total": 0, "completed": 0, "failed": 0},
                "usage": None,
                "metadata": request.get("metadata"),
            }
            requests, problems, lines = _validate(input_file.data, request["endpoint"])
            record = BatchRecord(index, obj, lines, requests, problems)
            if requests:
                obj["model"] = requests[0]["body"].get("model")
            if index in self.fail and not problems:
                message = f"Enqueued token limit reached (batch {index} is scripted to fail)."
                record.problems = [_problem("token_limit_exceeded", message, None, None)]
            self.batches.append(record)
            return record

    def retrieve(self, batch: BatchRecord) -> None:
        """One retrieval: the batch moves on one step (see the module's docstring)."""
        with self._lock:
            self._advance(batch)

    def cancel(self, batch: BatchRecord) -> str | None:
        """Start cancelling; the reason it cannot be, if it cannot."""
        with self._lock:
            self.cancels.append(batch.id)
            if batch.status in (*TERMINAL, "cancelling"):
                return f"Cannot cancel a batch with status '{batch.status}'."
            batch.obj["status"] = "cancelling"
            batch.obj["cancelling_at"] = int(time.time())
            return None

    def _advance(self, batch: BatchRecord) -> None:
        obj, now = batch.obj, int(time.time())
        if batch.status in TERMINAL:
            return
        if batch.status == "cancelling":
            self._finish(batch, "cancelled", "cancelled_at", ("batch_cancelled", CANCELLED))
            return
        batch.polls += 1
        if batch.status == "validating":
            if batch.problems:
                obj.update(status="failed", failed_at=now)
                obj["errors"] = {"object": "list", "data": batch.problems}
                return
            obj.update(status="in_progress", in_progress_at=now)
            obj["request_counts"]["total"] = len(batch.requests)
        total, last = len(batch.requests), self.polls_to_finish
        expires = batch.index in self.expire
        if batch.polls >= last and expires:
            self._run(batch, total // 2)
            self._finish(batch, "expired", "expired_at", ("batch_expired", EXPIRED))
        elif batch.polls >= last:
            self._run(batch, total)
            obj["finalizing_at"] = obj["finalizing_at"] or now
            self._finish(batch, "completed", "completed_at")
        elif batch.polls == last - 1 and last >= 3 and not expires:
            self._run(batch, total)
            obj.update(status="finalizing", finalizing_at=now)
        else:
            share = total * batch.polls // last
            self._run(batch, min(share, total // 2) if expires else share)

    def _run(self, batch: BatchRecord, upto: int) -> None:
        while batch.done < upto:
            self._execute(batch, batch.requests[batch.done])
            batch.done += 1
        counts = batch.obj["request_counts"]
        counts["completed"], counts["failed"] = len(batch.output), len(batch.errors)

    def _finish(
        self, batch: BatchRecord, status: str, stamp: str, unrun: tuple[str, str] | None = None
    ) -> None:
        """End the batch; requests not run get an error line with ``unrun``'s code, message."""
        if unrun is not None:
            for request in batch.requests[batch.done :]:
                error = {"code": unrun[0], "message": unrun[1]}
                batch.errors.append(_line(request["custom_id"], None, error))
        counts = batch.obj["request_counts"]
        counts["total"] = len(batch.requests)
        counts["completed"], counts["failed"] = len(batch.output), len(batch.errors)
        batch.obj.update(
            status=status,
            output_file_id=self._store(batch, "output", batch.output),
            error_file_id=self._store(batch, "error", batch.errors),
        )
        batch.obj[stamp] = int(time.time())

    def _execute(self, batch: BatchRecord, request: dict[str, Any]) -> None:
        body, custom_id = request["body"], request["custom_id"]
        key = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]
        messages = body.get("messages") or []
        found = _MARKER.search(" ".join(str(m.get("content", "")) for m in messages))
        fault = found.group(1) if found else None
        attempt = self._tries[key]
        self._tries[key] += 1
        self.attempts[custom_id] += 1
        if fault == "always_500" or (fault == "item_500" and attempt == 0):
            status, reply = 500, _error_body("injected server error", "server_error")
        elif fault == "item_400":
            status, reply = 400, _error_body("injected invalid request", "invalid_request_error")
        elif fault is not None and fault not in ITEM_FAULTS:
            status = 400
            reply = _error_body(f"unknown batch_fault {fault!r}", "invalid_request_error")
        else:
            status, reply = 200, {**completion(body), "id": _id("chatcmpl-")}
            self.completions += 1
            self._count_usage(batch, reply["usage"])
        self.log.append(Attempt(batch.index, custom_id, key, attempt, fault, status))
        response = {"status_code": status, "request_id": _id("req_"), "body": reply}
        (batch.output if status == 200 else batch.errors).append(_line(custom_id, response, None))

    @staticmethod
    def _count_usage(batch: BatchRecord, usage: dict[str, int]) -> None:
        total = batch.obj["usage"] or {
            "input_tokens": 0,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 0,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 0,
        }
        total["input_tokens"] += usage["prompt_tokens"]
        total["output_tokens"] += usage["completion_tokens"]
        total["total_tokens"] += usage["total_tokens"]
        batch.obj["usage"] = total


def _line(custom_id: str, response: Any, error: Any) -> dict[str, Any]:
    return {"id": _id("batch_req_"), "custom_id": custom_id, "response": response, "error": error}


def _error_body(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _problem(code: str, message: str, param: str | None, line: int | None) -> dict[str, Any]:
    return {"code": code, "message": message, "param": param, "line": line}


def _validate(data: bytes, endpoint: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """The valid request lines, the problems (as a Batch's ``errors.data``), the line count."""
    requests: list[dict[str, Any]] = []
    problems: list[dict[str, Any]] = []
    seen: set[str] = set()
    models: dict[str, str] = {}  # the first line's model
    text = data.decode("utf-8", errors="replace")
    numbered = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not numbered:
        problems.append(_problem("empty_file", "The batch input file is empty.", None, None))
    for n, line in numbered:
        try:
            request = json.loads(line)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            message = "This line is not parseable as valid JSON."
            problems.append(_problem("invalid_json_line", message, None, n))
            continue
        custom_id, body = request.get("custom_id"), request.get("body")
        if not isinstance(custom_id, str) or not custom_id:
            message = "Missing required parameter: 'custom_id'."
            problems.append(_problem("missing_required_parameter", message, "custom_id", n))
        elif custom_id in seen:
            message = (
                "The custom_id for this request is a duplicate of another request. "
                "The custom_id parameter must be unique for each request in a batch."
            )
            problems.append(_problem("duplicate_custom_id", message, "custom_id", n))
        elif request.get("method") != "POST":
            message = "The method for this request must be 'POST'."
            problems.append(_problem("invalid_value", message, "method", n))
        elif request.get("url") != endpoint:
            message = "The provided URL for this request does not match the batch endpoint."
            problems.append(_problem("url_mismatch", message, "url", n))
        elif not isinstance(body, dict):
            message = "The body of this request must be a JSON object."
            problems.append(_problem("invalid_value", message, "body", n))
        else:
            model = models.setdefault("model", str(body.get("model")))
            if str(body.get("model")) != model:
                message = "The model for this request does not match the model of the batch."
                problems.append(_problem("model_mismatch", message, "body.model", n))
            else:
                requests.append(request)
        if isinstance(custom_id, str):
            seen.add(custom_id)
    return requests, problems, len(numbered)


def _page(items: list[dict[str, Any]], query: dict[str, list[str]]) -> dict[str, Any]:
    """A cursor page (newest first), as the list endpoints return it."""
    after = query.get("after", [""])[0]
    limit = min(100, max(1, int((query.get("limit") or ["20"])[0])))
    ids = [item["id"] for item in items]
    start = ids.index(after) + 1 if after in ids else 0
    data = items[start : start + limit]
    return {
        "object": "list",
        "data": data,
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
        "has_more": start + limit < len(items),
    }


class _Handler(Handler):
    def do_GET(self) -> None:
        self._route("GET")

    def do_POST(self) -> None:
        self._route("POST")

    def do_DELETE(self) -> None:
        self._route("DELETE")

    def _route(self, method: str) -> None:
        data = self._body()
        self.server.owner.requests += 1
        if not self.headers.get("Authorization", "").startswith("Bearer "):
            message = "You didn't provide an API key in an Authorization header (Bearer)."
            self._error(401, message, "invalid_request_error")
            return
        url = urlsplit(self.path)
        parts = url.path.strip("/").split("/")
        query = parse_qs(url.query)
        if parts[:1] != ["v1"]:
            self._error(404, f"Invalid URL ({method} {url.path})", "invalid_request_error")
            return
        route = (method, *parts[1:])
        match route:
            case ("POST", "files"):
                self._upload(data)
            case ("GET", "files"):
                owner = self.server.owner
                files = [f.object() for f in reversed(owner.files.values())]
                self._send(200, _page(files, query))
            case ("GET", "files", file_id) | ("GET", "files", file_id, "content"):
                stored = self._file(file_id)
                if stored is not None and route[-1] == "content":
                    self._send_raw(200, stored.data, "application/octet-stream")
                elif stored is not None:
                    self._send(200, stored.object())
            case ("DELETE", "files", file_id):
                if self._file(file_id) is not None:
                    self.server.owner.delete(file_id)
                    self._send(200, {"id": file_id, "object": "file", "deleted": True})
            case ("POST", "batches"):
                self._create(data)
            case ("GET", "batches"):
                owner = self.server.owner
                with owner._lock:
                    owner.listed += 1
                    batches = [dict(b.obj) for b in reversed(owner.batches)]
                if owner.list_status != 200:
                    message = f"Invalid URL (GET {url.path})"
                    kind = "invalid_request_error"
                    if owner.list_status in (401, 403):
                        message = "You have insufficient permissions for this operation."
                    self._error(owner.list_status, message, kind)
                else:
                    self._send(200, _page(batches, query))
            case ("GET", "batches", batch_id):
                batch = self._batch(batch_id)
                if batch is not None:
                    self.server.owner.retrieve(batch)
                    self._send(200, batch.obj)
            case ("POST", "batches", batch_id, "cancel"):
                batch = self._batch(batch_id)
                if batch is None:
                    return
                reason = self.server.owner.cancel(batch)
                if reason:
                    self._error(409, reason, "invalid_request_error")
                else:
                    self._send(200, batch.obj)
            case _:
                self._error(404, f"Invalid URL ({method} {url.path})", "invalid_request_error")

    def _upload(self, data: bytes) -> None:
        content_type = self.headers.get("Content-Type", "")
        if not content_type.startswith("multipart/form-data"):
            self._error(400, "Expected multipart/form-data.", "invalid_request_error")
            return
        head = f"Content-Type: {content_type}\r\n\r\n".encode()
        form = BytesParser(policy=policy.HTTP).parsebytes(head + data)
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in form.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            if isinstance(name, str) and isinstance(payload, bytes):
                fields[name] = (part.get_filename(), payload)
        for name in ("file", "purpose"):
            if name not in fields:
                message = f"Missing required parameter: '{name}'."
                self._error(400, message, "invalid_request_error", name)
                return
        filename, content = fields["file"]
        purpose = fields["purpose"][1].decode()
        if purpose not in PURPOSES:
            message = f"Invalid value for 'purpose': {purpose!r}."
            self._error(400, message, "invalid_request_error", "purpose")
        elif purpose == "batch" and not (filename or "").endswith(".jsonl"):
            message = "Invalid file format for Batch API. Must be .jsonl"
            self._error(400, message, "invalid_request_error", "file")
        else:
            stored = self.server.owner.upload(filename or "upload", purpose, content)
            self._send(200, stored.object())

    def _create(self, data: bytes) -> None:
        try:
            request = json.loads(data or b"{}")
        except ValueError:
            message = "We could not parse the JSON body of your request."
            self._error(400, message, "invalid_request_error")
            return
        for name in ("input_file_id", "endpoint", "completion_window"):
            if not request.get(name):
                message = f"Missing required parameter: '{name}'."
                self._error(400, message, "invalid_request_error", name)
                return
        metadata = request.get("metadata")
        if request["endpoint"] not in ENDPOINTS:
            message = f"Invalid value for 'endpoint': {request['endpoint']!r}."
            self._error(400, message, "invalid_request_error", "endpoint")
        elif request["completion_window"] != "24h":
            message = "Invalid value for 'completion_window': only '24h' is supported."
            self._error(400, message, "invalid_request_error", "completion_window")
        elif metadata is not None and not (
            isinstance(metadata, dict)
            and len(metadata) <= 16
            and all(isinstance(k, str) and len(k) <= 64 for k in metadata)
            and all(isinstance(v, str) and len(v) <= 512 for v in metadata.values())
        ):
            message = (
                "Invalid 'metadata': at most 16 keys of at most 64 characters, string values "
                "of at most 512."
            )
            self._error(400, message, "invalid_request_error", "metadata")
        elif (stored := self._file(request["input_file_id"])) is None:
            return
        elif stored.purpose != "batch":
            message = f"File {stored.id} was not uploaded with purpose 'batch'."
            self._error(400, message, "invalid_request_error", "input_file_id")
        else:
            owner = self.server.owner
            record = owner.create(stored, request)
            if owner.on_create is not None:
                owner.on_create(record)
            if owner.create_delay:
                owner.stopping.wait(owner.create_delay)
            self._send(200, record.obj)

    def _file(self, file_id: str) -> StoredFile | None:
        stored = self.server.owner.files.get(file_id)
        if stored is None:
            self._error(404, f"No such File object: {file_id}", "invalid_request_error", "id")
        return stored

    def _batch(self, batch_id: str) -> BatchRecord | None:
        batch = self.server.owner.batch(batch_id)
        if batch is None:
            self._error(404, f"No batch found with id '{batch_id}'.", "invalid_request_error", "id")
        return batch

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline().strip():  # trailers
                pass
            return b"".join(chunks)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _error(self, status: int, message: str, kind: str, param: str | None = None) -> None:
        body = _error_body(message, kind)
        body["error"]["param"] = param
        self._send(status, body)
