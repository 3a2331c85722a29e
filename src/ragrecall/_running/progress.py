"""The progress bar of ``evaluate``, ``ragrecall eval`` and ``generate``: rate and ETA, on
stderr in a terminal, in the cell's output in a notebook (rich's Jupyter support, which
needs ``ipywidgets``)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib.util import find_spec
from typing import Any

__all__ = ["notebook", "progress"]


def notebook() -> bool:
    """Whether this runs in a notebook where rich can draw a live bar: a Jupyter kernel (as
    rich detects it: ``Console().is_jupyter``) with ``ipywidgets`` installed."""
    if "IPython" not in sys.modules:  # no kernel without IPython loaded: rich is not imported
        return False
    from rich.console import Console

    return Console().is_jupyter and find_spec("ipywidgets") is not None


class progress:
    """``with progress(total, show) as advance: ... advance()``. ``show=None``: when stderr
    is a terminal or in a notebook that can draw it (``notebook()``); off elsewhere (a pipe,
    a file, CI). ``doing`` and ``unit`` name the work and what is counted."""

    def __init__(
        self, total: int, show: bool | None, doing: str = "scoring", unit: str = "samples"
    ):
        self.total = total
        self.doing, self.unit = doing, unit
        self.show = (sys.stderr.isatty() or notebook()) if show is None else show
        self._bar: Any = None

    def __enter__(self) -> Callable[[], None]:
        if not self.show:
            return lambda: None
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            Task,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.text import Text

        unit = self.unit

        class Rate(ProgressColumn):
            def render(self, task: Task) -> Text:
                speed = task.finished_speed or task.speed
                shown = "" if speed is None else f"{speed:.2f} {unit}/s"
                return Text(shown, style="progress.data.speed")

        bar = Progress(
            self.doing,
            BarColumn(),
            MofNCompleteColumn(),
            Rate(),
            TimeElapsedColumn(),
            "eta",
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self._bar = bar
        bar.start()
        task = bar.add_task(self.doing, total=self.total)
        return lambda: bar.advance(task)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
