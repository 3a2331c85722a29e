"""Exit codes of every command, and the way out of a command that cannot go on.

    0    done (and every gate passed)
    1    a gate failed (--min-score, --max-unscorable; compare: a significant drop)
    2    bad usage or input (the message names the argument, file, row or field)
    3    stopped at the budget (--max-calls, --max-tokens); what finished is saved
    4    the judge could not start (its model is missing or corrupt, its server would not run),
         or it failed every call of a run (a server that cannot be reached): no score was made
    5    an internal error (a bug: please report it with the traceback of RAGRECALL_DEBUG=1)
    6    an output could not be written (a full disk, a folder removed mid-run); the message
         says what was saved and where
    130  interrupted (Ctrl-C); what finished is saved
    143  terminated (SIGTERM); what finished is saved

SIGTERM is handled as Ctrl-C is: the run stops submitting, closes its results file and says
what was saved (``_early`` holds the one handler of both).
"""

from __future__ import annotations

import errno
import os
import tempfile
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape

from .._core.errors import JudgeModelError
from ._early import INTERRUPTED, TERMINATED, interrupted, running
from ._text import PlainConsole

if TYPE_CHECKING:
    from .._running.store import Record

__all__ = [
    "BUDGET_STOPPED",
    "GATE_FAILED",
    "INTERNAL_ERROR",
    "INTERRUPTED",
    "JUDGE_UNAVAILABLE",
    "OK",
    "OUTPUT_FAILED",
    "TERMINATED",
    "USAGE_ERROR",
    "guarded",
    "interrupted",
    "judge_failure",
    "output_failed",
    "stopped",
]

OK, GATE_FAILED, USAGE_ERROR, BUDGET_STOPPED, JUDGE_UNAVAILABLE, INTERNAL_ERROR = 0, 1, 2, 3, 4, 5
OUTPUT_FAILED = 6

# Errors of the machine, not of ragrecall: a write that failed for one of these is exit 6.
_WRITE_FAULTS = {
    errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EFBIG, errno.ENOENT,
    errno.EACCES, errno.EPERM,
}  # fmt: skip


def judge_failure(error: Exception, finished: int = 0) -> str:
    """What a judge that stopped working means: it could not start, or (after ``finished``
    samples of this run) it failed mid-run."""
    if finished:
        return (
            f"the judge failed mid-run, after {finished} samples of this run were scored: {error}"
        )
    return f"the judge could not start: {error}"


def output_failed(
    error: OSError,
    what: str,
    records: Sequence[Record] | None,
    err: PlainConsole,
    note: str = "the summary above stands",
) -> int:
    """Say that ``what`` could not be written, and ``note``; when the results live only in
    memory (``records``: no --out), save them to a file in the temporary folder first, so that
    a full disk at the end of a run does not lose them. Returns OUTPUT_FAILED."""
    saved = ""
    if records:
        fallback = Path(tempfile.gettempdir()) / f"ragrecall-results-{os.getpid()}.jsonl"
        try:
            with fallback.open("w", encoding="utf-8") as f:
                f.writelines(r.to_json() + "\n" for r in records)
            saved = f"; the {len(records)} results were saved to {fallback}"
        except OSError as again:
            fallback.unlink(missing_ok=True)
            saved = f"; saving the results to {fallback} failed too ({again.strerror or again})"
    err.print(
        f"[red]error:[/] {what} could not be written ({error.strerror or error}){saved}; {note}",
        soft_wrap=True,
    )
    return OUTPUT_FAILED


def stopped(exc: KeyboardInterrupt | JudgeModelError, finished: int = 0) -> tuple[int, str]:
    """The exit code and message of a command stopped by an interrupt or by a judge that
    could not start, or failed after ``finished`` samples (every command's, and ``eval``'s
    with what it saved)."""
    if isinstance(exc, KeyboardInterrupt):
        code, word = interrupted()
        return code, f"[yellow]{word}[/]"
    return JUDGE_UNAVAILABLE, f"[red]error:[/] {escape(judge_failure(exc, finished))}"


def guarded(command: Callable[[], int]) -> int:
    """Run ``command``; an interrupt, a judge that cannot start or a bug becomes its exit code
    and a short message on stderr, never a traceback (unless ``RAGRECALL_DEBUG`` is set)."""
    err = PlainConsole(stderr=True, soft_wrap=True)
    try:
        with running():  # inside the try: from here a signal is a KeyboardInterrupt caught below
            return command()
    except (KeyboardInterrupt, JudgeModelError) as exc:
        code, message = stopped(exc)
        err.print(message, highlight=False)
        return code
    except Exception as exc:
        if _interrupt_behind(exc):  # Python 3.11 wraps one raised in __set_name__ (an import)
            code, message = stopped(KeyboardInterrupt())
            err.print(message, highlight=False)
            return code
        if isinstance(exc, OSError) and exc.errno in _WRITE_FAULTS:
            err.print(
                f"[red]error:[/] could not write {exc.filename or 'a file'}: "
                f"{exc.strerror or exc}; what finished is in the results file if one was given"
            )
            return OUTPUT_FAILED
        if os.environ.get("RAGRECALL_DEBUG"):
            traceback.print_exc()
        err.print(
            f"[red]internal error:[/] {type(exc).__name__}: {exc}. This is a "
            "bug in ragrecall or a fault of this machine (a full disk, a lost file); what "
            "finished is in the results file if one was given. Run again with "
            "RAGRECALL_DEBUG=1 for the traceback, and please report it."
        )
        return INTERNAL_ERROR


def _interrupt_behind(error: BaseException) -> bool:
    """Whether an interrupt caused ``error`` (its cause or context, at any depth)."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False
