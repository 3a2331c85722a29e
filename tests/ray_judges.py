"""Judge factories the Ray tests name as ``"ray_judges:NAME"`` (importable on the workers,
which get tests/ on their PYTHONPATH)."""

from __future__ import annotations

from fakes import ScriptedJudge
from langchain_core.language_models import BaseChatModel


def keyword() -> BaseChatModel:
    """The deterministic keyword judge of ``fakes``."""
    return ScriptedJudge()
