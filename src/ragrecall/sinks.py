"""Where ``RecallLogger`` sends its records: a JSONL file, SQLite, LangSmith feedback, or any
callable (``Sink`` is the protocol); ``LoggerStats`` counts what the logger did.
"""

import typing as _typing

from ._lazy import lazy as _lazy

# Each public name and the module it lives in, imported on first use.
_EXPORTS: dict[str, str] = {
    "CallableSink": "ragrecall._sinks",
    "JsonlSink": "ragrecall._sinks",
    "LangSmithSink": "ragrecall._sinks",
    "RecallRecord": "ragrecall._sinks",
    "SQLiteSink": "ragrecall._sinks",
    "Sink": "ragrecall._sinks",
    "LoggerStats": "ragrecall._logger",
}


__getattr__, __dir__ = _lazy(__name__, _EXPORTS)


if _typing.TYPE_CHECKING:
    from ._logger import LoggerStats
    from ._sinks import CallableSink, JsonlSink, LangSmithSink, RecallRecord, Sink, SQLiteSink

__all__ = [
    "CallableSink",
    "JsonlSink",
    "LangSmithSink",
    "LoggerStats",
    "RecallRecord",
    "SQLiteSink",
    "Sink",
]
