"""Contexts packed into the judge's window: chunks numbered 1..n and packed, in order, into
windows under a token budget (a chunk larger than a window cut into parts that keep its
number). Every metric that shows passages to the judge packs them here."""

from __future__ import annotations

from collections.abc import Sequence

from ragrecall._core.schemas import Chunk

from ..prompts import Passage

__all__ = ["RESERVED_TOKENS", "Window", "estimate_tokens", "pack"]

# Tokens kept free in each window for instructions, the claim(s) and the reply.
RESERVED_TOKENS = 600


Window = list[Passage]


def estimate_tokens(text: str) -> int:
    """A cautious token count (about 3 characters a token) that needs no tokenizer."""
    return len(text) // 3 + 1


def pack(chunks: Sequence[Chunk], window_tokens: int) -> list[Window]:
    """Number the chunks 1..n and pack them, in order, into windows under the token budget.

    A chunk larger than a window is cut into parts that keep its number.
    """
    budget = max(window_tokens - RESERVED_TOKENS, 200)
    windows: list[Window] = [[]]
    used = 0
    for number, chunk in enumerate(chunks, start=1):
        for part in _parts(chunk.text, budget):
            cost = estimate_tokens(part) + 12
            if windows[-1] and used + cost > budget:
                windows.append([])
                used = 0
            windows[-1].append(Passage(number, chunk, part))
            used += cost
    return [w for w in windows if w]


def _parts(text: str, budget: int) -> list[str]:
    size = budget * 3
    if len(text) <= size:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]
