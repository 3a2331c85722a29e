"""Optional dependencies: a missing one names what to install.

    with requires("to_pandas"):
        import pandas as pd

raises, where pandas is missing, ``ModuleNotFoundError: to_pandas needs pandas: pip install
'ragrecall[pandas]'`` (still a ModuleNotFoundError, so ``except ImportError`` goes on working).
A module missing that is not an optional dependency of ragrecall propagates unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["EXTRAS", "install_hint", "requires"]

# Top-level module -> what to install for it: ragrecall's extra, or the package itself.
EXTRAS = {
    "pandas": "'ragrecall[pandas]'",
    "pyarrow": "'ragrecall[parquet]'",
    "datasets": "'ragrecall[datasets]'",
    "huggingface_hub": "'ragrecall[hub]'",
    "ray": "'ragrecall[ray]'",
    "polars": "'ragrecall[ray]'",
    "xllamacpp": "'ragrecall[model]'",
    "langsmith": "langsmith",
}


def install_hint(module: str) -> str:
    """``pip install ...`` for ``module`` (a dotted name reads as its top-level package)."""
    top = module.partition(".")[0]
    return f"pip install {EXTRAS.get(top, top)}"


@contextmanager
def requires(feature: str) -> Iterator[None]:
    """Imports in this block that fail for a missing optional dependency raise
    ModuleNotFoundError naming ``feature``, the module and the extra to install."""
    try:
        yield
    except ModuleNotFoundError as err:
        top = (err.name or "").partition(".")[0]
        if top not in EXTRAS:
            raise
        raise ModuleNotFoundError(
            f"{feature} needs {top}: {install_hint(top)}", name=err.name
        ) from err
