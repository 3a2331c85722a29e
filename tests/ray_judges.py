"""Judge factories the Ray tests name as ``"ray_judges:NAME"`` (importable on the workers,
which get tests/ on their PYTHONPATH)."""

from __future__ import annotations

import os
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
    on its 30th call, once in the cluster (the first to create ``$RAGRECALL_TEST_KILL``)."""
    calls = 0

    def reply(messages: Sequence[BaseMessage]) -> Any:
        nonlocal calls
        calls += 1
        time.sleep(0.02)
        marker = os.environ.get("RAGRECALL_TEST_KILL")
        if marker and calls == 30:
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                pass
            else:
                ray.kill(ray.get_runtime_context().current_actor, no_restart=False)
                time.sleep(30)
        return keyword_reply(messages)

    return ScriptedJudge(reply=reply)
