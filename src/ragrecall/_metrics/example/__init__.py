"""The example metric, a template for a new one: copy this folder, rename the metric, and add
its line to ``registry.METRICS`` (ARCHITECTURE.md, "Adding a metric"). Not in that list: it
ships as a template and a tested reference, never as a public metric."""

from .metric import AnswerMatch

__all__ = ["AnswerMatch"]
