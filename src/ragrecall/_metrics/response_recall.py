"""Response recall: the share of the reference's claims that the generated response states.

ContextRecall with one change: the passages are the response (one chunk, id ``"response"``)
instead of the retrieved contexts. Decomposition, claim cache, strategies, evidence checks and
prompts are ContextRecall's, so claims decomposed for one metric are reused by the other.
"""

from __future__ import annotations

from .._core.schemas import Chunk, RecallResult, Sample, Usage
from .._judge.drive import Steps
from .context_recall import ContextRecall

__all__ = ["RESPONSE_CHUNK_ID", "ResponseRecall"]

RESPONSE_CHUNK_ID = "response"


class ResponseRecall(ContextRecall):
    """How much of the expected answer did the model actually say?

    Score = reference claims stated by ``response`` / reference claims. Each verdict cites the
    chunk ``"response"`` with the supporting sentence (or the judge's verified quote) of the
    response; ``missing`` lists the claims the response leaves out. Same arguments as
    ContextRecall; an empty response is unscorable. A conversation before the question
    (``history``) is not read: the response is checked as ContextRecall checks a single turn.
    """

    name = "response_recall"
    needs = (("reference", "reference_claims"), ("response",))
    cost_parts = frozenset({"response_claims"})

    def _steps(self, sample: Sample, usage: Usage) -> Steps[RecallResult]:
        response = (sample.response or "").strip()
        if not response:
            return self.unscorable("no response to check the reference's claims against")
        chunk = Chunk(id=RESPONSE_CHUNK_ID, text=response, rank=1)
        # the response answers this turn alone: no conversation step, no earlier turn credited
        as_passages = sample.model_copy(update={"retrieved_contexts": [chunk], "history": None})
        return (yield from super()._steps(as_passages, usage))
