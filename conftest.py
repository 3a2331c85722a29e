"""Shared fixtures: one embedded judge per test session (its server takes seconds to start),
and a claim store of the session's own (the default one lives in the user cache)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import pytest

from ragrecall import JudgeModelError
from ragrecall.judges import LocalJudge, resolve_model


def pytest_configure(config: pytest.Config) -> None:
    store = os.path.join(tempfile.mkdtemp(prefix="ragrecall-tests-"), "claims.sqlite")
    os.environ["RAGRECALL_CLAIMS_STORE"] = store


# A test's tier is the folder after ``tests``: tests/unit, tests/system, tests/judge (likewise in
# each adapter's tests/). The folder adds its marker; the unit tier is what neither marker names.
TIERS = ("unit", "system", "judge")


def _tier(item: pytest.Item) -> str | None:
    parts = item.path.parts
    for i, part in enumerate(parts[:-2]):
        if part == "tests" and parts[i + 1] in TIERS:
            return parts[i + 1]
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test is marked by its folder; a marker that contradicts the folder is refused (a
    ``system`` or ``judge`` test under tests/unit, a ``judge`` test under tests/system; a judge
    test may also be ``system``). A test that asks for the embedded judge must sit in the judge
    tier, so that the unit tier (``-m "not system and not judge"``) never loads the model."""
    for item in items:
        tier = _tier(item)
        if tier is None:
            raise pytest.UsageError(f"{item.nodeid}: not in a tier's folder ({', '.join(TIERS)})")
        marked = {name for name in ("system", "judge") if item.get_closest_marker(name)}
        wrong = marked - {"unit": set(), "system": {"system"}, "judge": {"system", "judge"}}[tier]
        if wrong:
            raise pytest.UsageError(
                f"{item.nodeid} is marked {' and '.join(sorted(wrong))} but sits in the {tier} "
                f"tier: move it to tests/{'judge' if 'judge' in wrong else 'system'}"
            )
        if tier != "unit":
            item.add_marker(tier)
        if "local_judge" in getattr(item, "fixturenames", ()) and not item.get_closest_marker(
            "judge"
        ):
            raise pytest.UsageError(f"{item.nodeid} uses local_judge: move it to tests/judge")


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
