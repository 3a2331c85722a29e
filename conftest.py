"""Shared fixtures: one embedded judge per test session (its server takes seconds to start)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ragrecall import JudgeModelError, LocalJudge, resolve_model


@pytest.fixture(scope="session")
def local_judge() -> Iterator[LocalJudge]:
    """The real embedded judge, found as users find it; skips where no model is installed."""
    try:
        resolve_model()
    except JudgeModelError as exc:
        pytest.skip(f"no judge model: {exc}")
    judge = LocalJudge()
    yield judge
    judge._server.stop()
