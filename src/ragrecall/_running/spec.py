"""A metric as a recipe: its class and arguments, and the judge as a string
(``"provider:model"``, ``"module:callable"`` naming a factory, or None for the embedded judge)
or a picklable factory. Every engine takes metrics as objects, names, specs or factories
(``MetricLike``) and builds them where it scores: the local engine as given, batch mode on
its batch judge, each Ray worker once (a spec travels by pickle, a judge client does not)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.language_models import BaseChatModel

from .._core.schemas import RecallResult
from .._judge.resolve import JudgeLike, import_judge, judge_at, resolve_judge
from .._metrics.base import Metric, MetricOptions
from .._metrics.claims.decompose import ClaimCache
from .._metrics.context_recall import ContextRecall
from .._metrics.registry import metric_class

__all__ = [
    "MetricLike",
    "MetricSpec",
    "build_metric",
    "build_metrics",
    "factory",
    "server",
    "spec_of",
]


@dataclass(frozen=True)
class MetricSpec:
    """``metric``: a registered name (``"context_recall"``) or a metric class; ``judge``:
    ``"provider:model"``, ``"module:callable"`` (a factory importable on the workers), a
    picklable zero-argument factory, or None (the embedded judge); ``options``: the class's
    other constructor arguments (picklable)."""

    metric: str | type[Metric[RecallResult]] = "context_recall"
    judge: JudgeLike = None
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

    def build(
        self, cache: ClaimCache | None = None, judge: BaseChatModel | None = None
    ) -> Metric[RecallResult]:
        """The metric, with its own judge (or ``judge``, batch mode's); ``cache``: the claim
        store of a decomposing metric (default: its own)."""
        cls = self.cls
        if cls.uses_judge and judge is None:
            judge = resolve_judge(self.judge)
        if cache is None and self.claims_store is not None:
            cache = ClaimCache(self.claims_store)
        if self.named is not None:
            named = self.named if cache is None else replace(self.named, claim_cache=cache)
            return cls.from_options(judge, named)
        options = dict(self.options)
        if cache is not None and issubclass(cls, ContextRecall):
            options["cache"] = cache
        return cls(judge, **options) if cls.uses_judge else cls(**options)


def factory(target: str) -> Callable[[], BaseChatModel]:
    """A picklable factory calling ``"module:callable"`` on the worker (``import_judge``)."""
    return functools.partial(import_judge, target)


def server(
    url: str, model: str | None = None, key_env: str | None = None
) -> Callable[[], BaseChatModel]:
    """A picklable factory for the judge server at ``url`` (``judge_at``), e.g. judge servers
    shared by every worker."""
    return functools.partial(judge_at, url, model, key_env)


def spec_of(value: MetricLike) -> MetricSpec:
    """A name or spec as a spec; TypeError for a metric object or factory (which cannot
    travel to another process)."""
    if isinstance(value, MetricSpec):
        return value
    if isinstance(value, str):
        return MetricSpec(value)
    raise TypeError(
        f"a metric that travels to other processes is a name or a MetricSpec, not "
        f"{type(value).__name__} (a judge client cannot be pickled): "
        "MetricSpec('context_recall', 'openai:gpt-4o-mini', {'strategy': 'batched'})"
    )


MetricLike = (
    Metric[RecallResult] | MetricSpec | str | Callable[[BaseChatModel], Metric[RecallResult]]
)


def build_metric(
    value: MetricLike,
    judge: BaseChatModel | None = None,
    named: MetricOptions | None = None,
) -> Metric[RecallResult]:
    """The metric ``value`` names: a metric object as it is; a name or spec built (with
    ``judge`` for its judge when given, and ``named`` settings for a name); a factory called
    with ``judge`` (default: the embedded one). A metric object cannot take another judge:
    TypeError when ``judge`` is given for one."""
    if isinstance(value, Metric):
        if judge is not None:
            raise TypeError(
                f"{type(value).__name__} was built with its own judge; this engine gives each "
                "metric its judge: pass a name, a MetricSpec, or a factory taking the judge "
                "(functools.partial(ContextRecall, strategy='batched'))"
            )
        return value
    if isinstance(value, str):
        value = MetricSpec(value, named=named)
    if isinstance(value, MetricSpec):
        return value.build(judge=judge)
    return value(judge if judge is not None else resolve_judge(None))


def build_metrics(
    values: Sequence[MetricLike],
    judge: BaseChatModel | None = None,
    named: MetricOptions | None = None,
) -> list[Metric[RecallResult]]:
    """``build_metric`` for each; specs naming one judge share it (resolved once: one
    embedded judge, one client)."""
    judges: dict[Any, BaseChatModel] = {}
    built = []
    for value in values:
        if judge is None and isinstance(value, str | MetricSpec):
            spec = value if isinstance(value, MetricSpec) else MetricSpec(value, named=named)
            if spec.cls.uses_judge:
                key = spec.judge if isinstance(spec.judge, str | None) else id(spec.judge)
                shared = judges.get(key)
                if shared is None:
                    shared = judges[key] = resolve_judge(spec.judge)
                built.append(spec.build(judge=shared))
                continue
        built.append(build_metric(value, judge, named))
    return built
