"""Gate recall in your own test suite.

    from ragrecall.testing import assert_recall

    def test_retriever_finds_the_facts():
        sample = {"user_input": q, "reference": gold, "retrieved_contexts": retrieve(q)}
        assert_recall(sample, min_score=0.8)

A failure lists the score, the missing claims with the judge's reason for each, and the
supported ones with their chunk and evidence; an unscorable sample fails with its reason.
With the pytest plugin (installed with ragrecall), the ``assert_recall`` fixture does the same
with the session's judge: ``--recall-judge`` / ``$RAGRECALL_JUDGE`` (``local`` or
``provider:model``), or your own ``recall_judge`` fixture returning a chat model.

To test code around a judge without a model, ``ScriptedJudge(reply=...)`` is a chat model
that answers what ``reply(messages)`` returns; its default, ``keyword_reply``, supports a
claim when all its words occur in a passage.
"""

import typing as _typing

from ._core.lazy import lazy as _lazy

# Each public name and the module it lives in, imported on first use.
_EXPORTS: dict[str, str] = {
    "RecallAssertionError": "ragrecall._metrics.assertions",
    "aassert_recall": "ragrecall._metrics.assertions",
    "assert_recall": "ragrecall._metrics.assertions",
    "recall_metric": "ragrecall._metrics.assertions",
    "Reply": "ragrecall._judge.scripted",
    "ScriptedJudge": "ragrecall._judge.scripted",
    "TextOnlyJudge": "ragrecall._judge.scripted",
    "keyword_reply": "ragrecall._judge.scripted",
    "passages": "ragrecall._judge.scripted",
}


__getattr__, __dir__ = _lazy(__name__, _EXPORTS)


if _typing.TYPE_CHECKING:
    from ._judge.scripted import Reply, ScriptedJudge, TextOnlyJudge, keyword_reply, passages
    from ._metrics.assertions import (
        RecallAssertionError,
        aassert_recall,
        assert_recall,
        recall_metric,
    )

__all__ = [
    "RecallAssertionError",
    "Reply",
    "ScriptedJudge",
    "TextOnlyJudge",
    "aassert_recall",
    "assert_recall",
    "keyword_reply",
    "passages",
    "recall_metric",
]
