"""Run ``ragrecall`` as its installed script does, and send this process a signal just before
the K-th line that the CLI's hand-over code runs (``ragrecall.cli``'s ``__init__``, ``_early``
and ``_exit``), counted from when ``_early``, the first import, is done: a point in the
program, not in time, so a loaded machine does not move it.

    python signal_at_line.py SIGNAL K ragrecall-arguments...

K = 0 sends nothing and prints the number of such lines the run went through on stderr.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
from types import FrameType
from typing import Any

WATCHED = tuple(f"ragrecall/cli/{name}.py" for name in ("__init__", "_early", "_exit"))


def main() -> None:
    sig, at = signal.Signals[sys.argv[1]], int(sys.argv[2])
    count, seen = 0, ""  # lines since _early was imported; the last watched file

    def line(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count, seen
        if event == "line":
            if count or (seen == WATCHED[1] and frame.f_code.co_filename.endswith(WATCHED[0])):
                count += 1
                if count == at:
                    os.kill(os.getpid(), sig)
            seen = next(w for w in WATCHED if frame.f_code.co_filename.endswith(w))
        return line

    def call(frame: FrameType, event: str, arg: Any) -> Any:
        return line if frame.f_code.co_filename.endswith(WATCHED) else None

    if not at:
        atexit.register(lambda: print(f"lines {count}", file=sys.stderr))
    sys.argv = ["ragrecall", *sys.argv[3:]]  # as the installed script's argv[0]
    sys.settrace(call)
    from ragrecall.cli import main as ragrecall

    sys.exit(ragrecall())


if __name__ == "__main__":
    main()
