"""Write an EvaluationDataset with RAGAS's own writers, for tests/system/test_ragas_files.py.

Runs in RAGAS's venv (see testkit/requirements-ragas.txt), not the project's:

    .venv-ragas/bin/python testkit/ragas_writer.py OUT_DIR

writes OUT_DIR/expected.json (``to_list()``: the samples as RAGAS holds them) and the same
samples through ``to_csv``, ``to_jsonl``, ``to_pandas()`` then pandas' ``to_csv`` and
``to_parquet``, and ``to_hf_dataset()`` then ``to_json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ragas import EvaluationDataset
from ragas.dataset_schema import SingleTurnSample

SAMPLES = [
    # The first sample has every field: to_csv takes its columns from the first sample.
    SingleTurnSample(
        user_input="What do cats do?",
        reference="Cats purr. They sleep.",
        response="Cats purr.",
        retrieved_contexts=["Cats purr, loudly.", "It's \"quoted\", 'twice'.", "Zwei\nZeilen ☃"],
        reference_contexts=["Cats purr, loudly."],
        retrieved_context_ids=["d1", "d2", "d3"],
        reference_context_ids=["d1"],
    ),
    SingleTurnSample(  # empty lists stay empty
        user_input="What do dogs do?",
        reference="Dogs bark.",
        response="Nothing found.",
        retrieved_contexts=[],
        reference_contexts=[],
        retrieved_context_ids=[],
        reference_context_ids=[],
    ),
    SingleTurnSample(  # absent fields stay absent
        user_input="What do birds do?", reference="Birds sing.", retrieved_contexts=["Birds."]
    ),
    SingleTurnSample(  # the first task again, another retrieval: a sample of its own
        user_input="What do cats do?",
        reference="Cats purr. They sleep.",
        response="Cats sleep.",
        retrieved_contexts=["Cats sleep all day."],
        reference_contexts=["Cats purr, loudly."],
        retrieved_context_ids=["d4", "d5"],
        reference_context_ids=["d1"],
    ),
]


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    dataset = EvaluationDataset(samples=SAMPLES)
    (out / "expected.json").write_text(json.dumps(dataset.to_list()), encoding="utf-8")
    dataset.to_csv(out / "to_csv.csv")
    dataset.to_jsonl(out / "to_jsonl.jsonl")
    dataset.to_pandas().to_csv(out / "to_pandas.csv", index=False)
    dataset.to_pandas().to_parquet(out / "to_pandas.parquet")
    dataset.to_hf_dataset().to_json(out / "to_hf_dataset.jsonl")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
