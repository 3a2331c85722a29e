"""A person's labels: ``Label`` (one verdict agreed with, disagreed with or skipped) and
``read_labels`` (the review page's JSONL export or a labelled review CSV, back as labels).
Bad rows raise SampleError naming file, line and field; lines are bounded and deep JSON is a
decode error, never a crash."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, Field, ValidationError

from .._core.errors import SampleError
from .._io.cells import read_cell
from .._io.safe import field_errors, lines, loads, regular_file
from .._metrics.prompts import PROMPT_VERSION

__all__ = ["Label", "read_labels"]


class Label(BaseModel):
    """A person's label of one verdict (a line of the review page's export, or a CSV row).
    Numbers are range-checked: a probability or overlap outside [0, 1], NaN or infinity is
    refused, so that one bad row cannot move the fit."""

    key: str = Field(description="The sample's key in the results file.")
    occurrence: int = Field(1, ge=0)
    claim: str
    label: Literal["supported", "not_supported", "skip"]
    pick: str = Field(
        "random",
        description="uncertain, random or unscorable (pick_for_review); answer: a claim of a "
        "whole answer picked at random (pick_answers).",
    )
    attributed: bool | None = Field(None, description="The judge's verdict (None: unscorable).")
    p_supported: float | None = Field(None, ge=0.0, le=1.0, allow_inf_nan=False)
    word_overlap: float | None = Field(None, ge=0.0, le=1.0, allow_inf_nan=False)
    judge: str = ""
    prompt_version: str = PROMPT_VERSION
    sample_id: str | None = None
    metric: str = "context_recall"
    content: str | None = Field(None, description="The sample's content digest (its retrieval).")
    task: str | None = Field(None, description="The task compare pairs by (a digest).")
    claim_set: str | None = Field(None, description="The digest of the answer's claims.")
    claim_index: int | None = Field(None, ge=0, description="The claim's place in its answer.")
    answer_claims: int | None = Field(None, ge=1, description="Claims in the whole answer.")
    judge_score: float | None = Field(None, ge=0.0, le=1.0, allow_inf_nan=False)
    human_recall: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        allow_inf_nan=False,
        description="Supported claims over the answer's claims, on a labelled whole answer "
        "(the review page's export; read back, it must agree with the labels).",
    )


def read_labels(path: str | Path) -> list[Label]:
    """Labels from the review page's JSONL export or the review CSV (its ``label`` column:
    supported, not_supported, skip; blank is skip). Bad rows raise SampleError naming the file,
    line and field."""
    return [label for _, label in read_label_rows(path)]


def read_label_rows(path: str | Path) -> list[tuple[int, Label]]:
    """``read_labels`` with the line each label starts on."""
    path = Path(path)
    regular_file(path, "labels file")
    with path.open("rb") as f:
        rows = _csv_labels(f, path) if path.suffix.lower() == ".csv" else _jsonl_labels(f, path)
        labels: list[tuple[int, Label]] = []
        for n, row in rows:
            try:
                labels.append((n, Label.model_validate(row)))
            except ValidationError as err:
                message = f"not a label: {field_errors(err)}"
                raise SampleError(message, file=str(path), line=n) from err
    return labels


def _jsonl_labels(f: IO[bytes], path: Path) -> Iterator[tuple[int, Any]]:
    for n, raw in lines(f, path):
        try:
            if raw.strip():
                yield n, loads(raw.decode("utf-8-sig" if n == 1 else "utf-8"))
        except json.JSONDecodeError as err:
            raise SampleError(f"not JSON: {err.msg}", file=str(path), line=n) from err
        except UnicodeDecodeError as err:
            raise SampleError(f"not UTF-8: {err.reason}", file=str(path), line=n) from err


def _csv_labels(f: IO[bytes], path: Path) -> Iterator[tuple[int, Any]]:
    reader = csv.DictReader(io.TextIOWrapper(f, encoding="utf-8-sig", newline=""))
    try:
        for row in reader:
            yield reader.line_num, _csv_row(row)
    except csv.Error as err:
        raise SampleError(f"unreadable CSV: {err}", file=str(path), line=reader.line_num) from err
    except UnicodeDecodeError as err:
        raise SampleError(f"not UTF-8: {err.reason}", file=str(path), line=reader.line_num) from err


def _csv_row(row: dict[str, str]) -> dict[str, Any]:
    value: dict[str, Any] = {
        k: read_cell(v) for k, v in row.items() if k is not None and isinstance(v, str) and v
    }
    label = (row.get("label") or "skip").strip().lower().replace(" ", "_")
    value["label"] = {"yes": "supported", "y": "supported", "no": "not_supported"}.get(
        label, {"n": "not_supported"}.get(label, label)
    )
    if "attributed" in value:
        value["attributed"] = value["attributed"].strip().lower() == "true"
    return value
