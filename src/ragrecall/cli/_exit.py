"""Exit codes of every command, and the way out of a command that cannot go on.

    0    done (and every gate passed)
    1    a gate failed (--min-score, --max-unscorable; compare: a significant drop)
    2    bad usage or input (the message names the argument, file, row or field)
    3    stopped at the budget (--max-calls, --max-tokens); what finished is saved
    4    the judge could not start (its model is missing or corrupt, its server would not run)
    5    an internal error (a bug: please report it with the traceback of RAGRECALL_DEBUG=1)
    130  interrupted (Ctrl-C); what finished is saved
    143  terminated (SIGTERM); what finished is saved

SIGTERM is handled as Ctrl-C is: the run stops submitting, closes its results file and says
what was saved.
"""

from __future__ import annotations

import os
import signal
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from rich.markup import escape

from .._errors import JudgeModelError
from ._text import PlainConsole

__all__ = [
    "BUDGET_STOPPED",
    "GATE_FAILED",
    "INTERNAL_ERROR",
    "INTERRUPTED",
    "JUDGE_UNAVAILABLE",
    "OK",
    "TERMINATED",
    "USAGE_ERROR",
    "guarded",
    "interrupted",
    "stopped",
]

OK, GATE_FAILED, USAGE_ERROR, BUDGET_STOPPED, JUDGE_UNAVAILABLE, INTERNAL_ERROR = 0, 1, 2, 3, 4, 5
INTERRUPTED, TERMINATED = 130, 143

_terminated = threading.Event()


def interrupted() -> tuple[int, str]:
    """The exit code and word for the interrupt being handled (Ctrl-C or SIGTERM)."""
    if _terminated.is_set():
        return TERMINATED, "terminated"
    return INTERRUPTED, "interrupted"


def stopped(exc: KeyboardInterrupt | JudgeModelError) -> tuple[int, str]:
    """The exit code and message of a command stopped by an interrupt or by a judge that
    could not start (every command's, and ``eval``'s with what it saved)."""
    if isinstance(exc, KeyboardInterrupt):
        code, word = interrupted()
        return code, f"[yellow]{word}[/]"
    return JUDGE_UNAVAILABLE, f"[red]error:[/] the judge could not start: {escape(str(exc))}"


def guarded(command: Callable[[], int]) -> int:
    """Run ``command``; an interrupt, a judge that cannot start or a bug becomes its exit code
    and a short message on stderr, never a traceback (unless ``RAGRECALL_DEBUG`` is set)."""
    err = PlainConsole(stderr=True, soft_wrap=True)
    with _sigterm_as_interrupt():
        try:
            return command()
        except (KeyboardInterrupt, JudgeModelError) as exc:
            code, message = stopped(exc)
            err.print(message, highlight=False)
            return code
        except Exception as exc:
            if os.environ.get("RAGRECALL_DEBUG"):
                traceback.print_exc()
            err.print(
                f"[red]internal error:[/] {type(exc).__name__}: {exc}. This is a "
                "bug in ragrecall or a fault of this machine (a full disk, a lost file); what "
                "finished is in the results file if one was given. Run again with "
                "RAGRECALL_DEBUG=1 for the traceback, and please report it."
            )
            return INTERNAL_ERROR


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """While inside, SIGTERM interrupts as Ctrl-C does (``interrupted()`` tells them apart)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _terminated.clear()
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    _terminated.set()
    on_interrupt = signal.getsignal(signal.SIGINT)
    if callable(on_interrupt):  # Python's, or asyncio.run's (which cancels the run first)
        on_interrupt(signal.SIGINT, frame)
    else:
        raise KeyboardInterrupt
