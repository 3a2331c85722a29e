"""A result in a host's words: the one explanation MLflow's rationale, Phoenix's annotations and
the traces' write-back carry, and the per-claim verdicts as plain fields for their metadata."""

from __future__ import annotations

from typing import Any

from ..._core.schemas import RecallResult

__all__ = ["claim_metadata", "explanation"]


def explanation(result: RecallResult) -> str:
    """``result`` in words: ``Unscorable: <reason>``, or the score (claims supported of how
    many), a note where the result has one, then one line per claim (supported: by which
    chunk, with what quote; missing: why), or per sub-question, chunk or relevant item for
    the metrics that have those instead."""
    if result.status == "unscorable":
        return f"Unscorable: {result.reason}"
    if result.claims:
        supported = len(result.claims) - len(result.missing)
        lines = [f"{supported} of {len(result.claims)} claims supported."]
    else:
        lines = [f"Score {result.score:.2f}." if result.score is not None else "No score."]
    if result.reason:
        lines.append(f"Note: {result.reason}")
    for v in result.verdicts:
        if v.attributed:
            quote = f': "{v.evidence}"' if v.evidence else ""
            lines.append(f"- supported: {v.claim} (chunk {', '.join(v.chunk_ids)}{quote})")
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


def claim_metadata(result: RecallResult) -> list[dict[str, Any]]:
    """One dict per claim verdict, JSON-ready: ``claim``, ``supported``, ``chunk_ids``,
    ``evidence`` (the checked quote, or None) and ``p_supported`` (None where the judge gave
    no probability)."""
    return [
        {
            "claim": v.claim,
            "supported": v.attributed,
            "chunk_ids": list(v.chunk_ids),
            "evidence": v.evidence,
            "p_supported": v.p_supported,
        }
        for v in result.verdicts
    ]


def _details(result: RecallResult, field: str) -> list[Any]:
    value = getattr(result, field, None)
    return list(value) if isinstance(value, list) else []


def _why(item: Any, verdict: str = "") -> str:
    """The item's reason, unless it only repeats the verdict."""
    reason = getattr(item, "reason", "")
    return f" ({reason})" if reason and reason != verdict else ""
