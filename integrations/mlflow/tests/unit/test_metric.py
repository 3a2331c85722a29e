"""make_metric's function, called as mlflow.evaluate calls it: columns in, one score and
justification per row out (None where unscorable, never NaN); the run with a tracking store
is in tests/system."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from mlflow.models import EvaluationMetric
from mlflow_ragrecall import make_metric

from ragrecall import RetrievalRecall

EIFFEL = "The Eiffel Tower is in Paris. The Eiffel Tower was finished in 1889."


def test_each_row_scored_with_its_justification(judge: Any) -> None:
    metric = make_metric("context_recall", judge, claims="sentences")
    assert isinstance(metric, EvaluationMetric)
    assert (metric.name, metric.greater_is_better) == ("context_recall", True)
    value = metric.eval_fn(
        pd.Series(["In Paris.", "They do.", "Rome.", "?"]),
        pd.Series([EIFFEL, "Cats purr.", "", "x"]),
        pd.Series([
            [{"page_content": "The Eiffel Tower is in Paris.", "id": "eiffel"}],
            '["Cats purr."]',  # a JSON list, as a CSV cell holds one
            "The Colosseum is in Rome.",  # one passage
            [{"metadata": {}}],  # no text: this row only is unscorable
        ]),
        pd.Series(["Where is it?", "Do cats purr?", "Where?", "?"]),
    )  # fmt: skip
    assert value.scores == [0.5, 1.0, None, None]
    assert value.aggregate_results == {"mean": 0.75, "unscorable": 2.0}
    assert value.justifications is not None
    assert value.justifications[0].startswith("1 of 2 claims supported.\n- supported: The Eiffel")
    assert "(chunk eiffel:" in value.justifications[0]
    assert value.justifications[2] == "Unscorable: no claims: the reference is empty"
    assert value.justifications[3].startswith("Unscorable: row 3: retrieved document 1: no text")


def test_no_row_scored_has_no_mean(judge: Any) -> None:
    metric = make_metric("context_recall", judge, name="recall")
    value = metric.eval_fn(pd.Series(["a"]), None, pd.Series([["A."]]), None)
    assert metric.name == "recall"
    assert value.scores == [None] and value.aggregate_results == {"unscorable": 1.0}


def test_a_metric_object_and_an_unknown_name() -> None:
    metric = make_metric(RetrievalRecall(match="text"))
    assert metric.name == "retrieval_recall"
    with pytest.raises(ValueError, match="unknown metric"):
        make_metric("recal")
