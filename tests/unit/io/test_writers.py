"""Files written by the real writers users have (pandas, Hugging Face ``datasets``, RAGAS)
load as the samples written: each one, in order, none merged or dropped, list cells (empty
ones too) and chunk dicts whole. Written at test time; RAGAS writes in its own venv
(``.venv-ragas``, which ``bash .ci/run`` makes; testkit/ragas_writer.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import datasets
import pandas as pd
import pytest
from fakes import ScriptedJudge, keyword_reply
from reading import dry_run_samples, texts

from ragrecall import ContextRecall, load_samples

ROWS: list[dict[str, Any]] = [
    {
        "user_input": "What do cats do?",
        "reference": "Cats purr. They sleep.",
        "response": "Cats purr.",
        "retrieved_contexts": ["Cats purr, loudly.", "It's \"quoted\", 'twice'.", "Zwei\nZeilen ☃"],
        "reference_contexts": ["Cats purr, loudly."],
        "retrieved_ids": ["d1", "d2", "d3"],
        "reference_ids": ["d1"],
    },
    {  # empty lists stay empty (not absent)
        "user_input": "What do dogs do?",
        "reference": "Dogs bark.",
        "response": "Nothing found.",
        "retrieved_contexts": [],
        "reference_contexts": [],
        "retrieved_ids": [],
        "reference_ids": [],
    },
    {  # absent stays absent
        "user_input": "What do birds do?",
        "reference": "Birds sing.",
        "response": None,
        "retrieved_contexts": ["Birds."],
        "reference_contexts": None,
        "retrieved_ids": None,
        "reference_ids": None,
    },
    {  # the first task again, another retrieval: a sample of its own
        "user_input": "What do cats do?",
        "reference": "Cats purr. They sleep.",
        "response": "Cats sleep.",
        "retrieved_contexts": ["Cats sleep all day.", "Cats purr, loudly."],
        "reference_contexts": ["Cats purr, loudly."],
        "retrieved_ids": ["d4", "d1"],
        "reference_ids": ["d1"],
    },
]
# Chunks as dicts, with different keys each (Arrow gives every chunk every key, null where
# it had none, and likewise inside metadata).
CHUNK_ROWS: list[dict[str, Any]] = [
    {
        "user_input": "What do cats do?",
        "reference": "Cats purr.",
        "retrieved_contexts": [
            {"id": "a", "text": "Cats purr.", "score": 0.9, "metadata": {"page": 3}},
            {"id": "b", "text": "Cats sleep.", "metadata": {"source": "wiki"}},
            {"id": "c", "text": "Cats, 'again'.", "rank": 7},
        ],
    },
    {
        "user_input": "What do dogs do?",
        "reference": "Dogs bark.",
        "retrieved_contexts": [{"text": "Dogs bark.", "metadata": None}],
    },
]

Writer = Callable[[list[dict[str, Any]], Path], None]
WRITERS: dict[str, tuple[str, Writer]] = {
    "pandas.to_csv": (".csv", lambda rows, p: pd.DataFrame(rows).to_csv(p, index=False)),
    "pandas.to_parquet": (".parquet", lambda rows, p: pd.DataFrame(rows).to_parquet(p)),
    "pandas.to_json(lines)": (
        ".jsonl",
        lambda rows, p: pd.DataFrame(rows).to_json(p, orient="records", lines=True),
    ),
    "pandas.to_json": (".json", lambda rows, p: pd.DataFrame(rows).to_json(p, orient="records")),
    "datasets.to_csv": (".csv", lambda rows, p: datasets.Dataset.from_list(rows).to_csv(p)),
    "datasets.to_parquet": (
        ".parquet",
        lambda rows, p: datasets.Dataset.from_list(rows).to_parquet(p),
    ),
    "datasets.to_json": (".jsonl", lambda rows, p: datasets.Dataset.from_list(rows).to_json(p)),
}


@pytest.mark.parametrize("writer", list(WRITERS))
@pytest.mark.parametrize("rows", [ROWS, CHUNK_ROWS], ids=["lists", "chunks"])
def test_a_written_file_loads_as_the_rows_written(
    tmp_path: Path, writer: str, rows: list[dict[str, Any]]
) -> None:
    suffix, write = WRITERS[writer]
    path = tmp_path / f"data{suffix}"
    write(rows, path)
    samples = load_samples(path)
    assert samples == load_samples(rows)
    assert len(samples) == len(rows)


@pytest.mark.parametrize("rows", [ROWS, CHUNK_ROWS], ids=["lists", "chunks"])
def test_dataframes_and_datasets_load_as_the_rows(rows: list[dict[str, Any]]) -> None:
    expected = load_samples(rows)
    assert load_samples(pd.DataFrame(rows)) == expected
    assert load_samples(datasets.Dataset.from_list(rows)) == expected


def test_the_rows_mean_what_the_tests_assume() -> None:
    """The reference the files are compared with: lists whole, empty ones empty, chunk
    dicts with their own keys only."""
    first, empty, absent, again = load_samples(ROWS)
    assert texts([first])[0][1] == "It's \"quoted\", 'twice'."
    assert (empty.retrieved_contexts, empty.retrieved_ids, empty.reference_contexts) == ([], [], [])
    assert (absent.retrieved_ids, absent.reference_contexts, absent.response) == (None,) * 3
    assert again.key() == first.key() and again != first
    chunks = load_samples(CHUNK_ROWS)[0].retrieved_contexts
    assert [c.metadata for c in chunks] == [{"page": 3}, {"source": "wiki"}, {}]
    assert [(c.id, c.rank, c.score) for c in chunks] == [
        ("a", 1, 0.9),
        ("b", 2, None),
        ("c", 7, None),
    ]


def test_a_directory_of_every_writers_files_counts_every_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for i, (suffix, write) in enumerate(WRITERS.values()):
        write(ROWS, tmp_path / f"{i}{suffix}")
    assert dry_run_samples(tmp_path, capsys)[0] == len(WRITERS) * len(ROWS)


def test_int_ids_as_ragas_allows_read_as_text() -> None:
    (sample,) = load_samples([{"retrieved_context_ids": [7, 8], "reference_context_ids": [1]}])
    assert (sample.retrieved_ids, sample.reference_ids) == (["7", "8"], ["1"])


def test_ragas_context_ids_become_the_chunks_ids_and_verdicts_cite_them() -> None:
    row = {
        "user_input": "What do cats do?",
        "reference": "Cats purr.",
        "retrieved_contexts": ["Dogs bark.", "Cats purr."],
        "retrieved_context_ids": ["d7", "d9"],
    }
    (sample,) = load_samples([row])
    assert [(c.id, c.rank, c.text) for c in sample.retrieved_contexts] == [
        ("d7", 1, "Dogs bark."),
        ("d9", 2, "Cats purr."),
    ]
    result = ContextRecall(ScriptedJudge(reply=keyword_reply), claims="sentences").score(sample)
    assert result.score == 1.0 and result.verdicts[0].chunk_ids == ["d9"]


@pytest.mark.parametrize(
    ("contexts", "ids", "expected"),
    [
        (["a", "b"], ["x"], ["1", "2"]),  # not as many ids as chunks: positions
        (["a", "b"], ["x", "x"], ["1", "2"]),  # repeated ids: positions
        ([{"id": "own", "text": "a"}, {"text": "b"}], ["x", "y"], ["own", "y"]),
    ],
)
def test_chunks_own_ids_win_and_unusable_id_lists_leave_positions(
    contexts: list[Any], ids: list[str], expected: list[str]
) -> None:
    (sample,) = load_samples([{"retrieved_contexts": contexts, "retrieved_ids": ids}])
    assert [c.id for c in sample.retrieved_contexts] == expected
    assert sample.retrieved_ids == ids
