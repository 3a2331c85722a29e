"""Where ``RecallLogger`` sends its records: a JSONL file, SQLite, LangSmith feedback, or any
callable (``Sink`` is the protocol); ``LoggerStats`` counts what the logger did.
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
}


__getattr__, __dir__ = _lazy(__name__, _EXPORTS)


if _typing.TYPE_CHECKING:
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
    "CallableSink",
    "JsonlSink",
    "LangSmithSink",
    "LoggerStats",
    "RecallRecord",
    "SQLiteSink",
    "Sink",
]
