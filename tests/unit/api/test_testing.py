"""ragrecall.testing.assert_recall and the pytest plugin's fixtures."""

from __future__ import annotations

from typing import Any

import pytest
from fakes import ScriptedJudge

from ragrecall import ClaimCache, ContextRecall
from ragrecall.testing import RecallAssertionError, aassert_recall, assert_recall

pytest_plugins = ["pytester"]

SAMPLE: dict[str, Any] = {
    "user_input": "What do cats do?",
    "reference": "Cats purr. Cats fly.",
    "retrieved_contexts": ["Cats purr when content."],
}


def metric() -> ContextRecall:
    return ContextRecall(ScriptedJudge(), claims="sentences", cache=ClaimCache())


def test_passes_at_or_above_the_minimum_and_returns_the_result() -> None:
    result = assert_recall(SAMPLE, min_score=0.5, metric=metric())
    assert result.score == 0.5


def test_failure_lists_missing_claims_with_reasons_and_the_supported_ones() -> None:
    with pytest.raises(RecallAssertionError) as info:
        assert_recall(SAMPLE, min_score=0.8, judge=ScriptedJudge())
    message = str(info.value)
    assert "context_recall 0.50 < min_score 0.80 for 'What do cats do?'" in message
    assert "  - Cats fly.  (the judge found no support)" in message
    assert "  + Cats purr. [chunk 1]" in message
    assert info.value.result.missing == ["Cats fly."]


def test_unscorable_fails_with_the_reason() -> None:
    with pytest.raises(
        RecallAssertionError, match=r"could not score the sample.*reference is empty"
    ):
        assert_recall({"reference": "", "retrieved_contexts": ["x"]}, metric=metric())


def test_a_metric_object_and_a_judge_together_are_refused() -> None:
    with pytest.raises(ValueError, match="either a metric object or a judge"):
        assert_recall(SAMPLE, metric=metric(), judge=ScriptedJudge())


async def test_async_variant() -> None:
    with pytest.raises(RecallAssertionError):
        await aassert_recall(SAMPLE, metric=metric())


@pytest.fixture(autouse=True)
def quiet_ini(request: pytest.FixtureRequest) -> None:
    if "pytester" in request.fixturenames:
        pytester: pytest.Pytester = request.getfixturevalue("pytester")
        pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")


def test_plugin_fixtures_gate_a_users_test_suite(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import pytest
        from fakes import ScriptedJudge

        @pytest.fixture(scope="session")
        def recall_judge():
            return ScriptedJudge()
        """
    )
    pytester.makepyfile(
        """
        SAMPLE = {"user_input": "q", "reference": "Cats purr. Cats fly.",
                  "retrieved_contexts": ["Cats purr when content."]}

        def test_ok(assert_recall):
            assert assert_recall(SAMPLE, min_score=0.5, metric="context_recall").score == 0.5

        def test_gate(assert_recall):
            assert_recall(SAMPLE, min_score=0.9)
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")  # the pytest11 entry point loads it
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*RecallAssertionError: context_recall 0.50 < min_score 0.90*", "*- Cats fly.*"]
    )


def test_plugin_option_shows_in_help(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["*--recall-judge*"])
