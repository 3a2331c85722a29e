"""Samples and a judge for the batch-mode tests: sample i answers reference i % 20 (20
distinct decompositions), against the keyword judge of ``batchserver`` / ``faultserver``."""

from __future__ import annotations

import uuid
from typing import Any

from langchain_openai import ChatOpenAI

from ragrecall import ClaimCache, ContextRecall

N = 60
REFERENCES = 20  # sample i answers reference i % 20: 20 distinct decompositions


def rows(n: int = N, marker: dict[int, str] | None = None) -> list[dict[str, Any]]:
    """Sample i: 2 claims, "Cats purr" always supported, "Birds sing" when i % 3; a marker
    ``batch_fault=...`` (in the question: every request of the sample carries it)."""
    tag = uuid.uuid4().hex[:8]
    out = []
    for i in range(n):
        r = i % REFERENCES
        fault = f" batch_fault={marker[i]}" if marker and i in marker else ""
        contexts = [f"Cats purr {tag} {r} loudly."]
        contexts.append(f"Birds sing {tag} {r} at dawn ({i})." if i % 3 else f"Nothing {i}.")
        out.append(
            {
                "question": f"What do animals do {tag} {r}?{fault}",
                "reference": f"Cats purr {tag} {r}. Birds sing {tag} {r}.",
                "contexts": contexts,
                "sample_id": f"s{i}",
            }
        )
    return out


def chat(url: str) -> ChatOpenAI:
    return ChatOpenAI(base_url=url, api_key="test", model="keyword-judge", max_retries=0)


def metric(judge: Any) -> ContextRecall:
    """A claim store of its own, so that each run decomposes what it needs."""
    return ContextRecall(judge, strategy="batched", cache=ClaimCache())
