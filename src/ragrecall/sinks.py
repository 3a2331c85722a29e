"""Where ``RecallLogger`` sends its records: a JSONL file, SQLite, LangSmith feedback, or any
callable (``Sink`` is the protocol); ``LoggerStats`` counts what the logger did. ``watch``
reads the logged records back over time (``ragrecall watch``): each metric per window with its
interval, and a drop against a baseline flagged (``Watch``, its ``Window``s and ``Alarm``s).
"""

import typing as _typing

from ._core.lazy import lazy as _lazy

# Each public name and the module it lives in, imported on first use.
_EXPORTS: dict[str, str] = {
    "CallableSink": "ragrecall._running.sinks",
    "JsonlSink": "ragrecall._running.sinks",
    "LangSmithSink": "ragrecall._running.sinks",
    "RecallRecord": "ragrecall._running.sinks",
    "SQLiteSink": "ragrecall._running.sinks",
    "Sink": "ragrecall._running.sinks",
    "LoggerStats": "ragrecall._running.logger",
    "Alarm": "ragrecall._analysis.watch",
    "Watch": "ragrecall._analysis.watch",
    "Window": "ragrecall._analysis.watch",
    "watch": "ragrecall._analysis.watch",
}


__getattr__, __dir__ = _lazy(__name__, _EXPORTS)


if _typing.TYPE_CHECKING:
    from ._analysis.watch import Alarm, Watch, Window, watch
    from ._running.logger import LoggerStats
    from ._running.sinks import (
        CallableSink,
        JsonlSink,
        LangSmithSink,
        RecallRecord,
        Sink,
        SQLiteSink,
    )

__all__ = [
    "Alarm",
    "CallableSink",
    "JsonlSink",
    "LangSmithSink",
    "LoggerStats",
    "RecallRecord",
    "SQLiteSink",
    "Sink",
    "Watch",
    "Window",
    "watch",
]
