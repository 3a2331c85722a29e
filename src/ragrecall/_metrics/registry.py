"""Metric classes by name, and ``METRICS``: the one list of the built-in metrics.

Each line of ``METRICS`` names a metric's module under ``ragrecall._metrics`` (a file, or a
folder whose ``__init__`` exports the class) and its class. Adding a metric is its folder and
one line here. The registry imports each module (defining the class registers its ``name``,
``Metric.__init_subclass__``), so ``ragrecall eval --metric``, ``testing``, the results file,
the cost estimate and the adapters' wrappers find it. The top level never imports the
registry (``import ragrecall`` stays lazy): its metric table is written from ``METRICS`` by
``python -m ragrecall._metrics.registry``, and a unit test checks that it is current.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib import import_module
from pathlib import Path

from .._core.schemas import RecallResult
from .._judge.resolve import JudgeLike, resolve_judge
from .base import Metric, MetricOptions

__all__ = [
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
    ("recall_precision", "RecallPrecision"),
    ("retrieval_recall", "RetrievalRecall"),
)

_BUILT_IN: tuple[type[Metric[RecallResult]], ...] = tuple(
    getattr(import_module(f"{__package__}.{module}"), name) for module, name in METRICS
)
_CLASSES = Metric.registered


def metric_classes() -> tuple[type[Metric[RecallResult]], ...]:
    """The built-in metric classes, in ``METRICS``' order."""
    return _BUILT_IN


def metric_names() -> tuple[str, ...]:
    """Every registered metric name: the built-in ones, then others in registration order."""
    return tuple(dict.fromkeys([*(cls.name for cls in _BUILT_IN), *_CLASSES]))


def metric_class(name: str) -> type[Metric[RecallResult]]:
    """The class registered as ``name``; ValueError naming the choices when there is none."""
    try:
        return _CLASSES[name]
    except KeyError:
        raise ValueError(
            f"unknown metric {name!r}; choose from {', '.join(metric_names())}"
        ) from None


def result_type(name: str) -> type[RecallResult]:
    """The result model of the metric ``name`` (RecallResult for a name not registered)."""
    cls = _CLASSES.get(name)
    return cls.result_type if cls is not None else RecallResult


def build_metrics(
    names: Sequence[str], judge: JudgeLike, options: MetricOptions | None = None
) -> list[Metric[RecallResult]]:
    """Metric objects by name, sharing one judge (resolved once when any metric needs it)."""
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
