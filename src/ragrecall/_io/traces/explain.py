"""A result in a host's words: the one explanation MLflow's rationale, Phoenix's annotations and
the traces' write-back carry, and the per-claim verdicts as plain fields for their metadata.

Given the sample, a supported claim of a sample joined from several retrieval steps (an
agent's trace) also says the step that first retrieved its evidence: ``load_traces`` records
each chunk's step and query in its metadata under ``RETRIEVAL_STEP`` and ``RETRIEVAL_QUERY``."""

from __future__ import annotations

from typing import Any

from ..._core.schemas import ClaimVerdict, RecallResult, Sample

__all__ = ["RETRIEVAL_QUERY", "RETRIEVAL_STEP", "claim_metadata", "explanation"]

RETRIEVAL_STEP = "retrieval_step"  # a chunk's metadata: the 1-based step that first retrieved it
RETRIEVAL_QUERY = "retrieval_query"  # and that step's query


def explanation(result: RecallResult, sample: Sample | None = None) -> str:
    """``result`` in words: ``Unscorable: <reason>``, or the score (claims supported of how
    many), a note where the result has one, then one line per claim (supported: by which
    chunk, with what quote, and, where ``sample`` came from several retrieval steps, at which
    step and query; missing: why), or per sub-question, chunk or relevant item for the
    metrics that have those instead."""
    if result.status == "unscorable":
        return f"Unscorable: {result.reason}"
    if result.claims:
        supported = len(result.claims) - len(result.missing)
        lines = [f"{supported} of {len(result.claims)} claims supported."]
    else:
        lines = [f"Score {result.score:.2f}." if result.score is not None else "No score."]
    if result.reason:
        lines.append(f"Note: {result.reason}")
    steps = _steps(sample)
    for v in result.verdicts:
        if v.attributed:
            quote = f': "{v.evidence}"' if v.evidence else ""
            step, query = _step(v, steps)
            where = "" if step is None else f", retrieved at step {step}"
            where += f' (query "{query}")' if step is not None and query else ""
            lines.append(f"- supported: {v.claim} (chunk {', '.join(v.chunk_ids)}{quote}){where}")
        else:
            lines.append(f"- missing: {v.claim} ({v.reason or 'no chunk supports it'})")
    for item in _details(result, "sub_questions"):
        found = "answered" if item.answerable else "not answered"
        where = f" by chunk {', '.join(item.chunk_ids)}" if item.chunk_ids else ""
        lines.append(f"- {found}{where}: {item.question}" + _why(item))
    for item in _details(result, "chunks"):
        verdict = "relevant" if item.relevant else "not relevant"
        if getattr(item, "reflected", None) is not None:
            verdict += ", reflected" if item.reflected else ", not reflected"
        lines.append(f"- chunk {item.chunk_id}: {verdict}" + _why(item, verdict))
    for item in _details(result, "items"):
        name = item.id or item.text or "?"
        found = f"retrieved at rank {item.rank}" if item.retrieved else "not retrieved"
        lines.append(f"- relevant {name}: {found}")
    return "\n".join(lines)


def claim_metadata(result: RecallResult, sample: Sample | None = None) -> list[dict[str, Any]]:
    """One dict per claim verdict, JSON-ready: ``claim``, ``supported``, ``chunk_ids``,
    ``evidence`` (the checked quote, or None) and ``p_supported`` (None where the judge gave
    no probability); where ``sample`` came from several retrieval steps, also ``step`` and
    ``query``: the earliest step that retrieved a chunk the claim cites, and its query (None
    for a claim not supported)."""
    steps = _steps(sample)
    rows = []
    for v in result.verdicts:
        row: dict[str, Any] = {
            "claim": v.claim,
            "supported": v.attributed,
            "chunk_ids": list(v.chunk_ids),
            "evidence": v.evidence,
            "p_supported": v.p_supported,
        }
        if steps:
            row["step"], row["query"] = _step(v, steps)
        rows.append(row)
    return rows


def _steps(sample: Sample | None) -> dict[str, tuple[int, str | None]]:
    """Each chunk id's retrieval step and query; empty unless the sample has steps."""
    chunks = sample.retrieved_contexts if sample is not None else []
    return {
        c.id: (c.metadata[RETRIEVAL_STEP], c.metadata.get(RETRIEVAL_QUERY))
        for c in chunks
        if isinstance(c.metadata.get(RETRIEVAL_STEP), int)
    }


def _step(
    verdict: ClaimVerdict, steps: dict[str, tuple[int, str | None]]
) -> tuple[int | None, str | None]:
    """The earliest step that retrieved a chunk a supported claim cites, and its query."""
    found = [steps[i] for i in verdict.chunk_ids if i in steps] if verdict.attributed else []
    return min(found, key=lambda s: s[0]) if found else (None, None)


def _details(result: RecallResult, field: str) -> list[Any]:
    value = getattr(result, field, None)
    return list(value) if isinstance(value, list) else []


def _why(item: Any, verdict: str = "") -> str:
    """The item's reason, unless it only repeats the verdict."""
    reason = getattr(item, "reason", "")
    return f" ({reason})" if reason and reason != verdict else ""
