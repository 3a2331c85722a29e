"""Traces as a dataset: retriever spans joined with references, one sample per trace and
reference; a reference no retrieval answered is *not assessed*, never scored 0.

One concern over 300 lines: the join of retriever spans with references, both ways (samples
in, scores written back).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, TypeAlias

from pydantic import BaseModel, Field

from ragrecall._core.errors import SampleError
from ragrecall._core.schemas import Chunk, RecallResult, Sample
from ragrecall._io.references import ReferenceBook, error_type

from ..safe import loads, regular_file
from ..samples import iter_rows, load_samples
from .explain import RETRIEVAL_QUERY, RETRIEVAL_STEP, claim_metadata, explanation
from .langsmith import is_run, run_spans
from .otlp import Evaluation, OtlpFile, read_otlp
from .spans import Document, Retrieval, Span, retrievals

__all__ = ["NotAssessed", "TracedSamples", "load_traces"]

Contents: TypeAlias = Mapping[str, str] | str | os.PathLike[str]


class Report(Protocol):
    """A run's results per metric, one per sample (an ``EvaluationReport``)."""

    @property
    def samples(self) -> Sequence[Sample]: ...

    @property
    def results(self) -> Mapping[str, Sequence[RecallResult]]: ...


Results: TypeAlias = Report | Sequence[Mapping[str, RecallResult] | None]


class NotAssessed(BaseModel):
    """A reference that no retriever span answered: left out of the scores, not scored 0."""

    question: str | None
    sample_id: str | None = None
    reason: str = Field(description="Why no sample was built for it.")


class TracedSamples:
    """What ``load_traces`` read: ``samples`` to score (``evaluate(traced.samples, ...)``),
    the references ``not_assessed``, the queries of retrievals that matched no reference
    (``unmatched``), and ``notes`` on what the spans lacked (ids, content)."""

    def __init__(
        self,
        samples: list[Sample],
        not_assessed: list[NotAssessed],
        unmatched: list[str],
        notes: list[str],
        spans: list[list[tuple[str, str]]],
        otlp: OtlpFile | None,
    ):
        self.samples = samples
        self.not_assessed = not_assessed
        self.unmatched = unmatched
        self.notes = notes
        self._spans = spans
        self._otlp = otlp

    def write_scores(self, path: str | os.PathLike[str], results: Results) -> int:
        """Write the traces again to ``path`` (OTLP JSON) with each sample's results on the
        retriever spans it was read from: OpenInference ``evaluations.{i}.evaluation.{name,
        score,label,explanation,annotator_kind}`` attributes and an OTel GenAI
        ``gen_ai.evaluation.result`` event per metric (with ``error.type`` where the result
        is unscorable: ``ragrecall.adapters.error_type``). ``results``: an ``EvaluationReport``
        of ``samples``, or one ``{metric: result}`` (or None) per sample. Returns the number
        of spans annotated."""
        if self._otlp is None:
            raise ValueError("write_scores writes OTLP JSON; these traces are a LangSmith export")
        return self._otlp.write(Path(path), self.span_evaluations(results))

    def span_evaluations(self, results: Results) -> dict[tuple[str, str], list[Evaluation]]:
        """Each retriever span's results, by ``(trace_id, span_id)`` (a LangSmith export's
        run ids): per metric a dict of ``name``, ``score`` (None where unscorable), ``label``
        (``"unscorable"``, else None), ``explanation`` (``ragrecall.adapters.explanation``),
        ``annotator_kind`` (``"LLM"`` or ``"CODE"``), ``error_type`` (unscorable only) and
        ``verdicts`` (``claim_metadata``: claim, supported, chunk_ids, evidence, p_supported;
        step and query where the sample came from several retrieval steps), as
        ``write_scores`` writes them and a tracing tool's annotations take them.
        ``results`` as for ``write_scores``."""
        rows: Sequence[Mapping[str, RecallResult] | None]
        if isinstance(results, Sequence):
            rows = results
        else:
            columns = results.results
            rows = [
                {name: columns[name][i] for name in columns} for i in range(len(results.samples))
            ]
        if len(rows) != len(self.samples):
            raise ValueError(f"{len(rows)} results for {len(self.samples)} samples")
        evaluations: dict[tuple[str, str], list[Evaluation]] = {}
        for row, spans, sample in zip(rows, self._spans, self.samples, strict=True):
            found = [_evaluation(name, result, sample) for name, result in (row or {}).items()]
            for span in spans if found else []:
                evaluations.setdefault(span, []).extend(found)
        return evaluations


def load_traces(
    traces: str | os.PathLike[str],
    references: Any,
    *,
    join_on: Literal["question"] | str = "question",
    contents: Contents | None = None,
    column_map: Mapping[str, str] | None = None,
) -> TracedSamples:
    """Samples from the retriever spans of a trace export, joined with their references.

    Args:
        traces: an OTLP JSON file (one request object, or one per line as the Collector's
            file exporter writes) or a LangSmith run export (JSON list or lines of runs).
        references: anything ``load_samples`` reads: rows with the question
            (``user_input``), ``reference`` and/or ``reference_ids``, and ``sample_id``.
        join_on: ``"question"``: a retrieval belongs to the reference whose question is the
            input of the retriever span or of a span above it (exact, else ignoring case and
            whitespace). Any other value names an attribute (on the retriever span or a span
            above it; a dotted name reads into JSON, e.g. ``metadata.sample_id``; for
            LangSmith runs any run field, e.g. ``reference_example_id``) whose value is the
            reference's ``sample_id``.
        contents: document id -> text (a mapping, or a .jsonl/.json/.csv file of ``id`` and
            ``text``) for documents whose span holds no content.
        column_map: renames the references' columns, as in ``load_samples``.

    All the retrievals of one trace for one reference make one sample (documents in order,
    each id once). Where there are several (an agent's steps), each chunk's metadata says
    which step first retrieved it: ``retrieval_step`` (1-based, in start order) and
    ``retrieval_query``, and the explanations written back say it for each supported claim.
    A reference with no retrieval is in ``not_assessed``.
    """
    path = Path(traces)
    spans, otlp = _read(path)
    refs = load_samples(references, column_map)
    if not refs:
        raise SampleError("no references to join the traces with")
    match = _by_question(refs) if join_on == "question" else _by_attribute(refs, join_on)
    texts = _contents(contents)
    groups: dict[tuple[str, int], list[Retrieval]] = {}
    unmatched: list[str] = []
    for found in retrievals(spans):
        index = match(found)
        if index is None:
            unmatched.append(found.span.input or "")
        else:
            groups.setdefault((found.span.trace, index), []).append(found)
    samples, where = [], []
    missing = {"id": 0, "text": 0}
    for (_, index), group in groups.items():
        samples.append(_sample(refs[index], group, texts, missing))
        where.append([(r.span.trace, r.span.id) for r in group])
    assessed = {index for _, index in groups}
    how = "by question" if join_on == "question" else f"by {join_on}"
    not_assessed = [
        NotAssessed(
            question=ref.user_input,
            sample_id=ref.sample_id,
            reason=f"no retriever span in {path.name} matched it ({how})",
        )
        for i, ref in enumerate(refs)
        if i not in assessed
    ]
    notes = []
    if missing["id"]:
        notes.append(
            f"{missing['id']} retrieved documents have no id; their chunks are numbered by "
            "rank, which id-based recall cannot match"
        )
    if missing["text"]:
        notes.append(
            f"{missing['text']} retrieved documents have no content in the spans"
            + (" or in contents" if contents is not None else "")
            + "; metrics that read text see them as empty (give contents: id -> text)"
        )
    return TracedSamples(samples, not_assessed, unmatched, notes, where, otlp)


def _read(path: Path) -> tuple[list[Span], OtlpFile | None]:
    values, jsonl = _json_values(path)
    if values and isinstance(values[0], Mapping) and "resourceSpans" in values[0]:
        otlp = read_otlp(path, values, jsonl)
        return list(otlp.spans()), otlp
    if len(values) == 1 and isinstance(values[0], Mapping) and "runs" in values[0]:
        values = values[0]["runs"]  # the API's runs query reply
    if not values or not isinstance(values, list) or not all(is_run(v) for v in values):
        raise SampleError(
            f"{path}: neither OTLP JSON traces (resourceSpans) nor LangSmith runs (id, run_type)"
        )
    return list(run_spans(values, path)), None


def _json_values(path: Path) -> tuple[list[Any], bool]:
    """The file's JSON values: one value (a list is its items), or one per line (then
    ``True``)."""
    if not path.exists():
        raise SampleError(f"{path}: no such file")
    regular_file(path, "trace file")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise SampleError(f"not UTF-8 (at byte {err.start}): {err.reason}", file=str(path)) from err
    try:
        value = loads(text)
    except json.JSONDecodeError:
        values = []
        for number, line in enumerate(text.split("\n"), start=1):  # not splitlines: U+2028
            if line.strip():
                try:
                    values.append(loads(line))
                except json.JSONDecodeError as err:
                    raise SampleError(f"{path}:{number}: invalid JSON: {err}") from err
        return values, True
    return (value if isinstance(value, list) else [value]), False


def _by_question(refs: Sequence[Sample]) -> Any:
    book = ReferenceBook({ref.user_input: i for i, ref in enumerate(refs) if ref.user_input})

    def match(found: Retrieval) -> int | None:
        for span in [found.span, *found.ancestors]:
            if span.input:
                index = book.find(span.input)
                if index is not None:
                    return int(index)
        return None

    return match


def _by_attribute(refs: Sequence[Sample], name: str) -> Any:
    ids = {ref.sample_id: i for i, ref in enumerate(refs) if ref.sample_id is not None}
    if not ids:
        raise SampleError(
            f"join_on={name!r} matches the references' sample_id, but none has one "
            "(name the id column with --id-column or column_map)"
        )

    def match(found: Retrieval) -> int | None:
        value = found.attribute(name)
        return None if value is None else ids.get(str(value))

    return match


def _contents(contents: Contents | None) -> Mapping[str, str]:
    if contents is None or isinstance(contents, Mapping):
        return contents or {}
    texts = {}
    for i, row in enumerate(iter_rows(Path(contents))):
        text = next((row[k] for k in ("text", "page_content", "content") if k in row), None)
        if "id" not in row or not isinstance(text, str):
            raise SampleError(f"{contents}: expected an id and a text", row=i)
        texts[str(row["id"])] = text
    return texts


def _sample(
    ref: Sample, group: Sequence[Retrieval], texts: Mapping[str, str], missing: dict[str, int]
) -> Sample:
    chunks: dict[str, Chunk] = {}
    for step, found in enumerate(group, start=1):
        # an agent's several steps: each chunk says which first retrieved it, and its query
        at = {RETRIEVAL_STEP: step, RETRIEVAL_QUERY: found.span.input} if len(group) > 1 else {}
        for doc in found.documents:
            chunk = _chunk(doc, len(chunks) + 1, texts, missing, at)
            chunks.setdefault(chunk.id, chunk)
    fields = ref.model_dump(exclude_unset=True)
    fields["retrieved_contexts"] = list(chunks.values())
    root = group[0].root
    if ref.response is None and root is not group[0].span and root.output:
        fields["response"] = root.output
    return Sample(**fields)


def _chunk(
    doc: Document,
    rank: int,
    texts: Mapping[str, str],
    missing: dict[str, int],
    at: Mapping[str, Any],
) -> Chunk:
    text = doc.text if doc.text is not None else texts.get(doc.id or "")
    missing["id"] += doc.id is None
    missing["text"] += text is None
    return Chunk(
        id=doc.id or str(rank),
        text=text or "",
        score=doc.score,
        rank=rank,
        metadata={**doc.metadata, **{k: v for k, v in at.items() if v is not None}},
    )


def _evaluation(name: str, result: RecallResult, sample: Sample) -> Evaluation:
    return {
        "name": name,
        "score": None if result.score is None else float(result.score),
        "label": "unscorable" if result.status == "unscorable" else None,
        "explanation": explanation(result, sample),
        "annotator_kind": "LLM" if result.judge is not None else "CODE",
        "error_type": error_type(result),
        "verdicts": claim_metadata(result, sample),
    }
