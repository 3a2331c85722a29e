"""Sentence splitting is safe from many threads at once (MLflow and the RecallLogger score on
worker threads): pysbd keeps the text it splits on the Segmenter, so a shared one lost
sentences (a reference read as empty: "no claims")."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from ragrecall import split_sentences


def test_threads_splitting_at_once_each_get_their_own_texts_sentences() -> None:
    texts = [f"Cat {i} purrs. Dog {i} barks." if i % 2 else f"Only {i} here." for i in range(800)]
    with ThreadPoolExecutor(8) as pool:
        split = list(pool.map(split_sentences, texts))
    expected = [
        [f"Cat {i} purrs.", f"Dog {i} barks."] if i % 2 else [t] for i, t in enumerate(texts)
    ]
    assert split == expected
