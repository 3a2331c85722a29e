"""Run a notebook the way a user's Jupyter would: a real kernel, every cell in order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbclient
import nbformat


def run_notebook(path: Path, cwd: Path) -> Any:
    """The executed notebook (cells with their outputs); a failing cell raises."""
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    )
    client.execute()
    return notebook
