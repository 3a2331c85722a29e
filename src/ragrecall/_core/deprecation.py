"""Old names kept for one release: they work, and warn."""

from __future__ import annotations

import sys
import warnings
from typing import TypeVar

__all__ = ["renamed", "superseded"]

T = TypeVar("T")

# ragrecall and its adapters: a warning names the first caller outside them.
_OURS = (
    "ragrecall",
    "langchain_ragrecall",
    "llama_index.evaluation.ragrecall",
    "mlflow_ragrecall",
    "phoenix_ragrecall",
)


def renamed(old: str, new: str, old_value: T | None, new_value: T) -> T:
    """``new_value``, or ``old_value`` with a DeprecationWarning when the caller used ``old``."""
    if old_value is None:
        return new_value
    warnings.warn(
        f"{old} is deprecated and will be removed in ragrecall 0.3; use {new}",
        DeprecationWarning,
        stacklevel=3,
    )
    return old_value


def superseded(old: str, new: str) -> None:
    """A DeprecationWarning that ``old`` gives way to ``new``, raised where the user's code
    called into ragrecall: built directly, by name (``evaluate``, the command line) or through
    an adapter, the user sees one warning, on their own line."""
    warnings.warn(
        f"{old} is deprecated and will be removed in ragrecall 0.3; use {new}",
        DeprecationWarning,
        stacklevel=_outside(),
    )


def _outside() -> int:
    """The ``stacklevel`` (for the caller's ``warnings.warn``) of the first frame outside
    ragrecall and its adapters; the outermost frame when there is none."""
    frame = sys._getframe(2)  # the caller of superseded()
    level = 2
    while frame.f_back is not None and _ours(frame.f_globals.get("__name__", "")):
        frame = frame.f_back
        level += 1
    return level


def _ours(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in _OURS)
