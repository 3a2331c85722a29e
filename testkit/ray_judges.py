"""Judge factories the Ray tests name as ``"ray_judges:NAME"`` (importable on the workers,
which get tests/ on their PYTHONPATH)."""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Sequence
from typing import Any

import ray
from fakes import ScriptedJudge, keyword_reply
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage


def keyword() -> BaseChatModel:
    """The deterministic keyword judge of ``fakes``."""
    return ScriptedJudge()


def killer() -> BaseChatModel:
    """The keyword judge, slowed to 20 ms a call, that kills its own Ray actor (``ray.kill``)
    when it is shown a passage saying ``kill=me``, once in the cluster (the first to create the
    file ``$RAGRECALL_TEST_KILL``): the batch in flight is lost with the actor."""

    def reply(messages: Sequence[BaseMessage]) -> Any:
        time.sleep(0.02)
        marker = os.environ.get("RAGRECALL_TEST_KILL")
        if marker and any("kill=me" in str(m.content) for m in messages):
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                pass
            else:
                ray.kill(ray.get_runtime_context().current_actor, no_restart=False)
                time.sleep(30)
        return keyword_reply(messages)

    return ScriptedJudge(reply=reply)


def counting() -> BaseChatModel:
    """The keyword judge, slowed to 50 ms a call, that appends a line to the file
    ``$RAGRECALL_TEST_CALLS`` as each call starts (a provider bills a request it received,
    answered or not; the file counts the calls of every process): the SHA-256 of the
    request's messages (16 hex digits) and the first ``zq<N>x`` tag in them (``-`` if none)."""

    def reply(messages: Sequence[BaseMessage]) -> Any:
        path = os.environ.get("RAGRECALL_TEST_CALLS")
        if path:
            text = "\n".join(f"{m.type}: {m.content}" for m in messages)
            digest = hashlib.sha256(text.encode()).hexdigest()[:16]
            found = re.search(r"zq\d+x", text)
            line = f"{digest} {found.group(0) if found else '-'}\n"
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            try:
                os.write(fd, line.encode())
            finally:
                os.close(fd)
        time.sleep(0.05)
        return keyword_reply(messages)

    return ScriptedJudge(reply=reply)
