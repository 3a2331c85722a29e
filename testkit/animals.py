"""A small dataset whose people's answer is known, for the review and labels tests: each
sample's reference has a "Cats", a "Dogs" and a "Birds" claim; its chunks hold the "Cats" fact
always, the "Dogs" fact unless the sample's number is a multiple of 3, "Birds" never."""

from __future__ import annotations

from typing import Any


def truth(claim: str, sample_id: str) -> bool:
    """A person's answer for a claim of sample ``sample_id`` (``s<n>``) of ``rows``."""
    n = int(sample_id[1:])
    return claim.startswith("Cats") or (claim.startswith("Dogs") and n % 3 != 0)


def rows(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        chunks = [f"Cats purr {i} loudly."]
        if i % 3:
            chunks.append(f"Dogs bark {i + 3} at night.")
        out.append(
            {
                "sample_id": f"s{i}",
                "question": f"What do animals do ({i})?",
                "ground_truth": f"Cats purr {i}. Dogs bark {i + 3}. Birds sing {i + 7}.",
                "contexts": chunks,
            }
        )
    return out
