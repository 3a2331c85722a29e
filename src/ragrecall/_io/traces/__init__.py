"""Traces as a source: retriever spans from OTLP JSON or LangSmith run exports, joined with
references into samples; scores written back onto the spans."""

from .load import NotAssessed, TracedSamples, load_traces

__all__ = ["NotAssessed", "TracedSamples", "load_traces"]
