"""Public submodules whose names are imported on first use (as langchain_core's lazy tables):
``__getattr__, __dir__ = lazy(__name__, _EXPORTS)`` where ``_EXPORTS`` maps each public name
to the module that defines it."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Mapping
from importlib import import_module

__all__ = ["lazy"]


def lazy(
    module: str, exports: Mapping[str, str], moved: Mapping[str, str] | None = None
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``module``: a name is imported from its module
    when first asked for, then kept in ``module``'s namespace; ``dir()`` lists ``__all__``.
    A name in ``moved`` (name -> its one public module) still answers, with a
    DeprecationWarning, until ragrecall 0.3."""

    def __getattr__(name: str) -> object:
        source = exports.get(name)
        if source is None and moved and name in moved:
            warnings.warn(
                f"{module}.{name} is deprecated and will be removed in ragrecall 0.3; use "
                f"{moved[name]}.{name}",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(import_module(moved[name]), name)
        if source is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(import_module(source), name)
        setattr(sys.modules[module], name, value)
        return value

    def __dir__() -> list[str]:
        return list(getattr(sys.modules[module], "__all__", exports))

    return __getattr__, __dir__
