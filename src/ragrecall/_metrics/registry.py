"""Metric classes by name, and ``METRICS``: the one list of the built-in metrics.

Each line of ``METRICS`` names a metric's module under ``ragrecall._metrics`` (a file, or a
folder whose ``__init__`` exports the class) and its class. Adding a metric is its folder and
one line here. The registry imports each module (defining the class registers its ``name``,
``Metric.__init_subclass__``), so ``ragrecall eval --metric``, ``testing``, the results file,
the cost estimate and the adapters' wrappers find it. The top level never imports the
registry (``import ragrecall`` stays lazy): its metric table is written from ``METRICS`` by
``python -m ragrecall._metrics.registry``, and a unit test checks that it is current.

Importing this module imports no metric (nor pydantic or langchain): ``BUILT_IN_NAMES`` is
read from ``METRICS`` alone (each built-in module is named as its metric), so the command
line lists the metrics in ``eval --help`` without loading them; the first function called
that needs a class imports them all.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from functools import cache
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._core.schemas import RecallResult
    from .._judge.resolve import JudgeLike
    from .base import Metric, MetricOptions

__all__ = [
    "BUILT_IN_NAMES",
    "METRICS",
    "MetricOptions",
    "build_metrics",
    "metric_class",
    "metric_classes",
    "metric_names",
    "result_type",
    "top_level_table",
]

# The built-in metrics, in the order `ragrecall eval --help` lists them: (module, class).
METRICS: tuple[tuple[str, str], ...] = (
    ("context_precision", "ContextPrecision"),
    ("context_recall", "ContextRecall"),
    ("response_recall", "ResponseRecall"),
    ("chunk_recall", "ChunkRecall"),
    ("question_recall", "QuestionRecall"),
    ("sufficiency", "Sufficiency"),
    ("recall_precision", "RecallPrecision"),
    ("retrieval_recall", "RetrievalRecall"),
)

# The built-in metrics' names, without importing them: each module is named as its metric
# (metric_names() starts with these; a unit test checks that they are the classes' names).
BUILT_IN_NAMES: tuple[str, ...] = tuple(module for module, _ in METRICS)


def __getattr__(name: str) -> object:
    """``MetricOptions``, imported on first use (it lives in ``base``, with the metrics)."""
    if name == "MetricOptions":
        from .base import MetricOptions

        return MetricOptions
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def metric_classes() -> tuple[type[Metric[RecallResult]], ...]:
    """The built-in metric classes, in ``METRICS``' order (imported on the first call)."""
    return tuple(
        getattr(import_module(f"{__package__}.{module}"), name) for module, name in METRICS
    )


def _registered() -> dict[str, type[Metric[RecallResult]]]:
    """Every metric class by name: the built-in ones (imported here) and any other defined."""
    from .base import Metric

    metric_classes()
    return Metric.registered


def metric_names() -> tuple[str, ...]:
    """Every registered metric name: the built-in ones, then others in registration order."""
    registered = _registered()
    return tuple(dict.fromkeys([*(cls.name for cls in metric_classes()), *registered]))


def metric_class(name: str) -> type[Metric[RecallResult]]:
    """The class registered as ``name``; ValueError naming the choices when there is none."""
    try:
        return _registered()[name]
    except KeyError:
        raise ValueError(
            f"unknown metric {name!r}; choose from {', '.join(metric_names())}"
        ) from None


def result_type(name: str) -> type[RecallResult]:
    """The result model of the metric ``name`` (RecallResult for a name not registered)."""
    from .._core.schemas import RecallResult

    cls = _registered().get(name)
    return cls.result_type if cls is not None else RecallResult


def build_metrics(
    names: Sequence[str], judge: JudgeLike, options: MetricOptions | None = None
) -> list[Metric[RecallResult]]:
    """Metric objects by name, sharing one judge (resolved once when any metric needs it)."""
    from .._judge.resolve import resolve_judge
    from .base import MetricOptions

    options = options or MetricOptions()
    classes = [metric_class(name) for name in names]
    shared = resolve_judge(judge) if any(c.uses_judge for c in classes) else judge
    return [cls.from_options(shared, options) for cls in classes]


_BEGIN = "# The metrics, written from registry.METRICS by python -m ragrecall._metrics.registry"
_END = "# (end of the metrics)"


def top_level_table() -> str:
    """The metrics' block of ``ragrecall/__init__.py``: their lazy table entries, imports for
    type checkers and ``__all__`` names."""
    names = sorted(name for _, name in METRICS)
    module = {name: module for module, name in METRICS}
    lines = [_BEGIN, "_EXPORTS |= {"]
    lines += [f'    "{name}": "._metrics.{module[name]}",' for name in names]
    lines += ["}", "if _typing.TYPE_CHECKING:"]
    lines += [f"    from ._metrics.{m} import {name}" for m, name in sorted(METRICS)]
    lines += ["__all__ += [", *(f'    "{name}",' for name in names), "]", "__all__.sort()", _END]
    return "\n".join(lines) + "\n"


def _write_top_level(check: bool) -> bool:
    """Put ``top_level_table()`` between the markers of ``ragrecall/__init__.py``; with
    ``check``, only say whether it is there already."""
    path = Path(__file__).parents[1] / "__init__.py"
    text = path.read_text()
    start, end = text.index(_BEGIN), text.index(_END) + len(_END) + 1
    new = text[:start] + top_level_table() + text[end:]
    if not check and new != text:
        path.write_text(new)
    return new == text


if __name__ == "__main__":  # `python -m ragrecall._metrics.registry [--check]`
    check = "--check" in sys.argv[1:]
    current = _write_top_level(check)
    sys.exit(1 if check and not current else 0)
