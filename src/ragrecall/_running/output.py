"""A run's output read back as records, whichever engine wrote it: a results file (JSONL, from
``evaluate(out=...)``, ``eval --out``, the batch engine) or a Ray run's directory of Parquet
parts. The parts' reader is imported only for a directory (it needs pyarrow, never Ray)."""

from __future__ import annotations

from pathlib import Path

from .._core.extras import requires
from .store import Record, read_file

__all__ = ["read_records"]


def read_records(path: str | Path) -> list[Record]:
    """The records of a run's output, one per sample: a results file (JSONL) or a Ray run's
    output directory alike. A sample scored again after its row changed is its latest
    record. A results file's torn last line, or a directory's unreadable part (with a
    warning), is left out, not repaired. Raises SampleError for what is not a run's output.

        from ragrecall.engines import read_records

        for record in read_records("results.jsonl"):  # or "out/" of a Ray run
            print(record.sample.user_input, record.score("context_recall"))
    """
    path = Path(path)
    if not path.is_dir():
        return read_file(path)
    with requires("reading a Ray run's output"):
        from .engines.ray.parts import read_parts
    return read_parts(path)
