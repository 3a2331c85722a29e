"""Verdicts: a claim attributed to a chunk with evidence, the checks that evidence must pass
(grounding), and uncertain verdicts asked again in variants."""
