"""Load samples from lists of dicts, DataFrames, Hugging Face datasets or JSONL/CSV/JSON files."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ._errors import SampleError
from ._metrics.base import to_sample
from ._schemas import Sample

__all__ = ["iter_rows", "iter_samples", "load_samples"]


def load_samples(data: Any, column_map: Mapping[str, str] | None = None) -> list[Sample]:
    """Every row as a Sample; the first bad row raises SampleError naming row and field.

    ``column_map`` maps your column names to ours, e.g. ``{"gold": "reference"}``.
    """
    return list(iter_samples(data, column_map))


def iter_samples(data: Any, column_map: Mapping[str, str] | None = None) -> Iterator[Sample]:
    """Like ``load_samples``, one row at a time."""
    for i, row in enumerate(iter_rows(data)):
        yield _row_to_sample(row, i, column_map)


def _row_to_sample(row: Any, index: int, column_map: Mapping[str, str] | None) -> Sample:
    if isinstance(row, Sample):
        return row
    if not isinstance(row, Mapping):
        raise SampleError(f"expected a mapping, got {type(row).__name__}", row=index)
    if column_map:
        missing = [name for name in column_map if name not in row]
        if missing:
            raise SampleError(f"column_map names missing columns {missing}", row=index)
        row = {column_map.get(k, k): v for k, v in row.items()}
    return to_sample(row, row=index)


def iter_rows(data: Any) -> Iterator[Any]:
    """Rows of any supported dataset form."""
    if isinstance(data, (str, Path)):
        yield from _read_path(Path(data))
    elif hasattr(data, "to_dict") and hasattr(data, "columns"):  # pandas DataFrame
        yield from data.to_dict(orient="records")
    elif hasattr(data, "to_list") and hasattr(data, "features"):  # Hugging Face Dataset
        yield from data.to_list()
    elif isinstance(data, (Mapping, Sample)):
        yield data
    elif isinstance(data, Iterable):
        yield from data
    else:
        raise TypeError(f"cannot read samples from {type(data).__name__}")


def _read_path(path: Path) -> Iterator[Any]:
    if not path.exists():
        raise FileNotFoundError(path)
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        with path.open(encoding="utf-8") as f:
            for number, line in enumerate(f, start=1):
                if line.strip():
                    try:
                        yield json.loads(line)
                    except json.JSONDecodeError as err:
                        raise SampleError(f"{path}:{number}: invalid JSON: {err}") from err
    elif suffix == ".json":
        value = json.loads(path.read_text(encoding="utf-8"))
        yield from value if isinstance(value, list) else [value]
    elif suffix == ".csv":
        with path.open(encoding="utf-8", newline="") as f:
            yield from csv.DictReader(f)
    elif suffix == ".parquet":
        import pandas as pd

        yield from pd.read_parquet(path).to_dict(orient="records")
    else:
        raise ValueError(f"{path}: expected .jsonl, .json, .csv or .parquet")
