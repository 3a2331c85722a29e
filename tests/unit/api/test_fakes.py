"""ragrecall.testing's fakes answer every prompt the library sends: every public metric scores
the README's example and the bundled example dataset with them (nothing unscorable), and
generate accepts items they write."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from ragrecall import (
    ChunkRecall,
    ClaimCache,
    ContextPrecision,
    ContextRecall,
    QuestionRecall,
    RecallPrecision,
    ResponseRecall,
    RetrievalRecall,
    evaluate,
    generate,
)
from ragrecall.prompts import DECONTEXT_PROMPT, SUB_QUESTIONS_PROMPT
from ragrecall.testing import ScriptedJudge, TextOnlyJudge, keyword_reply

FAKES = [ScriptedJudge, TextOnlyJudge]
CHUNK = "The Eiffel Tower in Paris was completed in March 1889."
EIFFEL: dict[str, Any] = {  # the README's sample, with the fields the other metrics need
    "user_input": "When was the Eiffel Tower completed, and how tall is it?",
    "reference": "The Eiffel Tower was completed in 1889. It is 330 metres tall.",
    "retrieved_contexts": [CHUNK],
    "response": CHUNK,
    "reference_contexts": [CHUNK],
}
TALL = "The Eiffel Tower is 330 metres tall."


def question_recall(judge: Any) -> QuestionRecall:
    with pytest.warns(DeprecationWarning, match="Sufficiency"):  # deprecated; still scored
        return QuestionRecall(judge)


def metrics(judge: Any) -> list[Any]:
    return [
        ContextRecall(judge, cache=ClaimCache()),
        ResponseRecall(judge, cache=ClaimCache()),
        ChunkRecall(judge),
        question_recall(judge),
        ContextPrecision(judge),
        RecallPrecision(judge),
        RetrievalRecall(),
    ]


@pytest.mark.parametrize("fake", FAKES)
def test_every_metric_scores_the_readme_example(fake: type[TextOnlyJudge]) -> None:
    results = {m.name: m.score(EIFFEL) for m in metrics(fake())}
    assert {n: r.status for n, r in results.items()} == dict.fromkeys(results, "scored")
    scores = {n: r.score for n, r in results.items()}
    assert scores == {
        "context_recall": 0.5,
        "response_recall": 0.5,
        "chunk_recall": 1.0,
        "question_recall": 0.5,
        "context_precision": 1.0,
        "recall_precision": pytest.approx(2 / 3),
        "retrieval_recall": 1.0,
    }
    recall = results["context_recall"]
    assert recall.missing == [TALL]  # "It is 330 metres tall." with its referent named
    assert recall.claims == ["The Eiffel Tower was completed in 1889.", TALL]
    assert recall.verdicts[0].chunk_ids == ["1"] and recall.verdicts[0].evidence_verified
    assert results["question_recall"].missing == ["How tall is it?"]


@pytest.mark.parametrize("fake", FAKES)
@pytest.mark.parametrize(
    "settings",
    [
        {"strategy": "batched"},
        {"strategy": "per_claim"},
        {"evidence": "quote"},
        {"strategy": "per_claim", "verdict": "token"},
        {"strategy": "per_claim", "verdict": "token", "variants": 3, "variant_band": 1.0},
    ],
)
def test_every_verdict_prompt_is_answered(
    fake: type[TextOnlyJudge], settings: dict[str, Any]
) -> None:
    judge = fake()
    result = ContextRecall(judge, cache=ClaimCache(), **settings).score(EIFFEL)
    assert result.status == "scored" and result.score == 0.5 and result.missing == [TALL]
    if settings.get("verdict") == "token":  # read from the verdict token's logprobs
        supported, tall = result.verdicts
        assert supported.p_supported == pytest.approx(0.9)
        assert tall.p_supported == pytest.approx(0.1)
        asked = len(supported.p_variants)  # the base and 3 variants, each as sure
        assert asked == (4 if settings.get("variants") else 0)


@pytest.mark.parametrize("fake", FAKES)
@pytest.mark.parametrize("strategy", ["batched", "per_chunk"])
def test_relevance_one_chunk_at_a_time_or_batched(fake: type[TextOnlyJudge], strategy: str) -> None:
    sample = {**EIFFEL, "retrieved_contexts": [CHUNK, "Paris is in France."]}
    precision = ContextPrecision(fake(), strategy=strategy).score(sample)  # type: ignore[arg-type]
    assert [c.relevant for c in precision.chunks] == [True, False]
    no_reference = {k: v for k, v in sample.items() if k != "reference"}
    # without a reference: half the question's words (question words aside)
    chunks = ChunkRecall(fake(), strategy=strategy).score(no_reference)  # type: ignore[arg-type]
    assert [c.relevant for c in chunks.chunks] == [True, False] and chunks.score == 1.0


def example_rows() -> list[dict[str, Any]]:
    path = resources.files("ragrecall").joinpath("data/example.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_metric_scores_the_example_dataset(tmp_path: Path) -> None:
    rows = example_rows()
    for row in rows:  # a response (the reference's first sentence) and the relevant ids
        row["response"] = row["reference"].split(". ")[0] + "."
        row["reference_ids"] = [row["retrieved_contexts"][0]["id"]]
    data = tmp_path / "example.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report = evaluate(str(data), metrics(ScriptedJudge()))
    statuses = {n: [r.status for r in rs] for n, rs in report.results.items()}
    assert statuses == {n: ["scored"] * 4 for n in statuses} and len(statuses) == 7
    scores = {n: [r.score for r in rs] for n, rs in report.results.items()}
    assert scores["context_recall"] == [0.0, 0.0, 0.0, 0.0]  # no claim's words all in a chunk
    assert scores["question_recall"] == [1.0, 0.0, 0.0, 0.0]
    assert scores["response_recall"] == [
        pytest.approx(1 / 3),
        pytest.approx(1 / 3),
        pytest.approx(1 / 3),
        0.5,
    ]
    # "It is about 330 metres tall." named its referent, as the judge was asked
    assert (
        report.results["context_recall"][0].claims[1]
        == "The Eiffel Tower is about 330 metres tall."
    )


def test_the_bundled_dataset_as_shipped(tmp_path: Path) -> None:
    path = str(resources.files("ragrecall").joinpath("data/example.jsonl"))
    judge = ScriptedJudge()
    report = evaluate(path, [ContextRecall(judge, cache=ClaimCache()), question_recall(judge)])
    assert all(r.status == "scored" for rs in report.results.values() for r in rs)
    assert report.scores == {"context_recall": 0.0, "question_recall": 0.25}


def test_generate_accepts_what_the_fake_writes() -> None:
    corpus = [
        "The Danube rises in the Black Forest. It is 2850 km long.",
        "The Eiffel Tower was completed in 1889. It is 330 metres tall.",
        "Canberra is the capital of Australia. It was founded in 1913.",
    ]
    report = generate(corpus, 2, judge=ScriptedJudge(), chunk_size=None, mix={"single": 1})
    assert len(report.items) == 2
    item = report.items[0]
    assert item["user_input"].startswith("What should I know about ")
    assert item["reference"] in corpus[int(item["reference_context_ids"][0]) - 1]


class Match(BaseModel):
    """The example metric's reply (docs/developing.md), recognised by its name."""

    stated: bool
    reason: str


@pytest.mark.parametrize("fake", FAKES)
def test_the_example_metrics_match(fake: type[TextOnlyJudge]) -> None:
    def asked(response: str) -> list[tuple[str, str]]:
        system = 'Reply with JSON: {"stated": true or false, "reason": one sentence}.'
        human = f"Question: q\n\nReference answer: Cats purr. Cats fly.\n\nResponse: {response}"
        return [("system", system), ("human", human + "\n\nDoes the response state it?")]

    judge = fake()
    said = judge.invoke(asked("Cats purr and cats fly."))
    text = said.tool_calls[0]["args"] if said.tool_calls else json.loads(str(said.content))
    assert text == {"stated": True, "reason": "the response states it all"}
    if fake is ScriptedJudge:
        reply = judge.with_structured_output(Match).invoke(asked("Cats purr."))
        assert reply == Match(stated=False, reason="the response does not state: Cats fly.")


def test_a_referent_is_named_for_a_pronoun_only() -> None:
    reference = "Marie and Pierre Curie discovered radium. They shared a Nobel Prize in 1903."

    def referent(claim: str, words: str) -> Any:
        messages = DECONTEXT_PROMPT.format_messages(reference=reference, claim=claim, words=words)
        return keyword_reply(messages)  # as text: the system message says what it asks for

    assert referent("They shared a Nobel Prize in 1903.", "They") == {
        "referent": "Marie and Pierre Curie"
    }
    assert referent("The couple shared a Nobel Prize.", "The couple") == {"referent": ""}
    assert referent("Marie and Pierre Curie discovered radium.", "it") == {"referent": ""}


def test_sub_questions_split_at_and_and_question_marks() -> None:
    messages = SUB_QUESTIONS_PROMPT.format_messages(question="Who founded Tesla, and when?")
    assert keyword_reply(messages) == {"questions": ["Who founded Tesla?", "When?"]}
