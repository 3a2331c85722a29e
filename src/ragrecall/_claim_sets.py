"""Claim sets on disk: ``ragrecall claims DATA --out claims.jsonl`` writes one line per task,
which a person may edit; ``ragrecall eval --claims claims.jsonl`` scores exactly those claims.

    {"key": "<Sample.key()>", "sample_id": null, "user_input": "...", "reference": "...",
     "claims": ["...", "..."], "claim_set": "<claim_set_hash(claims)>"}
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from ._errors import SampleError
from ._metrics.claims import clean_claims
from ._schemas import ClaimSet, Sample

__all__ = ["read_claim_sets", "with_claim_sets", "write_claim_sets"]


def write_claim_sets(path: Path, entries: Iterable[tuple[Sample, ClaimSet]]) -> int:
    """One line per (sample, claim set), a task each; returns the lines written."""
    written = 0
    with path.open("w", encoding="utf-8") as f:
        for sample, claim_set in entries:
            line = {
                "key": sample.key(),
                "sample_id": sample.sample_id,
                "user_input": sample.user_input,
                "reference": sample.reference,
                "claims": claim_set.claims,
                "claim_set": claim_set.claim_set,
            }
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
            written += 1
    return written


def read_claim_sets(path: Path) -> dict[str, list[str]]:
    """Claims by task key; an unreadable line raises SampleError naming file and line."""
    table: dict[str, list[str]] = {}
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
                key, claims = str(value["key"]), value["claims"]
            except (ValueError, KeyError, TypeError) as err:
                raise SampleError(f"{path}:{number}: not a claim set line: {err}") from err
            cleaned = clean_claims(claims if isinstance(claims, list) else [])
            if not cleaned and (value.get("reference") or "").strip():
                raise SampleError(f"{path}:{number}: 'claims' must be a non-empty list of text")
            table[key] = cleaned  # empty only for an empty reference: unscorable, as without
    return table


def with_claim_sets(
    samples: Sequence[Sample], table: dict[str, list[str]], source: Path
) -> list[Sample]:
    """The samples with their claims from ``table``; SampleError when any sample has none."""
    missing = [i for i, s in enumerate(samples) if s.key() not in table]
    if missing:
        shown = ", ".join(map(str, missing[:5])) + (", ..." if len(missing) > 5 else "")
        raise SampleError(
            f"{source} has no claim set for {len(missing)} of {len(samples)} samples (rows "
            f"{shown}); write it for this data with `ragrecall claims`"
        )
    return [s.model_copy(update={"reference_claims": table[s.key()]}) for s in samples]
