"""``HashingEmbeddings``: a tiny deterministic lexical embedding for offline tests (moved here
from langchain_ragrecall, which no longer exports a toy).

Bag of lower-cased words (and word bigrams), each hashed (blake2b) into one of ``dims``
buckets with a hashed sign, L2-normalised. No model, no network; texts sharing words are
close. Not a semantic embedding: use a real one in production.
"""

from __future__ import annotations

import hashlib
import math
import re
from itertools import pairwise

from langchain_core.embeddings import Embeddings

__all__ = ["HashingEmbeddings"]

_WORD = re.compile(r"[^\W_]+")
_STOPWORDS = (
    "a an and are as at be by did do does for from has have how in is it its of on or that the "
    "this to was were what when where which who why with"
)
_STOP = frozenset(_STOPWORDS.split())


class HashingEmbeddings(Embeddings):
    """Hashed bag-of-words vectors of ``dims`` dimensions (stop words left out)."""

    def __init__(self, dims: int = 256, bigrams: bool = True):
        if dims < 1:
            raise ValueError("dims must be positive")
        self.dims = dims
        self.bigrams = bigrams

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._embed(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._embed(text)

    def _embed(self, text: str) -> list[float]:
        words = [w for w in _WORD.findall(text.casefold()) if w not in _STOP]
        terms = words + ([f"{a} {b}" for a, b in pairwise(words)] if self.bigrams else [])
        vector = [0.0] * self.dims
        for term in terms:
            digest = hashlib.blake2b(term.encode(), digest_size=8).digest()
            number = int.from_bytes(digest, "little")
            vector[number % self.dims] += 1.0 if (number >> 63) & 1 else -1.0
        norm = math.sqrt(sum(x * x for x in vector))
        return [x / norm for x in vector] if norm else vector
