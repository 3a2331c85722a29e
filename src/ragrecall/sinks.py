"""Where ``RecallLogger`` sends its records: a JSONL file, SQLite, LangSmith feedback, or any
callable (``Sink`` is the protocol); ``LoggerStats`` counts what the logger did.
"""

import typing as _typing
from importlib import import_module as _import_module

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


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ragrecall.sinks' has no attribute {name!r}")
    value = getattr(_import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)


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
