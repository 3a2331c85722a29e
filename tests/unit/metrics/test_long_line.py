"""A one-line reference of megabytes is split in time linear in its length (issue 43, item
13): pysbd runs a regex substitution over the whole line for each abbreviation or list number
it finds in it, so one line of 0.2 MB took 38 s and one of 30 MB never ended. Longer texts go
to it in windows; the sentences come out as they did."""

from __future__ import annotations

import time

from ragrecall.text import split_sentences

NAMES = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
]


def sentence(i: int) -> str:
    return (
        f"The {NAMES[i % 10]} tower {i} stands near the {NAMES[(i * 7) % 10]} river in the valley."
    )


def test_a_long_line_is_split_in_linear_time_into_its_sentences() -> None:
    sentences = [sentence(i) for i in range(3000)]  # 192,000 characters on one line
    text = " ".join(sentences)
    started = time.perf_counter()
    split = split_sentences(text)
    took = time.perf_counter() - started
    assert split == sentences  # every window's seam falls between sentences, none lost
    assert took < 10, f"{took:.1f} s for {len(text):,} characters (about 1 s when linear)"


def test_nothing_is_lost_or_doubled_at_the_seams_between_windows() -> None:
    # abbreviations, prices, times and decimals near every seam between windows
    parts = [
        f"Dr. Smith paid $3.50 at 5 p.m. on Jan. {i % 28 + 1}. It rained {i}.5 mm."
        for i in range(300)
    ]
    text = " ".join(parts)
    split = split_sentences(text)
    assert " ".join(split) == text
    assert sum("It rained" in s for s in split) == 300 and len(split) >= 300


def test_a_run_on_sentence_of_many_thousand_characters_is_cut_at_spaces() -> None:
    text = " ".join(["word"] * 20_000)  # 100,000 characters, no sentence end
    split = split_sentences(text)
    assert " ".join(split) == text  # nothing lost, cut only at spaces
    assert all(len(s) <= 4_000 for s in split) and len(split) > 1
