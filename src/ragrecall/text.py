"""The text work beside the judge: sentences (``split_sentences``), the sentence of a text
closest to a claim (``best_sentence``: what aligned evidence cites), word overlap, passages
that address the judge (``instructs_judge``) and the parts of them that can be cut out
(``redact``), evidence that cannot bear out a verdict
(``evidence_refusal``), the claim store (``default_claim_cache``) and a
claim set's digest (``claim_set_hash``).
"""

import typing as _typing

from ._core.lazy import lazy as _lazy

# Each public name and the module it lives in, imported on first use.
_EXPORTS: dict[str, str] = {
    "best_sentence": "ragrecall._metrics.text.words",
    "split_sentences": "ragrecall._metrics.text.words",
    "word_overlap": "ragrecall._metrics.text.words",
    "instructs_judge": "ragrecall._metrics.text.injection",
    "evidence_refusal": "ragrecall._metrics.verdicts.grounding",
    "redact": "ragrecall._metrics.text.redaction",
    "default_claim_cache": "ragrecall._metrics.claims.decompose",
    "claim_set_hash": "ragrecall._core.schemas",
}


__getattr__, __dir__ = _lazy(__name__, _EXPORTS)


if _typing.TYPE_CHECKING:
    from ._core.schemas import claim_set_hash
    from ._metrics.claims.decompose import default_claim_cache
    from ._metrics.text.injection import instructs_judge
    from ._metrics.text.redaction import redact
    from ._metrics.text.words import best_sentence, split_sentences, word_overlap
    from ._metrics.verdicts.grounding import evidence_refusal

__all__ = [
    "best_sentence",
    "claim_set_hash",
    "default_claim_cache",
    "evidence_refusal",
    "instructs_judge",
    "redact",
    "split_sentences",
    "word_overlap",
]
