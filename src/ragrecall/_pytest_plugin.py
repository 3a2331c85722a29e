"""The pytest plugin (entry point ``pytest11``): the ``recall_judge`` and ``assert_recall``
fixtures. Imports ragrecall only when a test asks for a fixture, so test runs that do not use
it pay nothing.

    def test_recall(assert_recall):
        assert_recall(sample, min_score=0.8)

The judge comes from ``--recall-judge`` or ``$RAGRECALL_JUDGE`` (``local`` or
``provider:model``; default the embedded judge), resolved once per session; override the
``recall_judge`` fixture in a conftest.py to return your own chat model.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

__all__ = ["assert_recall", "pytest_addoption", "recall_judge"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragrecall")
    group.addoption(
        "--recall-judge",
        default=None,
        help="judge for the assert_recall fixture: 'local' or 'provider:model' "
        "(default: $RAGRECALL_JUDGE, else the embedded judge)",
    )


@pytest.fixture(scope="session")
def recall_judge(request: pytest.FixtureRequest) -> Any:
    """The session's judge chat model (override this fixture to supply your own)."""
    from ragrecall.judges import resolve_judge

    spec = request.config.getoption("--recall-judge") or os.environ.get("RAGRECALL_JUDGE")
    return resolve_judge(spec or None)


@pytest.fixture
def assert_recall(recall_judge: Any) -> Callable[..., Any]:
    """``assert_recall(sample, min_score=1.0, metric=None)`` with the session's judge."""
    from ragrecall import Metric, testing

    def check(sample: Any, min_score: float = 1.0, *, metric: Any = None) -> Any:
        judge = None if isinstance(metric, Metric) else recall_judge
        return testing.assert_recall(sample, min_score, judge=judge, metric=metric)

    return check
