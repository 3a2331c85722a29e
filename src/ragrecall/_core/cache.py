"""Where ragrecall keeps files between runs: the embedded judge's model and the claim store."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

__all__ = ["ENV_CACHE", "ENV_CLAIMS_STORE", "cache_root", "claims_store_path"]

ENV_CACHE = "RAGRECALL_CACHE_DIR"
ENV_CLAIMS_STORE = "RAGRECALL_CLAIMS_STORE"


def cache_root() -> Path:
    """``$RAGRECALL_CACHE_DIR``, else the user cache (honours XDG_CACHE_HOME)."""
    return Path(os.environ.get(ENV_CACHE) or platformdirs.user_cache_dir("ragrecall"))


def claims_store_path() -> Path:
    """The default claim store: ``$RAGRECALL_CLAIMS_STORE``, else ``claims.sqlite`` in the
    cache root."""
    return Path(os.environ.get(ENV_CLAIMS_STORE) or cache_root() / "claims.sqlite")
