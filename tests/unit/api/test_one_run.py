"""One path for a run: ``ragrecall eval`` opens the run ``evaluate`` opens, so ``eval --labels``
and ``evaluate(labels=)`` give the same corrected figures on the same data; an engine that only
meets the ``Engine`` protocol runs under ``evaluate``, ``aevaluate`` and ``astream``, with
``concurrency`` handed to it in the settings (never by rebuilding it)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from animals import rows, truth
from fakes import LogprobJudge

from ragrecall import ContextRecall, RecallResult, Sample, aevaluate, astream, evaluate
from ragrecall.calibration import Label
from ragrecall.cli import main
from ragrecall.engines import LocalEngine, Outcome, RunSettings

JUDGE = ["--judge-factory", "fakes:LogprobJudge", "--strategy", "per_claim"]


def person(claim: str, sample_id: str) -> bool:
    """People's answer: ``truth``, except that they reject "Dogs" claims of even samples (so
    the correction moves the mean)."""
    return truth(claim, sample_id) and not (claim.startswith("Dogs") and int(sample_id[1:]) % 2)


def answer_labels(samples: Sequence[Sample], results: Sequence[RecallResult]) -> list[Label]:
    """Every claim of each answer labelled by ``person``, as the review page exports them."""
    labels = []
    for sample, result in zip(samples, results, strict=True):
        for i, claim in enumerate(result.claims):
            said = person(claim, sample.sample_id or "")
            labels.append(
                Label(
                    key=sample.key(),
                    claim=claim,
                    label="supported" if said else "not_supported",
                    pick="answer",
                    content=sample.content_key(),
                    claim_set=result.claim_set,
                    claim_index=i,
                    answer_claims=len(result.claims),
                )
            )
    return labels


def test_eval_labels_and_evaluate_labels_give_the_same_corrected_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGRECALL_CLAIMS_STORE", str(tmp_path / "claims.db"))
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows(24)))
    metric = ContextRecall(LogprobJudge(), strategy="per_claim")
    first = evaluate(str(data), [metric])
    picked = range(0, 24, 2)  # 12 answers labelled
    labels = answer_labels(
        [first.samples[i] for i in picked], [first.results["context_recall"][i] for i in picked]
    )
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(x.model_dump_json() + "\n" for x in labels))

    report = evaluate(str(data), [metric], labels=path)
    summary = tmp_path / "summary.json"
    extra = ["--labels", str(path), "--summary-json", str(summary)]
    assert main(["eval", str(data), *JUDGE, *extra]) == 0

    python = report.corrected["context_recall"]
    cli = json.loads(summary.read_text())["corrected"]["context_recall"]
    assert cli == python.to_dict()  # every figure: mean, interval, n, bias and its interval
    assert (cli["labelled_answers"], cli["answers"]) == (12, 24) == (python.labels, 24)
    assert cli["corrected_mean"] == python.estimate != python.judge_mean
    assert cli["interval"] == list(python.interval)
    assert python.judge_mean == pytest.approx(first.mean)


class Forwarding:
    """An engine that only meets the protocol (no dataclass, no base class): it scores on a
    ``LocalEngine`` and remembers the settings each run handed it."""

    name: ClassVar[str] = "forwarding"
    out_kind: ClassVar[str] = "file"
    options: ClassVar[frozenset[str]] = frozenset({"concurrency"})
    interrupted_note: ClassVar[str] = ""

    def __init__(self) -> None:
        self.settings: list[RunSettings] = []

    def score(self, samples: Sequence[Sample], metrics: Sequence[Any], **kw: Any) -> Outcome:
        self.settings.append(kw["settings"])
        return LocalEngine().score(samples, metrics, **kw)

    async def ascore(self, samples: Sequence[Sample], metrics: Sequence[Any], **kw: Any) -> Outcome:
        self.settings.append(kw["settings"])
        return await LocalEngine().ascore(samples, metrics, **kw)


def recall() -> ContextRecall:
    return ContextRecall(LogprobJudge(), strategy="per_claim")


def scores(results: Sequence[RecallResult]) -> list[float | None]:
    return [r.score for r in results]


async def test_an_engine_that_only_meets_the_protocol_runs_everywhere() -> None:
    data = rows(6)
    engine = Forwarding()
    local = evaluate(data, [recall()])
    forwarded = evaluate(data, [recall()], engine=engine, concurrency=3, repeats=2)
    assert scores(forwarded.results["context_recall"]) == scores(local.results["context_recall"])
    assert (engine.settings[0].concurrency, engine.settings[0].repeats) == (3, 2)
    awaited = await aevaluate(data, [recall()], engine=engine, concurrency=2)
    assert awaited.mean == local.mean and engine.settings[1].concurrency == 2
    streamed = [s async for s in astream(data, [recall()], engine=engine)]
    assert sorted(s.index for s in streamed) == list(range(6))
    assert engine.settings[2].concurrency is None  # astream went through the engine too


def test_an_engine_that_takes_no_concurrency_refuses_it() -> None:
    class Fixed(Forwarding):
        name: ClassVar[str] = "fixed"
        options: ClassVar[frozenset[str]] = frozenset()

    with pytest.raises(ValueError, match="the fixed engine takes no concurrency"):
        evaluate(rows(2), [recall()], engine=Fixed(), concurrency=2)


async def test_astream_skip_is_asked_by_the_local_engine_as_each_sample_starts() -> None:
    asked: list[str | None] = []

    def skip(sample: Sample) -> bool:
        asked.append(sample.sample_id)
        return sample.sample_id == "s1"

    streamed = [s async for s in astream(rows(3), [recall()], skip=skip, max_calls=1000)]
    assert sorted(s.index for s in streamed) == [0, 2] and asked == ["s0", "s1", "s2"]
    with pytest.raises(ValueError, match="skip is asked by the local engine"):
        [s async for s in astream(rows(3), [recall()], engine=Forwarding(), skip=skip)]
