"""Claim sets on disk: ``ragrecall claims DATA --out claims.jsonl`` writes one line per task,
which a person may edit; ``ragrecall eval --claims claims.jsonl`` scores exactly those claims.

    {"key": "<Sample.key()>", "sample_id": null, "user_input": "...", "reference": "...",
     "claims": ["...", "..."], "claim_set": "<claim_set_hash(claims)>"}
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from ragrecall._core.errors import SampleError
from ragrecall._core.schemas import ClaimSet, Sample
from ragrecall._io.safe import lines, loads, regular_file

from .decompose import clean_claims

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
    """Claims by task key; an unreadable line, or a second line for one task with other
    claims, raises SampleError naming file and line."""
    table: dict[str, list[str]] = {}
    first: dict[str, int] = {}
    regular_file(path, "claims file")
    with path.open("rb") as f:
        for number, raw in lines(f, path):
            if not raw.strip():
                continue
            try:
                value = loads(raw.decode("utf-8-sig" if number == 1 else "utf-8"))
                key, claims = str(value["key"]), value["claims"]
                reference = value.get("reference")
            except (ValueError, KeyError, TypeError, AttributeError) as err:
                problem = f"missing {err}" if isinstance(err, KeyError) else str(err)
                raise SampleError(
                    f"not a claim set line: {problem}", file=str(path), line=number
                ) from err
            cleaned = clean_claims(claims if isinstance(claims, list) else [])
            if not cleaned and isinstance(reference, str) and reference.strip():
                raise SampleError(
                    "'claims' must be a non-empty list of text", file=str(path), line=number
                )
            if key in table and table[key] != cleaned:
                raise SampleError(
                    f"a second claim set for the task of line {first[key]} "
                    f"({_shown(value)}), with other claims: keep one of the two lines",
                    file=str(path),
                    line=number,
                )
            first.setdefault(key, number)
            table[key] = cleaned  # empty only for an empty reference: unscorable, as without
    return table


def _shown(value: dict[str, object]) -> str:
    for name in ("sample_id", "user_input", "reference"):
        if value.get(name):
            text = repr(value[name])
            return f"{name} {text if len(text) <= 50 else text[:47] + '...'}"
    return f"key {value['key']}"


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
