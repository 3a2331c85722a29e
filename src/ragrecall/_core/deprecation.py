"""Old argument names kept for one release: they work, and warn."""

from __future__ import annotations

import warnings
from typing import TypeVar

__all__ = ["renamed"]

T = TypeVar("T")


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
