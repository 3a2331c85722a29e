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
make picklable judge factories for specs; ``metric_classes`` are the built-in metrics a name
can call for (the adapters make their named wrappers from them).

Each finished sample is a ``Record`` (handed to ``Engine.score``'s ``on_record``);
``read_records`` reads a run's records back from its output, a results file or a Ray run's
directory alike.
"""

import typing as _typing

from ._core.lazy import lazy as _lazy

# Each public name and the module it lives in, imported on first use.
_EXPORTS: dict[str, str] = {
    "BatchEngine": "ragrecall._running.engines.batch.engine",
    "Budget": "ragrecall._running.budget",
    "Engine": "ragrecall._running.engines.base",
    "Outcome": "ragrecall._running.engines.base",
    "RunSettings": "ragrecall._running.engines.base",
    "LocalEngine": "ragrecall._running.engines.local",
    "Record": "ragrecall._running.store",
    "read_records": "ragrecall._running.output",
    "MetricLike": "ragrecall._running.spec",
    "MetricSpec": "ragrecall._running.spec",
    "factory": "ragrecall._running.spec",
    "server": "ragrecall._running.spec",
    "metric_classes": "ragrecall._metrics.registry",
}


__getattr__, __dir__ = _lazy(__name__, _EXPORTS)


if _typing.TYPE_CHECKING:
    from ._metrics.registry import metric_classes
    from ._running.budget import Budget
    from ._running.engines.base import Engine, Outcome, RunSettings
    from ._running.engines.batch.engine import BatchEngine
    from ._running.engines.local import LocalEngine
    from ._running.output import read_records
    from ._running.spec import MetricLike, MetricSpec, factory, server
    from ._running.store import Record

__all__ = [
    "BatchEngine",
    "Budget",
    "Engine",
    "LocalEngine",
    "MetricLike",
    "MetricSpec",
    "Outcome",
    "Record",
    "RunSettings",
    "factory",
    "metric_classes",
    "read_records",
    "server",
]
