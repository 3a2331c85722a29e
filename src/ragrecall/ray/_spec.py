"""A metric as it travels to Ray workers: its class and arguments, and the judge as a string
(``"provider:model"``, ``"module:callable"`` naming a factory, or None for the embedded judge)
or a picklable factory. Each worker builds it once."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.language_models import BaseChatModel

from .._judge.resolve import import_judge, judge_at, resolve_judge
from .._metrics.base import Metric, MetricOptions
from .._metrics.claims import ClaimCache
from .._metrics.context_recall import ContextRecall
from .._metrics.registry import metric_class
from .._schemas import RecallResult

__all__ = ["JudgeSpec", "MetricSpec", "build_judge", "factory", "server", "spec_of"]

JudgeSpec = str | Callable[[], BaseChatModel] | None


@dataclass(frozen=True)
class MetricSpec:
    """``metric``: a registered name (``"context_recall"``) or a metric class; ``judge``:
    ``"provider:model"``, ``"module:callable"`` (a factory importable on the workers), a
    picklable zero-argument factory, or None (the embedded judge); ``options``: the class's
    other constructor arguments (picklable)."""

    metric: str | type[Metric[RecallResult]] = "context_recall"
    judge: JudgeSpec = None
    options: Mapping[str, Any] = field(default_factory=dict)
    named: MetricOptions | None = None
    claims_store: str | None = None

    @property
    def cls(self) -> type[Metric[RecallResult]]:
        return metric_class(self.metric) if isinstance(self.metric, str) else self.metric

    @property
    def name(self) -> str:
        return self.cls.name

    @property
    def decomposes(self) -> bool:
        """Whether it splits references into claims with the judge (the first pass's work)."""
        claims = self.named.claims if self.named is not None else self.options.get("claims")
        return issubclass(self.cls, ContextRecall) and claims != "sentences"

    def build(self, cache: ClaimCache | None = None) -> Metric[RecallResult]:
        """The metric, with its own judge; ``cache``: the claim store of a decomposing metric
        (default: its own)."""
        cls = self.cls
        judge = build_judge(self.judge) if cls.uses_judge else None
        if cache is None and self.claims_store is not None:
            cache = ClaimCache(self.claims_store)
        if self.named is not None:
            named = self.named if cache is None else replace(self.named, claim_cache=cache)
            return cls.from_options(judge, named)
        options = dict(self.options)
        if cache is not None and issubclass(cls, ContextRecall):
            options["cache"] = cache
        return cls(judge, **options) if cls.uses_judge else cls(**options)


def build_judge(spec: JudgeSpec) -> BaseChatModel:
    """The judge a spec names: a factory is called, a string resolved as ``resolve_judge``
    does."""
    if callable(spec):
        judge = spec()
        if not isinstance(judge, BaseChatModel):
            raise TypeError(f"judge factory {spec!r} returned {type(judge).__name__}")
        return judge
    return resolve_judge(spec)


def factory(target: str) -> Callable[[], BaseChatModel]:
    """A picklable factory calling ``"module:callable"`` on the worker (``import_judge``)."""
    return functools.partial(import_judge, target)


def server(url: str, model: str | None = None, key_env: str | None = None) -> JudgeSpec:
    """A picklable factory for the judge server at ``url`` (``judge_at``), e.g. judge servers
    shared by every worker."""
    return functools.partial(judge_at, url, model, key_env)


def spec_of(value: MetricSpec | str) -> MetricSpec:
    return value if isinstance(value, MetricSpec) else MetricSpec(value)
