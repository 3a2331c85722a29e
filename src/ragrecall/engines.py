"""Where ``evaluate`` runs a dataset: engines behind one small interface.

    import ragrecall
    from ragrecall.engines import BatchEngine

    report = ragrecall.evaluate(data, ["context_recall"], out="results.jsonl",
                                engine=BatchEngine("openai:gpt-4o-mini"), max_calls=10_000)

``LocalEngine`` (the default: this process), ``BatchEngine`` (the provider's Batch API) and
``ragrecall.ray.RayEngine`` (a Ray cluster; imported from there, so that this module never
imports Ray) each implement ``Engine``: ``score`` (and ``ascore``) a dataset's samples into
its own results store, resumed from it, under one ``Budget``. Metrics travel to an engine as
objects, names, ``MetricSpec``s or factories taking the judge; ``factory`` and ``server``
make picklable judge factories for specs.
"""

import typing as _typing

from ._lazy import lazy as _lazy

# Each public name and the module it lives in, imported on first use.
_EXPORTS: dict[str, str] = {
    "BatchEngine": "ragrecall._batch.engine",
    "Budget": "ragrecall._budget",
    "Engine": "ragrecall._engines.base",
    "Outcome": "ragrecall._engines.base",
    "RunSettings": "ragrecall._engines.base",
    "LocalEngine": "ragrecall._engines.local",
    "MetricLike": "ragrecall._metrics.spec",
    "MetricSpec": "ragrecall._metrics.spec",
    "factory": "ragrecall._metrics.spec",
    "server": "ragrecall._metrics.spec",
}


__getattr__, __dir__ = _lazy(__name__, _EXPORTS)


if _typing.TYPE_CHECKING:
    from ._batch.engine import BatchEngine
    from ._budget import Budget
    from ._engines.base import Engine, Outcome, RunSettings
    from ._engines.local import LocalEngine
    from ._metrics.spec import MetricLike, MetricSpec, factory, server

__all__ = [
    "BatchEngine",
    "Budget",
    "Engine",
    "LocalEngine",
    "MetricLike",
    "MetricSpec",
    "Outcome",
    "RunSettings",
    "factory",
    "server",
]
