"""Load samples from lists of dicts, DataFrames, Hugging Face datasets or JSONL/CSV/JSON files."""

from __future__ import annotations

import ast
import csv
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, ValidationError

from ._errors import SampleError
from ._schemas import Sample

__all__ = [
    "COLUMNS",
    "SUFFIXES",
    "DataRows",
    "SampleId",
    "iter_rows",
    "iter_samples",
    "load_samples",
    "repeated_tasks",
    "sample_ids",
    "to_sample",
]

SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")

# Every column name a Sample reads: field names and their aliases.
COLUMNS = frozenset(Sample.model_fields) | {
    str(alias)
    for field in Sample.model_fields.values()
    if isinstance(field.validation_alias, AliasChoices)
    for alias in field.validation_alias.choices
}


# Columns that hold lists (or, for relevance, a mapping): a CSV cell holds them as JSON or as a
# Python literal (what pandas' and RAGAS's to_csv write: ['a', 'b']).
_LIST_COLUMNS = {
    "retrieved_contexts",
    "contexts",
    "retrieved_ids",
    "reference_ids",
    "reference_claims",
    "reference_contexts",
    "relevance",
}


def _clean(row: Mapping[str, Any], index: int | str | None) -> dict[str, Any]:
    """NaN (pandas' empty cell) and empty list cells to None; list cells written as text (CSV)
    to lists; numpy arrays (Parquet, pandas) to lists."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, float) and value != value:
            value = None
        elif key in _LIST_COLUMNS and isinstance(value, str):
            value = _decoded(value, index, key)
        elif hasattr(value, "tolist"):
            value = value.tolist()
        out[key] = value
    return out


def _decoded(text: str, index: int | str | None, field: str) -> Any:
    """A list cell's value: JSON, else a Python literal (read with ``ast.literal_eval``, which
    evaluates no code); an empty cell is absent; other text is the value itself."""
    if not text.strip():
        return None
    if not text.lstrip().startswith(("[", "{")):
        return text
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError) as err:
        raise SampleError(
            f"not a list (neither JSON nor a Python literal): {err}", row=index, field=field
        ) from err


def to_sample(value: Sample | Mapping[str, Any], row: int | str | None = None) -> Sample:
    """A Sample from a Sample or a mapping (NaN cells read as empty, JSON-list cells as
    lists); SampleError names the row and field."""
    if isinstance(value, Sample):
        return value
    if not isinstance(value, Mapping):
        raise SampleError(f"expected a mapping or Sample, got {type(value).__name__}", row=row)
    if not COLUMNS.intersection(value):
        raise SampleError(
            f"no sample field among its columns {sorted(map(str, value))}; expected "
            "user_input, reference, retrieved_contexts (or question, ground_truth, contexts); "
            "rename yours with column_map",
            row=row,
        )
    try:
        return Sample.model_validate(_clean(value, row))
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or None
        raise SampleError(first["msg"], row=row, field=field) from err


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
        with path.open(encoding="utf-8-sig", newline="") as f:  # a BOM is not a column name
            yield from csv.DictReader(f)
    elif suffix == ".parquet":
        import pandas as pd

        yield from pd.read_parquet(path).to_dict(orient="records")
    else:
        raise ValueError(f"{path}: expected .jsonl, .json, .csv or .parquet")


class DataRows:
    """The rows of one file or of every supported file in a directory (sorted by name), up
    to ``limit``; re-iterable. ``locate`` names the file and row of a global row index."""

    def __init__(self, path: Path, limit: int | None = None):
        if path.is_dir():
            self.files = sorted(p for p in path.iterdir() if p.suffix.lower() in SUFFIXES)
            if not self.files:
                raise SampleError(f"{path}: no {', '.join(SUFFIXES)} files in this directory")
        elif path.exists():
            self.files = [path]
        else:
            raise SampleError(f"{path}: no such file or directory")
        self.limit = limit
        self.sizes: list[int] = []

    def __iter__(self) -> Iterator[Any]:
        count = 0
        sizes: list[int] = []
        self.sizes = sizes
        for file in self.files:
            sizes.append(0)
            for row in iter_rows(file):
                if self.limit is not None and count >= self.limit:
                    return
                sizes[-1] += 1
                count += 1
                yield row

    def locate(self, index: int) -> str:
        """``file, row n`` for a global row index (after one full pass)."""
        for file, size in zip(self.files, self.sizes, strict=False):
            if index < size:
                return f"{file.name}, row {index}"
            index -= size
        return f"row {index}"


SampleId = tuple[str, int]  # (Sample.key(), occurrence: which of the rows with that key)


def sample_ids(samples: Sequence[Sample]) -> list[SampleId]:
    """Each sample's task key and occurrence (1 for the first row with that key, 2 for the
    next, ...): rows that repeat a task stay separate samples."""
    seen: dict[str, int] = {}
    ids = []
    for sample in samples:
        key = sample.key()
        seen[key] = seen.get(key, 0) + 1
        ids.append((key, seen[key]))
    return ids


def repeated_tasks(samples: Sequence[Sample]) -> list[list[int]]:
    """Groups of row indices that share a task key (each group has two or more rows)."""
    rows: dict[str, list[int]] = {}
    for index, sample in enumerate(samples):
        rows.setdefault(sample.key(), []).append(index)
    return [group for group in rows.values() if len(group) > 1]
