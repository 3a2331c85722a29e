"""Claims that stand alone: the detection rule, the compound split, the verbatim check on
rewrites, and the decontext call in ContextRecall's decomposition (scripted judges)."""

from __future__ import annotations

from typing import Any

import pytest
from fakes import ScriptedJudge, keyword_reply

from ragrecall import ClaimCache, ContextRecall
from ragrecall._metrics.claims.compound import split_compound
from ragrecall._metrics.claims.decontext import (
    needs_context,
    referring_span,
    resolved,
)
from ragrecall._metrics.claims.rewrite import accept_rewrite, fits

CURIES = (
    "Marie and Pierre Curie discovered polonium and radium in 1898. They named the first "
    "after Marie's homeland, Poland."
)
NOKIA = "Nokia was founded in 1865. The company later moved into rubber."
REFERENCE = f"{CURIES} {NOKIA}"


@pytest.mark.parametrize(
    "claim",
    [
        "They named the first after Poland.",
        "The company later moved into rubber and cables.",
        "This mission reached comet 67P in 2014.",
        "Neither of them ever married.",
        "The former treats pods as interchangeable.",
        "Both are often used as caches.",
        "These waterways are a UNESCO World Heritage Site.",
        "It was first released in 2015.",
        "By 1998 it was the largest maker of phones.",
        "Their last album was Abbey Road.",
    ],
)
def test_claims_that_refer_outside_themselves_are_found(claim: str) -> None:
    assert needs_context(claim)


@pytest.mark.parametrize(
    "claim",
    [
        "The Golden Gate Bridge opened to vehicles on May 28, 1937.",
        "Marie Curie said she would return.",
        "Nokia entered mobile phones in the 1980s.",
        "Redis can persist data to disk.",
        "Adults with influenza can be treated with oseltamivir.",
    ],
)
def test_claims_that_stand_alone_are_left_alone(claim: str) -> None:
    assert not needs_context(claim)


def test_compound_claims_split_where_two_clauses_join() -> None:
    assert split_compound("Metformin rarely causes hypoglycaemia; sulfonylureas can cause it.") == [
        "Metformin rarely causes hypoglycaemia.",
        "Sulfonylureas can cause it.",
    ]
    assert split_compound("The city has 165 canals, and they were dug in 1600.") == [
        "The city has 165 canals.",
        "They were dug in 1600.",
    ]
    assert split_compound("Deployments treat pods alike, while StatefulSets name each pod.") == [
        "Deployments treat pods alike.",
        "StatefulSets name each pod.",
    ]
    assert split_compound("The key was rotated and its old value was revoked.") == [
        "The key was rotated.",
        "Its old value was revoked.",
    ]
    # a list, or a clause too short to be a fact, stays whole
    assert split_compound("It supports A, B, and C.") == ["It supports A, B, and C."]
    assert split_compound("Use it; see below.") == ["Use it; see below."]
    assert split_compound("The parent company and its subsidiary were fined.") == [
        "The parent company and its subsidiary were fined."
    ]
    assert split_compound("Salt and pepper, and oil, are needed.") == [
        "Salt and pepper, and oil, are needed."
    ]


def test_two_instructions_joined_by_and_are_split() -> None:
    assert split_compound("Remove the lug nuts and swap in the spare.") == [
        "Remove the lug nuts.",
        "Swap in the spare.",
    ]
    assert split_compound(
        "Start the servers and check the health endpoint and restart the proxy."
    ) == [
        "Start the servers.",
        "Check the health endpoint.",
        "Restart the proxy.",
    ]
    # "and" before no verb of instructions, no instruction first, or a piece too short
    for whole in (
        "Add 50 g of flour and 50 g of water.",
        "Add salt and pepper to taste.",
        "Press and hold the button for five seconds.",
        "Mix the flour and white sugar in a bowl.",
        "The script builds the image and pushes it.",
        "Open the case and remove it.",
    ):
        assert split_compound(whole) == [whole]


def test_a_rewrite_counts_only_with_a_verbatim_referent() -> None:
    claim = "They named the first after Marie's homeland, Poland."
    good = "Marie and Pierre Curie named polonium after Marie's homeland, Poland."
    assert accept_rewrite(claim, good, REFERENCE)
    # a subject the reference never names: invented
    invented = "The French scientists named polonium after Marie's homeland, Poland."
    assert not accept_rewrite(claim, invented, REFERENCE)
    # a fact dropped on the way
    assert not accept_rewrite(
        claim, "Marie and Pierre Curie named polonium after Poland.", REFERENCE
    )
    # a definite description replaced by the name it stands for
    assert accept_rewrite(
        "The company later moved into rubber.", "Nokia later moved into rubber.", REFERENCE
    )
    assert not accept_rewrite(
        "The company later moved into rubber.", "Nokia later moved into rubber in 1900.", REFERENCE
    )
    # no change is no resolution
    assert not accept_rewrite(claim, claim, REFERENCE)
    # nor a referent the claim already names: the judge picked the wrong name
    python = "Python was created by Guido van Rossum. Its name comes from Monty Python."
    assert not accept_rewrite(
        "Its name comes from Monty Python.",
        "Monty Python's name comes from Monty Python.",
        python,
    )
    assert accept_rewrite(
        "Its name comes from Monty Python.", "Python's name comes from Monty Python.", python
    )
    # nor a referent the claim already says in lower case
    oil = "vegi oils boiling point is somewhere around 320 degrees."
    assert not accept_rewrite(
        "The boiling point of vegi oil is 320 degrees.",
        "Vegi oil point of vegi oil is 320 degrees.",
        oil,
    )
    # nor a rewrite that only drops the article, or repeats the words beside the referent
    wing = "The hospital opened a new emergency wing in 2022. The building has 40 beds."
    assert not accept_rewrite("The building has 40 beds.", "Building has 40 beds.", wing)
    assert not accept_rewrite(
        "The new emergency wing opened.", "New emergency wing emergency wing opened.", wing
    )


@pytest.mark.parametrize(
    ("words", "referent", "expected"),
    [
        ("They", "The Beatles", True),
        ("They", "Apple", True),  # a company as "they": a name
        ("Both", "the billing-export and log-compaction jobs", True),
        ("Each of them", "our team", False),  # plural words, a singular description
        ("The company", "Nokia", True),
        ("this mission", "the Rosetta mission", True),
        ("The staff", "The hospital", False),  # a description for another description
        ("The boiling", "Vegi oil", False),  # capitalised by the judge, not a name
        ("The larger of the two", "Jupiter", True),
        ("It", "the bridge", True),
        ("it", "you", False),  # a pronoun resolves nothing
        ("They", " ", False),
    ],
)
def test_a_referent_must_fit_the_words_it_replaces(
    words: str, referent: str, expected: bool
) -> None:
    reference = (
        "The Beatles formed in Liverpool. Apple sold phones. Nokia was founded in 1865. The "
        "hospital hired staff. The Rosetta mission reached a comet. Jupiter is large. vegi oil "
        "boils at 320 degrees. Don't feel forced to change it, you know."
    )
    assert fits(words, referent, reference) is expected


def test_the_referring_words_are_replaced_by_the_referent() -> None:
    def swap(claim: str, referent: str) -> str:
        span = referring_span(claim)
        assert span is not None
        return resolved(claim, span, referent)

    assert swap("The company later moved.", "Nokia") == "Nokia later moved."
    assert swap("Neither of them married.", "the Wright brothers") == (
        "Neither of the Wright brothers married."
    )
    assert swap("The larger of the two has 95 moons.", "Jupiter") == "Jupiter has 95 moons."
    assert swap("Neither of these worked.", "the two fixes") == "Neither of the two fixes worked."
    # "the first" before a noun is a description ("the first number"), not an ordinal alone
    assert referring_span("The first number will stand out.") == (0, 16)
    prices = "Look at the prices: the first number stands out."
    assert not fits("The first number", "Prices", prices)
    # "these" before a noun is a determiner: the description is the span, not the word
    assert referring_span("In either of these sleep positions, it is easier.") == (13, 24)
    assert swap("Their last album was Abbey Road.", "The Beatles") == (
        "The Beatles' last album was Abbey Road."
    )
    assert swap("By 1998 it was the largest.", "Nokia") == "By 1998 Nokia was the largest."
    assert referring_span("Nokia entered mobile phones.") is None


def _judge(referents: dict[str, str] | None, claims: list[str]) -> ScriptedJudge:
    """Splits into ``claims``; names the referent of the asked words from ``referents``."""

    def reply(messages: Any) -> Any:
        system = str(messages[0].content)
        if system.startswith("You resolve references"):
            words = str(messages[1].content).rsplit('Words: "', 1)[1].rstrip('"')
            return {"referent": (referents or {}).get(words, "")}
        if system.startswith("You split an answer"):
            return {"claims": claims}
        return keyword_reply(messages)

    return ScriptedJudge(reply=reply)


SAMPLE = {
    "user_input": "What did the Curies do?",
    "reference": CURIES,
    "retrieved_contexts": ["The Curies named polonium after Poland."],
}
SPLIT = [
    "Marie and Pierre Curie discovered polonium and radium in 1898.",
    "They named the first after Marie's homeland, Poland.",
]


REWRITE = "Marie and Pierre Curie named polonium after Marie's homeland, Poland."
NAMES = {"They": "Marie and Pierre Curie", "the first": "polonium"}


def test_claims_are_decontextualised_after_the_split() -> None:
    judge = _judge(NAMES, SPLIT)
    recall = ContextRecall(judge, cache=ClaimCache(), strategy="per_claim")
    claim_set = recall.claim_set(SAMPLE)
    assert claim_set.claims == [SPLIT[0], REWRITE]
    assert claim_set.usage.calls == 3  # the split, then one call for each referring span
    asked = str(judge.calls[1][-1].content)
    assert 'Words: "the first"' in asked and CURIES in asked
    result = recall.score(SAMPLE)
    assert not any(v.unresolved for v in result.verdicts)


def test_an_invented_referent_keeps_the_claim_and_marks_it() -> None:
    judge = _judge({"the first": "the French element"}, SPLIT)
    recall = ContextRecall(judge, cache=ClaimCache(), strategy="per_claim")
    result = recall.score(SAMPLE)
    assert result.claims == SPLIT
    assert [v.unresolved for v in result.verdicts] == [False, True]


def test_an_empty_referent_keeps_the_claim() -> None:
    claim_set = ContextRecall(_judge({}, SPLIT), cache=ClaimCache()).claim_set(SAMPLE)
    assert claim_set.claims == SPLIT


def test_claims_that_stand_alone_cost_no_call() -> None:
    alone = ["Marie and Pierre Curie discovered polonium and radium in 1898."]
    judge = _judge(None, alone)
    claim_set = ContextRecall(judge, cache=ClaimCache()).claim_set(
        {**SAMPLE, "reference": alone[0]}
    )
    assert claim_set.claims == alone and claim_set.usage.calls == 1


def test_compound_claims_are_split_before_the_rewrite() -> None:
    judge = _judge(
        {"The company": "Nokia"},
        ["Nokia was founded in 1865; the company later moved into rubber."],
    )
    claim_set = ContextRecall(judge, cache=ClaimCache()).claim_set({**SAMPLE, "reference": NOKIA})
    assert claim_set.claims == ["Nokia was founded in 1865.", "Nokia later moved into rubber."]


def test_a_clause_the_judge_dropped_is_added_when_it_holds_a_name_or_number() -> None:
    reference = f"{REFERENCE} Here is what you need to know about it."
    judge = _judge(NAMES, SPLIT)  # the Nokia sentences lost; the filler holds no fact
    claim_set = ContextRecall(judge, cache=ClaimCache()).claim_set(
        {**SAMPLE, "reference": reference}
    )
    assert claim_set.claims == [SPLIT[0], REWRITE, "Nokia was founded in 1865."]


def test_decontext_prompt_none_turns_it_off() -> None:
    judge = _judge(NAMES, SPLIT)
    claim_set = ContextRecall(judge, cache=ClaimCache(), decontext_prompt=None).claim_set(SAMPLE)
    assert claim_set.claims == SPLIT and claim_set.usage.calls == 1


async def test_async_decontextualises_the_same() -> None:
    sync = ContextRecall(_judge(NAMES, SPLIT), cache=ClaimCache()).claim_set(SAMPLE)
    other = await ContextRecall(_judge(NAMES, SPLIT), cache=ClaimCache()).aclaim_set(SAMPLE)
    assert other.claims == sync.claims == [SPLIT[0], REWRITE]


def test_the_cost_estimate_counts_a_referent_call_per_leaning_sentence() -> None:
    from ragrecall import Sample
    from ragrecall._metrics.estimate import estimate_cost

    alone = "Apple and Google were founded in California, and both grew fast. Apple sells phones."
    leaning = "Apple and Google were founded in California, and both grew fast. They sell phones."
    costs = [
        estimate_cost(
            [Sample(user_input="q", reference=r, retrieved_contexts=["x"])], ["context_recall"]
        )
        for r in (alone, leaning)
    ]
    assert costs[1].calls == costs[0].calls + 1
    assert costs[1].prompt_tokens > costs[0].prompt_tokens
