"""The base of every judge-driven metric: ``score`` and ``ascore`` share one implementation."""

from __future__ import annotations

import json
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from langchain_core.language_models import BaseChatModel
from pydantic import AliasChoices, ValidationError

from .._errors import JudgeModelError, SampleError
from .._judge.drive import DEFAULT_TIMEOUT, Policy, Steps, run_async, run_sync
from .._judge.resolve import JudgeLike, judge_info, resolve_judge
from .._schemas import RecallResult, Sample, Usage

__all__ = ["Metric", "to_sample"]


# Every column name a Sample reads: field names and their aliases.
_COLUMNS = frozenset(Sample.model_fields) | {
    str(alias)
    for field in Sample.model_fields.values()
    if isinstance(field.validation_alias, AliasChoices)
    for alias in field.validation_alias.choices
}


# Columns that hold lists; in CSV files they are JSON-encoded.
_LIST_COLUMNS = {
    "retrieved_contexts",
    "contexts",
    "retrieved_ids",
    "reference_ids",
    "reference_claims",
}


def _clean(row: Mapping[str, Any], index: int | str | None) -> dict[str, Any]:
    """NaN (pandas' empty cell) to None; JSON-encoded lists (CSV cells) to lists."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, float) and value != value:
            value = None
        elif key in _LIST_COLUMNS and isinstance(value, str) and value.lstrip().startswith("["):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as err:
                raise SampleError(f"not a JSON list: {err}", row=index, field=key) from err
        elif hasattr(value, "tolist"):  # numpy arrays from Parquet or pandas
            value = value.tolist()
        out[key] = value
    return out


def to_sample(value: Sample | Mapping[str, Any], row: int | str | None = None) -> Sample:
    """A Sample from a Sample or a mapping (NaN cells read as empty, JSON-list cells as
    lists); SampleError names the row and field."""
    if isinstance(value, Sample):
        return value
    if not isinstance(value, Mapping):
        raise SampleError(f"expected a mapping or Sample, got {type(value).__name__}", row=row)
    if not _COLUMNS.intersection(value):
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


class Metric(ABC):
    """A recall metric. Subclasses write ``_steps`` once; sync and async drive it."""

    name: ClassVar[str]
    uses_judge: ClassVar[bool] = True

    def __init__(
        self, judge: JudgeLike = None, *, max_retries: int = 3, timeout: float = DEFAULT_TIMEOUT
    ):
        self._judge_spec = judge
        self._judge: BaseChatModel | None = judge if isinstance(judge, BaseChatModel) else None
        self._lock = threading.Lock()
        self.policy = Policy(max_retries=max_retries, timeout=timeout)

    @property
    def judge(self) -> BaseChatModel:
        """The judge model, resolved on first use (the embedded judge starts lazily)."""
        with self._lock:
            if self._judge is None:
                self._judge = resolve_judge(self._judge_spec)
            return self._judge

    def score(self, sample: Sample | Mapping[str, Any]) -> RecallResult:
        """Score one sample. Never raises for a judge failure: the result is unscorable."""
        return run_sync(self._run(to_sample(sample)), self.policy)

    async def ascore(
        self, sample: Sample | Mapping[str, Any], policy: Policy | None = None
    ) -> RecallResult:
        """Async ``score``; each judge call runs under the policy's timeout."""
        return await run_async(self._run(to_sample(sample)), policy or self.policy)

    def _run(self, sample: Sample) -> Steps[RecallResult]:
        start = time.perf_counter()
        usage = Usage()
        try:
            result = yield from self._steps(sample, usage)
        except JudgeModelError:
            raise
        except Exception as exc:
            result = self.unscorable(f"judge failed: {type(exc).__name__}: {exc}")
        return result.model_copy(
            update={
                "usage": usage,
                "judge": judge_info(self.judge) if self.uses_judge else None,
                "elapsed_s": time.perf_counter() - start,
            }
        )

    def judge_id(self) -> str:
        """Provider and model: part of cache keys, so two judges never share claims."""
        judge = self.judge
        model = getattr(judge, "model_name", None) or getattr(judge, "model", None)
        return f"{judge._llm_type}:{model}"

    @abstractmethod
    def _steps(self, sample: Sample, usage: Usage) -> Steps[RecallResult]:
        """The metric's logic: yield judge calls, return the result."""

    def unscorable(self, reason: str, **fields: Any) -> RecallResult:
        return RecallResult(
            metric=self.name, score=None, status="unscorable", reason=reason, **fields
        )
