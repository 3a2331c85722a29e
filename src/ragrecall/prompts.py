"""Every default prompt of the metrics and the typed reply it asks for, in one public place.

Each prompt is a ``ChatPromptTemplate`` constant that a metric's constructor can replace (keep
its input variables and its reply schema); each schema is a pydantic model whose field
descriptions say what the judge must put there. ``PROMPT_VERSION`` is part of the claim cache's
key, so claims decomposed by another prompt are never reused. Passages reach the prompts as one
text rendered by ``render_passages``; a metric's ``render_passages=`` argument replaces it.
The prompts of ``ragrecall.generate`` stay with it (its ``prompts=`` argument).
"""

import typing as _typing

from ._core.lazy import lazy as _lazy

__all__ = [
    "ANSWERABLE_PROMPT",
    "BATCHED_PROMPT",
    "DECOMPOSE_PROMPT",
    "DECONTEXT_PROMPT",
    "PER_CLAIM_PROMPT",
    "PER_CLAIM_QUOTE_PROMPT",
    "PRECISION_BATCHED_PROMPT",
    "PRECISION_PROMPT",
    "PROMPT_VERSION",
    "STANDALONE_PROMPT",
    "SUB_QUESTIONS_PROMPT",
    "SUFFICIENCY_PROMPT",
    "VERDICT_PREFIX",
    "VERDICT_VARIANTS",
    "AnswerSpan",
    "Answerable",
    "BatchVerdict",
    "BatchVerdicts",
    "Claims",
    "NumberedRelevance",
    "Passage",
    "PassageRenderer",
    "QuotedSupport",
    "Referent",
    "Relevance",
    "Relevances",
    "StandaloneQuestion",
    "SubQuestions",
    "Support",
    "TokenSupport",
    "VerdictVariant",
    "render_passages",
    "response_format",
]

# Each public name lives in the metrics' prompts module, imported on first use.
_EXPORTS: dict[str, str] = dict.fromkeys(__all__, "ragrecall._metrics.prompts")

__getattr__, __dir__ = _lazy(__name__, _EXPORTS)


if _typing.TYPE_CHECKING:
    from ._metrics.prompts import (
        ANSWERABLE_PROMPT,
        BATCHED_PROMPT,
        DECOMPOSE_PROMPT,
        DECONTEXT_PROMPT,
        PER_CLAIM_PROMPT,
        PER_CLAIM_QUOTE_PROMPT,
        PRECISION_BATCHED_PROMPT,
        PRECISION_PROMPT,
        PROMPT_VERSION,
        STANDALONE_PROMPT,
        SUB_QUESTIONS_PROMPT,
        SUFFICIENCY_PROMPT,
        VERDICT_PREFIX,
        VERDICT_VARIANTS,
        Answerable,
        AnswerSpan,
        BatchVerdict,
        BatchVerdicts,
        Claims,
        NumberedRelevance,
        Passage,
        PassageRenderer,
        QuotedSupport,
        Referent,
        Relevance,
        Relevances,
        StandaloneQuestion,
        SubQuestions,
        Support,
        TokenSupport,
        VerdictVariant,
        render_passages,
        response_format,
    )
