"""People's labels of whole answers: `ragrecall review --answers` picks them, the page and
CSV carry them back, and `eval --labels` / `evaluate(labels=)` / `compare --labels` report the
judge's mean and difference corrected by them (checked against `ppi_mean` / `ppi_difference`
computed here from the same numbers), and bad label files are refused naming file and line.

The runs come from `ragrecall eval` with ``fakes:LogprobJudge`` (a keyword judge with
logprobs) on rows like `test_review`'s: each answer has three claims, "Cats ..." always in the
chunks, "Dogs ..." unless the sample's number is a multiple of 3, "Birds ..." never.
"""

from __future__ import annotations

import csv
import html
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from animals import rows, truth
from fakes import LogprobJudge

from ragrecall import ContextRecall, evaluate
from ragrecall.calibration import Label, read_answer_labels, read_labels
from ragrecall.cli import main
from ragrecall.engines import Record, read_records
from ragrecall.stats import conformal_radius, ppi_difference, ppi_mean, t_quantile

JUDGE = ["--judge-factory", "fakes:LogprobJudge", "--strategy", "per_claim"]
Truth = Callable[[str, str], bool]


def write_rows(path: Path, data: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in data))
    return path


def without_dogs(n: int) -> list[dict[str, Any]]:
    """The rows with the "Dogs" chunk never retrieved: a worse retriever."""
    return [{**r, "contexts": r["contexts"][:1]} for r in rows(n)]


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with results A (rows) and B (without_dogs) of 30 tasks, scored once for the
    module (each test reviews them into folders of its own arguments)."""
    folder = tmp_path_factory.mktemp("runs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAGRECALL_CLAIMS_STORE", str(folder / "claims.db"))
        for name, data in (("a", rows(30)), ("b", without_dogs(30))):
            path = write_rows(folder / f"{name}.jsonl", data)
            results = folder / f"{name}-results.jsonl"
            assert main(["eval", str(path), *JUDGE, "--out", str(results)]) == 0
    return folder


@pytest.fixture
def runs(scored: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """Results A and B (``scored``), the claim store theirs."""
    monkeypatch.setenv("RAGRECALL_CLAIMS_STORE", str(scored / "claims.db"))
    return scored / "a-results.jsonl", scored / "b-results.jsonl"


def review(results: Path, *extra: str) -> Path:
    folder = results.parent / f"review-{results.stem}-{'-'.join(extra)}"
    assert main(["review", str(results), "--out", str(folder), *extra]) == 0
    return folder


def table(folder: Path) -> list[dict[str, str]]:
    return list(csv.DictReader((folder / "review.csv").open(encoding="utf-8")))


def person(chunks_have_dogs: bool = True) -> Truth:
    """People's answer for a run: with the "Dogs" chunk (A) ``truth``, without it (B) only
    "Cats" claims hold."""
    if chunks_have_dogs:
        return truth
    return lambda claim, _: claim.startswith("Cats")


def label_csv(folder: Path, said: Truth, name: str = "labels.csv") -> Path:
    """The review CSV with its label column filled, as a person in a spreadsheet would."""
    filled = table(folder)
    for r in filled:
        r["label"] = "supported" if said(r["claim"], r["sample_id"]) else "not supported"
    out = folder / name
    with out.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, list(filled[0]))
        writer.writeheader()
        writer.writerows(filled)
    return out


def page_export(folder: Path, said: Truth) -> Path:
    """What the page exports once every item is labelled: each item's data-label, its label,
    and (pick answer) the answer's human recall, as the page's script computes them."""
    page = (folder / "review.html").read_text(encoding="utf-8")
    items = [json.loads(html.unescape(x)) for x in re.findall(r'data-label="([^"]*)"', page)]
    for item in items:
        item["label"] = "supported" if said(item["claim"], item["sample_id"]) else "not_supported"
    for item in items:
        same = [
            x
            for x in items
            if (x["key"], x["occurrence"], x["content"])
            == (item["key"], item["occurrence"], item["content"])
        ]
        item["human_recall"] = sum(x["label"] == "supported" for x in same) / len(same)
    out = folder / "labels.jsonl"
    out.write_text("".join(json.dumps(x) + "\n" for x in items), encoding="utf-8")
    return out


def human_recall(record: Record, said: Truth) -> float:
    claims = record.results["context_recall"].claims
    return sum(said(c, record.sample.sample_id or "") for c in claims) / len(claims)


# Review by answer ---------------------------------------------------------------------------


def test_review_by_answer_is_seeded_whole_and_shuffled(runs: tuple[Path, Path]) -> None:
    a, _ = runs
    first = table(review(a, "--answers", "8", "--seed", "3"))
    assert table(review(a, "--answers", "8", "--seed", "3")) == first
    other = table(review(a, "--answers", "8", "--seed", "4"))
    assert {r["key"] for r in other} != {r["key"] for r in first}
    records = {r.key: r for r in read_records(a)}
    assert all(r["pick"] == "answer" and r["human_recall"] == "" for r in first)
    picked = list(dict.fromkeys(r["key"] for r in first))
    assert len(picked) == 8
    shuffled = False
    for number, key in enumerate(picked, start=1):
        claims = [r for r in first if r["key"] == key]
        result = records[key].results["context_recall"]
        assert sorted(r["claim"] for r in claims) == sorted(result.claims)  # every claim
        assert {r["answer"] for r in claims} == {str(number)}  # one answer after another
        assert all(r["answer_claims"] == str(len(result.claims)) for r in claims)
        assert all(r["judge_score"] == str(result.score) for r in claims)
        assert all(r["claim_set"] == result.claim_set for r in claims)
        indices = [int(r["claim_index"]) for r in claims]
        assert [result.claims[i] for i in indices] == [r["claim"] for r in claims]
        shuffled |= indices != sorted(indices)
    assert shuffled  # the claims of an answer come in random order
    assert picked != sorted(picked, key=lambda k: records[k].index)  # the answers too
    page = (review(a, "--answers", "8", "--seed", "3") / "review.html").read_text()
    assert page.count('<section class="item"') == len(first)
    assert "answer 1 of 8, claim 1 of 3" in page and "ragrecall eval --labels" in page


def test_review_by_answer_draws_the_same_tasks_from_two_runs(runs: tuple[Path, Path]) -> None:
    a, b = runs
    picked_a = [r["sample_id"] for r in table(review(a, "--answers", "10", "--seed", "1"))]
    picked_b = [r["sample_id"] for r in table(review(b, "--answers", "10", "--seed", "1"))]
    assert list(dict.fromkeys(picked_a)) == list(dict.fromkeys(picked_b))


def test_review_refuses_answers_with_claim_picks(runs: tuple[Path, Path]) -> None:
    a, _ = runs
    assert main(["review", str(a), "--answers", "5", "--random", "3"]) == 2
    assert main(["review", str(a), "--answers", "0"]) == 2


def test_answer_labels_round_trip_through_csv_and_page_export(runs: tuple[Path, Path]) -> None:
    a, _ = runs
    folder = review(a, "--answers", "12", "--seed", "2")
    records = {r.key: r for r in read_records(a)}
    from_csv, other = read_answer_labels([label_csv(folder, truth)])
    from_page, _ = read_answer_labels([page_export(folder, truth)])
    assert other == 0 and len(from_csv) == 12
    assert [(x.key, x.supported, x.claims) for x in from_csv] == [
        (x.key, x.supported, x.claims) for x in from_page
    ]
    for x in from_page:
        record = records[x.key]
        assert (x.occurrence, x.content) == (record.occurrence, record.content)
        assert x.claim_set == record.results["context_recall"].claim_set
        assert x.recall == human_recall(record, truth)
    exported = [json.loads(line) for line in (folder / "labels.jsonl").read_text().splitlines()]
    labels = [Label.model_validate(x) for x in exported]
    assert [x.human_recall for x in labels] == [x["human_recall"] for x in exported]  # exact


def test_csv_cells_a_spreadsheet_would_run_are_marked_and_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGRECALL_CLAIMS_STORE", str(tmp_path / "claims.db"))
    data = rows(12)
    for r in data:
        r["ground_truth"] = r["ground_truth"].replace("Cats", "=Cats")
        r["contexts"] = [c.replace("Cats", "=Cats") for c in r["contexts"]]
    results = tmp_path / "results.jsonl"
    path = write_rows(tmp_path / "data.jsonl", data)
    assert main(["eval", str(path), *JUDGE, "--out", str(results)]) == 0
    folder = review(results, "--answers", "12")
    raw = (folder / "review.csv").read_text(encoding="utf-8")
    assert ",'=Cats purr" in raw and ",=Cats" not in raw
    # a spreadsheet shows the cell without its mark
    said: Truth = lambda claim, _: claim.removeprefix("'").startswith("=Cats")  # noqa: E731
    labels = label_csv(folder, said)
    answers, _ = read_answer_labels([labels])
    assert len(answers) == 12 and all(x.supported == 1 for x in answers)
    assert any(x.claim.startswith("=Cats") for x in read_labels(labels))


# eval and evaluate with labels ---------------------------------------------------------------


def expected_mean(results: Path, labels: Path, said: Truth) -> Any:
    records = read_records(results)
    answers, _ = read_answer_labels([labels])
    labelled = {x.key for x in answers}
    scores = [r.score("context_recall") for r in records]
    judge = [r.score("context_recall") for r in records if r.key in labelled]
    human = [human_recall(r, said) for r in records if r.key in labelled]
    return ppi_mean([s for s in scores if s is not None], judge, human), judge, human


def test_eval_with_labels_reports_the_corrected_mean(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, _ = runs
    labels = label_csv(review(a, "--answers", "15", "--seed", "5"), truth)
    expected, judge, human = expected_mean(a, labels, truth)
    assert expected.method == "ppi" and expected.labels == 15 and expected.total == 30
    data = a.parent / "a.jsonl"
    summary, report = a.parent / "summary.json", a.parent / "report.html"
    capsys.readouterr()
    extra = ["--labels", str(labels), "--summary-json", str(summary), "--report", str(report)]
    assert main(["eval", str(data), *JUDGE, "--out", str(a), *extra]) == 0  # resumed: read back
    out = capsys.readouterr().out
    assert f"corrected by 15 labelled answers (of 30; ppi): {expected.estimate:.3f}" in out
    assert f"[{expected.low:.3f}, {expected.high:.3f}] 90% interval" in out
    assert f"the judge's mean {expected.judge_mean:.3f}" in out
    corrected = json.loads(summary.read_text())["corrected"]["context_recall"]
    assert corrected["corrected_mean"] == expected.estimate
    assert corrected["interval"] == [expected.low, expected.high]
    assert corrected["judge_mean"] == expected.judge_mean
    assert corrected["labelled_answers"] == 15 and corrected["answers"] == 30
    bias = [j - h for j, h in zip(judge, human, strict=True)]
    mean_bias = sum(bias) / 15
    assert corrected["judge_bias"] == pytest.approx(mean_bias) == expected.judge_bias
    sd = (sum((d - mean_bias) ** 2 for d in bias) / 14) ** 0.5
    half = t_quantile(0.95, 14) * sd * ((1 - 15 / 30) / 15) ** 0.5
    assert corrected["judge_bias_interval"] == pytest.approx([mean_bias - half, mean_bias + half])
    assert corrected["unmatched_labels"] == 0
    page = report.read_text()
    assert "Corrected with people&#x27;s labels" in page or "Corrected with people's labels" in page
    assert f"{expected.estimate:.3f}" in page and "15 of 30" in page


def test_min_score_gates_on_the_corrected_mean_with_labels(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, _ = runs
    labels = label_csv(review(a, "--answers", "15", "--seed", "5"), truth)
    expected, _, _ = expected_mean(a, labels, truth)
    data = a.parent / "a.jsonl"
    between = (expected.estimate + expected.judge_mean) / 2  # passes one mean, fails the other
    gate = ["--out", str(a), "--min-score", f"{between:.4f}"]
    capsys.readouterr()
    raw = main(["eval", str(data), *JUDGE, *gate])
    fixed = main(["eval", str(data), *JUDGE, *gate, "--labels", str(labels)])
    out = capsys.readouterr().out
    assert (raw, fixed) == ((0, 1) if expected.estimate < expected.judge_mean else (1, 0))
    assert "corrected mean" in out or expected.estimate > expected.judge_mean


def test_evaluate_with_labels_in_python(runs: tuple[Path, Path]) -> None:
    a, _ = runs
    labels = page_export(review(a, "--answers", "12", "--seed", "6"), truth)
    expected, _, _ = expected_mean(a, labels, truth)
    metric = ContextRecall(LogprobJudge(), strategy="per_claim")
    report = evaluate(str(a.parent / "a.jsonl"), [metric], labels=labels)
    corrected = report.corrected["context_recall"]
    assert corrected.ppi == expected
    assert (corrected.estimate, corrected.interval) == (
        expected.estimate,
        (expected.low, expected.high),
    )
    assert corrected.judge_mean == pytest.approx(report.mean)
    objects = [Label.model_validate(json.loads(x)) for x in labels.read_text().splitlines()]
    assert (
        evaluate(str(a.parent / "a.jsonl"), [metric], labels=objects).corrected == report.corrected
    )


def test_twenty_labelled_answers_give_each_answer_a_conformal_interval(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, _ = runs
    metric = ContextRecall(LogprobJudge(), strategy="per_claim")
    few = page_export(review(a, "--answers", "12", "--seed", "6"), truth)
    report = evaluate(str(a.parent / "a.jsonl"), [metric], labels=few)
    assert report.corrected["context_recall"].answer_radius is None  # below 20: unchanged
    assert all(
        r.interval_method is None or "conformal" not in r.interval_method
        for r in report.results["context_recall"]
    )
    labels = page_export(review(a, "--answers", "24", "--seed", "7"), truth)
    _, judge, human = expected_mean(a, labels, truth)
    radius = conformal_radius(list(zip(judge, human, strict=True)), 0.9)
    report = evaluate(str(a.parent / "a.jsonl"), [metric], labels=labels)
    assert report.corrected["context_recall"].answer_radius == radius
    for r in report.results["context_recall"]:
        if r.score is not None:
            assert r.interval == (max(0.0, r.score - radius), min(1.0, r.score + radius))
            assert r.interval_method == "split-conformal (24 labelled answers)"
    capsys.readouterr()
    assert main(["eval", str(a.parent / "a.jsonl"), *JUDGE, "--out", str(a), "--labels",
                 str(labels)]) == 0  # fmt: skip
    assert f"its score +/- {radius:.3f} (split-conformal on the 24" in capsys.readouterr().out


def test_labels_matching_no_sample_are_counted(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, _ = runs
    labels = page_export(review(a, "--answers", "12", "--seed", "7"), truth)
    lines = labels.read_text().splitlines()
    stray = [json.loads(x) for x in lines[:3]]
    for x in stray:
        x["key"] = "0123456789abcdef"
    claim = {**json.loads(lines[0]), "pick": "random", "claim_index": 0}
    labels.write_text("\n".join([*lines, *map(json.dumps, [*stray, claim])]) + "\n")
    capsys.readouterr()
    data = str(a.parent / "a.jsonl")
    assert main(["eval", data, *JUDGE, "--out", str(a), "--labels", str(labels)]) == 0
    out = capsys.readouterr().out
    assert "corrected by 12 labelled answers" in out
    assert "1 labelled answers match no sample of this run" in out
    assert "1 labels of single claims" in out


# Bad label files -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("drop", r"labels\.jsonl:\d+: an incomplete answer .* 2 of its 3 claims labelled"),
        ("skip", r"labels\.jsonl:\d+: an incomplete answer .*1 skipped"),
        ("index", r"labels\.jsonl:2: not a label: field 'claim_index'"),
        ("recall", r"labels\.jsonl:\d+: field 'human_recall' is 0\.5"),
        ("claims", r"labels\.jsonl:\d+: this answer was labelled against other claims"),
        ("nowhere", r"none of the 12 labelled answers is among the samples here"),
        ("claims only", r"the labels hold no whole answer"),
        ("conflict", r"labels\.jsonl:\d+: claim \d of this answer is labelled"),
    ],
)
def test_bad_labels_exit_2_naming_file_and_line(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str], change: str, message: str
) -> None:
    a, b = runs
    labels = page_export(review(a, "--answers", "12", "--seed", "8"), truth)
    lines = [json.loads(x) for x in labels.read_text().splitlines()]
    if change == "drop":
        del lines[0]
    elif change == "skip":
        lines[0]["label"] = "skip"
        del lines[0]["human_recall"]
    elif change == "index":
        lines[1]["claim_index"] = "x"
    elif change == "recall":
        for x in lines[:3]:
            x["human_recall"] = 0.5
    elif change == "claims":
        for x in lines[:3]:
            x["claim_set"] = "0000000000000000"
    elif change == "nowhere":
        for x in lines:
            x["content"] = "0000000000000000"
    elif change == "claims only":
        for x in lines:
            x["pick"] = "random"
    elif change == "conflict":
        flipped = dict(lines[0])
        flipped["label"] = "not_supported" if lines[0]["label"] == "supported" else "supported"
        del flipped["human_recall"]
        lines.append(flipped)
    labels.write_text("".join(json.dumps(x) + "\n" for x in lines))
    capsys.readouterr()
    assert main(["eval", str(a.parent / "a.jsonl"), *JUDGE, "--labels", str(labels)]) == 2
    assert re.search(message, capsys.readouterr().err.replace("\n", " ")), message
    assert main(["compare", str(a), str(b), "--labels", str(labels)]) == 2
    assert re.search(message, capsys.readouterr().err.replace("\n", " ")), message


# compare with labels -------------------------------------------------------------------------


def compare_labels(a: Path, b: Path, answers: int, seed: int) -> tuple[Path, Path]:
    la = label_csv(review(a, "--answers", str(answers), "--seed", str(seed)), person(True))
    lb = label_csv(review(b, "--answers", str(answers), "--seed", str(seed)), person(False))
    return la, lb


def test_compare_with_labels_reports_the_corrected_difference(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = runs
    la, lb = compare_labels(a, b, 14, 9)
    ra = {r.sample.sample_id: r for r in read_records(a)}
    rb = {r.sample.sample_id: r for r in read_records(b)}
    labelled = {r["sample_id"] for r in table(la.parent)}
    tasks = sorted(ra)
    judge_all = [(rb[t].score("context_recall"), ra[t].score("context_recall")) for t in tasks]
    judge = [
        (rb[t].score("context_recall"), ra[t].score("context_recall"))
        for t in tasks
        if t in labelled
    ]
    human = [
        (human_recall(rb[t], person(False)), human_recall(ra[t], person(True)))
        for t in tasks
        if t in labelled
    ]
    expected = ppi_difference(judge_all, judge, human, confidence=0.95)  # type: ignore[arg-type]
    assert expected.labels == 14 and expected.high < 0  # B lost the Dogs chunk
    report = a.parent / "cmp.html"
    capsys.readouterr()
    extra = ["--labels", str(la), "--labels", str(lb), "--report", str(report)]
    assert main(["compare", str(a), str(b), *extra]) == 0
    out = capsys.readouterr().out
    assert f"{expected.estimate:+.3f}  [{expected.low:+.3f}, {expected.high:+.3f}] 95%" in out
    assert "tasks labelled on both sides / paired" in out and "14 / 30" in out
    assert "corrected verdict: worse" in out
    assert f"{expected.estimate:+.3f}" in report.read_text()
    assert main(["compare", str(a), str(b), *extra, "--fail-if-worse"]) == 1


def test_compare_gates_on_the_corrected_interval(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """People who find B's answers as good as A's (every claim supported in both) overrule
    the judge: the raw verdict is worse, the corrected difference is 0, the gate passes."""
    a, b = runs
    la = label_csv(review(a, "--answers", "12", "--seed", "1"), lambda *_: True)
    lb = label_csv(review(b, "--answers", "12", "--seed", "1"), lambda *_: True)
    assert main(["compare", str(a), str(b), "--fail-if-worse"]) == 1
    capsys.readouterr()
    labelled = ["--labels", str(la), "--labels", str(lb), "--fail-if-worse"]
    assert main(["compare", str(a), str(b), *labelled]) == 0
    out = capsys.readouterr().out
    assert "verdict: worse" in out and "corrected verdict: no significant difference" in out


def test_compare_counts_tasks_labelled_on_one_side(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = runs
    la = label_csv(review(a, "--answers", "14", "--seed", "2"), person(True))
    lb = label_csv(review(b, "--answers", "12", "--seed", "2"), person(False))
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "--labels", str(la), "--labels", str(lb)]) == 0
    out = capsys.readouterr().out
    assert "12 / 30" in out and "labelled on one side only (not used)" in out
    assert "the two reviews drew different tasks" in out
    # one label serves both runs where they retrieved the same (every third task)
    same = sum(int(r["sample_id"][1:]) % 3 == 0 for r in table(la.parent)) // 3
    assert main(["compare", str(a), str(b), "--labels", str(la)]) == 0
    assert f"{same} / 30" in capsys.readouterr().out
    filled = list(csv.DictReader(la.open(encoding="utf-8")))
    differ = [r for r in filled if int(r["sample_id"][1:]) % 3]
    with la.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, list(filled[0]))
        writer.writeheader()
        writer.writerows(differ)
    assert main(["compare", str(a), str(b), "--labels", str(la)]) == 2
    message = f"no task has labels for both runs' answers ({len(differ) // 3} labelled on one side"
    assert message in capsys.readouterr().err.replace("\n", " ")
