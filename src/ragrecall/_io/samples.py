"""Load samples from lists of dicts, DataFrames, Hugging Face datasets or JSONL/CSV/JSON files."""

from __future__ import annotations

import ast
import io
import json
import tokenize
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, ValidationError

from .._core.errors import SampleError
from .._core.schemas import Sample
from .._core.turns import MessagesError
from .files import DataRows
from .safe import loads

__all__ = [
    "COLUMNS",
    "SampleId",
    "dialogue_samples",
    "iter_rows",
    "iter_samples",
    "load_samples",
    "repeated_tasks",
    "sample_ids",
    "to_sample",
]

# Every column name a Sample reads: field names and their aliases, chat messages and a
# dialogue's turns (one sample per turn).
COLUMNS = (
    frozenset(Sample.model_fields)
    | {
        str(alias)
        for field in Sample.model_fields.values()
        if isinstance(field.validation_alias, AliasChoices)
        for alias in field.validation_alias.choices
    }
    | {"messages", "turns"}
)


# Columns that hold lists (or, for relevance, a mapping): a CSV cell holds them as JSON or as a
# Python literal (what pandas' and RAGAS's to_csv write: ['a', 'b']).
_LIST_COLUMNS = {
    "retrieved_contexts",
    "contexts",
    "retrieved_ids",
    "retrieved_context_ids",
    "reference_ids",
    "reference_context_ids",
    "reference_claims",
    "reference_contexts",
    "relevance",
    "history",
    "messages",
    "turns",
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
    """A list cell's value: JSON, else a Python literal; an empty cell is absent; other text
    is the value itself."""
    if not text.strip():
        return None
    if not text.lstrip().startswith(("[", "{")):
        return text
    try:
        return loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return _literal(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError, tokenize.TokenError) as err:
        raise SampleError(
            f"not a list (neither JSON nor a Python literal): {err}", row=index, field=field
        ) from err


_VALUES = {tokenize.STRING, tokenize.NUMBER, tokenize.NAME}
_SKIP = {tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.COMMENT}


def _literal(text: str) -> Any:
    """A Python literal, read with ``ast.literal_eval`` (which evaluates no code), or what
    numpy prints for an array, as ``datasets``' ``to_csv`` writes list cells: items with no
    commas between them (``['a' 'b']``, which Python reads as the one string ``'ab'``), and
    ``nan``. Commas go back between two items in a row inside [...]; ``nan`` reads as None."""
    out: list[str] = []
    brackets: list[str] = []
    after_value = False
    for token in tokenize.generate_tokens(io.StringIO(text.strip()).readline):
        kind, value = token.type, token.string
        if kind in _SKIP:
            continue
        if value == "...":
            raise ValueError("numpy printed this array abbreviated ('...'): items are lost")
        starts = kind in _VALUES or value in ("[", "{", "(", "-")
        if after_value and starts and brackets[-1:] == ["["]:
            out.append(",")
        if value in ("[", "{", "("):
            brackets.append(value)
        elif value in ("]", "}", ")") and brackets:
            brackets.pop()
        out.append("None" if kind == tokenize.NAME and value == "nan" else value)
        after_value = kind in _VALUES or value in ("]", "}", ")")
    return ast.literal_eval(" ".join(out))


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
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
        field = path.lstrip(".") or None  # history[1].question
        cause = first.get("ctx", {}).get("error")
        if isinstance(cause, MessagesError):  # messages[3], read before the fields
            field = cause.field
        raise SampleError(first["msg"], row=row, field=field) from err


def load_samples(data: Any, column_map: Mapping[str, str] | None = None) -> list[Sample]:
    """Every row as a Sample; the first bad row raises SampleError naming file, line, row
    and field. ``data``: a list of dicts or Samples, a pandas DataFrame, a Hugging Face
    Dataset, or the path of a .jsonl/.json/.csv/.parquet file or of a directory of them (a
    warning names the directory's other entries, which are not read).

    ``column_map`` maps your column names to ours, e.g. ``{"gold": "reference"}``.
    """
    return list(iter_samples(data, column_map))


def iter_samples(data: Any, column_map: Mapping[str, str] | None = None) -> Iterator[Sample]:
    """Like ``load_samples``, one row at a time."""
    if isinstance(data, (str, Path)):
        data = DataRows(Path(data))
        if data.skipped:
            warnings.warn(data.skipped_note(), stacklevel=2)
    for i, row in enumerate(iter_rows(data)):
        try:
            samples = _row_to_samples(row, i, column_map)
        except SampleError as err:
            if isinstance(data, DataRows) and data.where:
                err.locate(*data.where)
            raise
        yield from samples


def _row_to_samples(row: Any, index: int, column_map: Mapping[str, str] | None) -> list[Sample]:
    """A row's samples: one, or for a dialogue (a ``turns`` list) one per turn."""
    if isinstance(row, Mapping) and "turns" in row:
        if column_map:
            row = {column_map.get(k, k): v for k, v in row.items()}
        return dialogue_samples(_clean(row, index), index)
    return [_row_to_sample(row, index, column_map)]


def dialogue_samples(row: Mapping[str, Any], index: int) -> list[Sample]:
    """One sample per turn of a dialogue ``{"sample_id": ..., "turns": [turn, ...]}``, each
    turn a sample's fields (its question, answer, retrieved contexts, reference, ...; the
    dialogue's other columns are not read): turn
    ``k`` (from 1) is scored with the turns before it as its ``history``, its id
    ``"<sample_id>#<k>"`` (the dialogue's id, else its row number from 1)."""
    turns = row["turns"]
    if isinstance(turns, (str, bytes)) or not isinstance(turns, Sequence) or not turns:
        raise SampleError("expected a non-empty list of turns", row=index, field="turns")
    if row.get("history") is not None or row.get("messages") is not None:
        raise SampleError("a dialogue's turns carry its history", row=index, field="turns")
    dialogue = row.get("sample_id")
    dialogue = str(index + 1) if dialogue is None else str(dialogue)
    samples: list[Sample] = []
    for k, turn in enumerate(turns):
        if not isinstance(turn, Mapping):
            raise SampleError(
                f"expected a mapping, got {type(turn).__name__}", row=index, field=f"turns[{k}]"
            )
        fields = {**_clean(turn, index), "sample_id": f"{dialogue}#{k + 1}"}
        fields["history"] = [_earlier(s) for s in samples] or None
        try:
            samples.append(to_sample(fields, row=index))
        except SampleError as err:
            err.field = f"turns[{k}]" + (f".{err.field}" if err.field else "")
            raise
        if not (samples[-1].user_input or "").strip():
            raise SampleError("a turn needs its question", row=index, field=f"turns[{k}]")
    return samples


def _earlier(sample: Sample) -> dict[str, Any]:
    return {
        "question": sample.user_input or "",
        "answer": sample.response,
        "retrieved_contexts": sample.retrieved_contexts,
    }


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
        yield from DataRows(Path(data))
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
