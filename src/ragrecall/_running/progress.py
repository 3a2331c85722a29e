"""The progress bar of ``evaluate``, ``ragrecall eval`` and ``generate``: rate and ETA, on
stderr."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

__all__ = ["progress"]


class progress:
    """``with progress(total, show) as advance: ... advance()``. ``show=None``: only when
    stderr is a terminal. ``doing`` and ``unit`` name the work and what is counted."""

    def __init__(
        self, total: int, show: bool | None, doing: str = "scoring", unit: str = "samples"
    ):
        self.total = total
        self.doing, self.unit = doing, unit
        self.show = sys.stderr.isatty() if show is None else show
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
