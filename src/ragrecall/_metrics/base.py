"""The base of every judge-driven metric: ``score`` and ``ascore`` share one implementation."""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, TypeVar

from langchain_core.language_models import BaseChatModel

from .._core.errors import CalibrationError, JudgeModelError
from .._core.schemas import RecallResult, Sample, Usage
from .._io.samples import to_sample
from .._judge.drive import Steps, run_async, run_sync
from .._judge.resolve import JudgeLike, judge_info, resolve_judge
from .._judge.retry import DEFAULT_TIMEOUT, Policy
from .claims.decompose import ClaimCache
from .decision import CalibrationProfile

__all__ = ["Metric", "MetricOptions"]

R = TypeVar("R", bound=RecallResult, covariant=True)


@dataclass(frozen=True)
class MetricOptions:
    """Settings given by name (the command line): each metric takes the ones it knows."""

    claims: Literal["atomic", "sentences"] = "atomic"
    strategy: Literal["auto", "per_claim", "batched"] = "auto"
    timeout: float | None = None
    claim_cache: ClaimCache | None = None  # None: the default claim store
    calibration: CalibrationProfile | None = None  # context and response recall's decision

    def policy(self) -> dict[str, Any]:
        """The judge-call settings given, as constructor arguments."""
        return {} if self.timeout is None else {"timeout": self.timeout}


class Metric(ABC, Generic[R]):
    """A recall metric. Subclasses write ``_steps`` once; sync and async drive it.

    A concrete metric declares ``name`` (registered, so the CLI, the results file and the cost
    estimate find it) and ``result_type`` (the model of its results, also of unscorable ones).
    """

    name: ClassVar[str]
    result_type: type[R]
    uses_judge: ClassVar[bool] = True
    # What the dry run's cost estimate counts for this metric (see ``estimate_cost``).
    cost_parts: ClassVar[frozenset[str]] = frozenset()
    # Sample fields the metric cannot do without, each a tuple of alternatives: a run whose
    # input has none of a tuple's fields on any row is refused (a misspelt column would
    # otherwise score every sample as if nothing were there).
    needs: ClassVar[tuple[tuple[str, ...], ...]] = ()

    # Every concrete metric class by name; read it through ``_metrics.registry``.
    registered: ClassVar[dict[str, type[Metric[RecallResult]]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Register a class that declares a ``name``; a second class with a taken name is
        refused."""
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            return
        taken = Metric.registered.get(cls.name)
        same = taken is not None and (taken.__module__, taken.__qualname__) == (
            cls.__module__,
            cls.__qualname__,
        )
        if taken is not None and not same:
            raise ValueError(
                f"metric name {cls.name!r} is taken by {taken.__module__}.{taken.__qualname__}"
            )
        Metric.registered[cls.name] = cls

    def __init__(
        self,
        judge: JudgeLike = None,
        *,
        max_retries: int = 3,
        timeout: float | None = DEFAULT_TIMEOUT,
    ):
        self._judge_spec = judge
        self._judge: BaseChatModel | None = judge if isinstance(judge, BaseChatModel) else None
        self._lock = threading.Lock()
        self.policy = Policy(max_retries=max_retries, timeout=timeout)

    @classmethod
    def from_options(cls, judge: JudgeLike, options: MetricOptions) -> Metric[R]:
        """The metric with the settings given by name that it takes (the command line's)."""
        return cls(judge, **options.policy()) if cls.uses_judge else cls()

    @property
    def judge(self) -> BaseChatModel:
        """The judge model, resolved on first use (the embedded judge starts lazily)."""
        with self._lock:
            if self._judge is None:
                self._judge = resolve_judge(self._judge_spec)
            return self._judge

    def score(self, sample: Sample | Mapping[str, Any], policy: Policy | None = None) -> R:
        """Score one sample. Never raises for a judge failure: the result is unscorable.
        Each judge call runs under ``policy`` (default: the metric's)."""
        return run_sync(self._run(to_sample(sample)), policy or self.policy)

    async def ascore(self, sample: Sample | Mapping[str, Any], policy: Policy | None = None) -> R:
        """Async ``score``; each judge call runs under the policy (default: the metric's)."""
        return await run_async(self._run(to_sample(sample)), policy or self.policy)

    def _run(self, sample: Sample) -> Steps[R]:
        start = time.perf_counter()
        usage = Usage()
        try:
            result = yield from self._steps(sample, usage)
        except (JudgeModelError, CalibrationError):
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
    def _steps(self, sample: Sample, usage: Usage) -> Steps[R]:
        """The metric's logic: yield judge calls, return the result."""

    def unscorable(self, reason: str, **fields: Any) -> R:
        """A result of this metric's type that says why the sample could not be scored."""
        return self.result_type(
            metric=self.name, score=None, status="unscorable", reason=reason, **fields
        )
