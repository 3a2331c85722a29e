"""Test sets generated from a corpus: read and chunk it (corpus), ask the judge for question and
reference pairs (prompts, kinds), check each before it is kept (check), run under a budget and
resume from the output file (run)."""
