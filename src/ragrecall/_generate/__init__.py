"""Test sets generated from a corpus: read and chunk it (corpus), plan each attempt's kind and
chunks (plan), ask the judge for a question and reference pair and check it before it is kept
(attempt, prompts, check), append the rows and read them back to resume (output), all under a
budget (run)."""
