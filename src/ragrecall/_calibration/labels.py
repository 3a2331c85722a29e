"""A person's labels: ``Label`` (one verdict agreed with, disagreed with or skipped) and
``read_labels`` (a labelled review CSV, ``ragrecall review``'s, back as labels)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from .._errors import SampleError
from ..prompts import PROMPT_VERSION

__all__ = ["Label", "read_labels"]


class Label(BaseModel):
    """A person's label of one verdict (a line of the review page's export, or a CSV row)."""

    key: str = Field(description="The sample's key in the results file.")
    occurrence: int = 1
    claim: str
    label: Literal["supported", "not_supported", "skip"]
    pick: str = Field("random", description="uncertain, random or unscorable (pick_for_review).")
    attributed: bool | None = Field(None, description="The judge's verdict (None: unscorable).")
    p_supported: float | None = None
    word_overlap: float | None = None
    judge: str = ""
    prompt_version: str = PROMPT_VERSION
    sample_id: str | None = None


def read_labels(path: str | Path) -> list[Label]:
    """Labels from the review page's JSONL export or the review CSV (its ``label`` column:
    supported, not_supported, skip; blank is skip). Bad rows raise SampleError naming the row."""
    path = Path(path)
    labels: list[Label] = []
    with path.open(encoding="utf-8", newline="") as f:
        if path.suffix.lower() == ".csv":
            rows: Iterable[tuple[int, dict[str, Any]]] = (
                (n, _csv_row(row)) for n, row in enumerate(csv.DictReader(f), start=2)
            )
        else:
            rows = ((n, json.loads(line)) for n, line in enumerate(f, start=1) if line.strip())
        try:
            for n, row in rows:
                try:
                    labels.append(Label.model_validate(row))
                except ValidationError as err:
                    raise SampleError(f"{path}:{n}: not a label: {err}") from err
        except json.JSONDecodeError as err:
            raise SampleError(f"{path}:{err.lineno}: not JSON: {err.msg}") from err
    return labels


def _csv_row(row: dict[str, str]) -> dict[str, Any]:
    value: dict[str, Any] = {k: v for k, v in row.items() if v not in ("", None)}
    label = (row.get("label") or "skip").strip().lower().replace(" ", "_")
    value["label"] = {"yes": "supported", "y": "supported", "no": "not_supported"}.get(
        label, {"n": "not_supported"}.get(label, label)
    )
    if "attributed" in value:
        value["attributed"] = value["attributed"].strip().lower() == "true"
    return value
