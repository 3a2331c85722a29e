"""The progress bar of ``evaluate`` and ``ragrecall eval``: rate and ETA, on stderr."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

__all__ = ["progress"]


class progress:
    """``with progress(total, show) as advance: ... advance()``. ``show=None``: only when
    stderr is a terminal."""

    def __init__(self, total: int, show: bool | None):
        self.total = total
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

        class Rate(ProgressColumn):
            def render(self, task: Task) -> Text:
                speed = task.finished_speed or task.speed
                shown = "" if speed is None else f"{speed:.2f} samples/s"
                return Text(shown, style="progress.data.speed")

        bar = Progress(
            "scoring",
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
        task = bar.add_task("scoring", total=self.total)
        return lambda: bar.advance(task)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
