"""Arize Phoenix integration of ragrecall: scores posted as span annotations on the retriever
spans they were read from, and ragrecall metrics as phoenix-evals evaluators."""

from ._annotations import (
    annotations_from_traces_out,
    log_span_annotations,
    log_traces_out,
    span_annotations,
)
from ._evaluator import RecallEvaluator, RecallInput, explanation

__all__ = [
    "RecallEvaluator",
    "RecallInput",
    "annotations_from_traces_out",
    "explanation",
    "log_span_annotations",
    "log_traces_out",
    "span_annotations",
]
