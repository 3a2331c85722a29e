"""Shared fixtures: one embedded judge per test session (its server takes seconds to start),
and a claim store of the session's own (the default one lives in the user cache)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import pytest

from ragrecall import JudgeModelError, LocalJudge, resolve_model


def pytest_configure(config: pytest.Config) -> None:
    store = os.path.join(tempfile.mkdtemp(prefix="ragrecall-tests-"), "claims.sqlite")
    os.environ["RAGRECALL_CLAIMS_STORE"] = store


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that asks for the embedded judge must be marked ``judge``, so that the unit tier
    (``-m "not system and not judge"``) never loads the model."""
    for item in items:
        if "local_judge" in getattr(item, "fixturenames", ()) and not item.get_closest_marker(
            "judge"
        ):
            raise pytest.UsageError(f"{item.nodeid} uses local_judge: mark it judge")


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
