"""A ``ragrecall`` process's slow judge, and a signal sent to it a moment after it starts (the
system tests and ``benchmarks/speed/signals.py``)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

from ragrecall.testing import ScriptedJudge, keyword_reply


def slow_judge() -> ScriptedJudge:
    """The keyword fake judge, 0.15 s a call (``--judge-factory cli_signals:slow_judge``), so a
    signal or a kill lands while samples are in flight."""

    def reply(messages: Sequence[BaseMessage]) -> Any:
        time.sleep(0.15)
        return keyword_reply(messages)

    return ScriptedJudge(reply=reply)


def signal_after_start(
    process: subprocess.Popen[str], sig: int, delay: float, timeout: float = 120
) -> tuple[int, list[str]]:
    """Send ``sig`` ``delay`` seconds after ``process`` (run with ``-X importtime``, its
    stderr piped) reports ``ragrecall.cli``'s first import, ``_early``: before that the
    interpreter itself is starting. Returns the exit code and the stderr lines, the import
    times left out."""
    assert process.stderr is not None
    for line in process.stderr:
        if "ragrecall.cli._early" in line:
            break
    time.sleep(delay)
    process.send_signal(sig)
    _, err = process.communicate(timeout=timeout)
    lines = [line for line in err.splitlines() if not line.startswith("import time:")]
    return process.returncode, lines
