"""`ragrecall review` and `ragrecall calibrate`: which verdicts a person labels, the page and
CSV they label them in, the fitted profile, and a real browser labelling with key presses.

The results come from `ragrecall eval --out` with ``fakes:LogprobJudge``: a keyword judge whose
P(supported) is unrelated to the truth (``fakes.p_reply``), so the word check decides better
than the default mix, and a person's labels should move the decision.
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest
from animals import rows, truth
from fakes import LogprobJudge

from ragrecall import CalibrationError, ContextRecall, calibrate
from ragrecall.calibration import CalibrationProfile, Label, read_labels
from ragrecall.cli import main
from ragrecall.engines import read_records
from ragrecall.prompts import PROMPT_VERSION

JUDGE = "scripted:scripted"


@pytest.fixture
def results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RAGRECALL_CLAIMS_STORE", str(tmp_path / "claims.db"))
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows(30)))
    out = tmp_path / "results.jsonl"
    judge = ["--judge-factory", "fakes:LogprobJudge", "--strategy", "per_claim"]
    code = main(["eval", str(data), *judge, "--out", str(out)])
    assert code == 0
    return out


def review(results: Path, *extra: str) -> Path:
    folder = results.parent / "review"
    assert main(["review", str(results), "--out", str(folder), *extra]) == 0
    return folder


def test_review_picks_uncertain_then_random(results: Path) -> None:
    folder = review(results, "--uncertain", "10", "--random", "15")
    table = list(csv.DictReader((folder / "review.csv").open()))
    assert [r["pick"] for r in table] == ["uncertain"] * 10 + ["random"] * 15
    assert all(r["label"] == "" and r["judge"] == JUDGE for r in table)
    assert len({(r["key"], r["claim"]) for r in table}) == 25
    # The uncertain ones are the nearest the default decision (0.7 P + 0.3 overlap vs 0.55).
    margin = [
        abs(0.7 * float(r["p_supported"]) + 0.3 * float(r["word_overlap"]) - 0.55) for r in table
    ]
    assert max(margin[:10]) <= min(margin[10:]) + 1e-9
    page = (folder / "review.html").read_text()
    assert "http://" not in page and "https://" not in page  # nothing from the network
    assert page.count('<section class="item"') == 25
    assert '<div class="judge" hidden>' in page


def test_review_shows_unscorable_claims(results: Path) -> None:
    lines = results.read_text().splitlines()
    record = json.loads(lines[0])
    result = record["results"]["context_recall"]
    result.update(status="unscorable", score=None, verdicts=[], missing=[], reason="judge failed")
    results.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    folder = review(results, "--uncertain", "0", "--random", "0")
    table = list(csv.DictReader((folder / "review.csv").open()))
    assert [r["pick"] for r in table] == ["unscorable"] * 3
    assert all(r["attributed"] == "" and r["reason"] == "judge failed" for r in table)


def test_review_refuses_a_missing_metric(results: Path) -> None:
    assert main(["review", str(results), "--metric", "chunk_recall"]) == 2


def labels_from_csv(folder: Path) -> Path:
    table = list(csv.DictReader((folder / "review.csv").open()))
    for r in table:
        r["label"] = "supported" if truth(r["claim"], r["sample_id"]) else "not supported"
    out = folder / "labels.csv"
    with out.open("w", newline="") as f:
        writer = csv.DictWriter(f, list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    return out


def test_calibrate_moves_the_decision_when_labels_show_a_gain(results: Path) -> None:
    labels = labels_from_csv(review(results, "--uncertain", "20", "--random", "30"))
    out = labels.parent / "calibration.json"
    assert main(["calibrate", str(labels), "--out", str(out)]) == 0
    profile = CalibrationProfile.load(out)
    assert (profile.judge, profile.prompt_version, profile.labels) == (JUDGE, PROMPT_VERSION, 50)
    assert profile.moved and "moved the decision" in profile.note
    before, after = profile.agreement["before"], profile.agreement["after"]
    assert before.balanced_accuracy is not None and after.balanced_accuracy is not None
    assert after.balanced_accuracy > before.balanced_accuracy
    assert before.kappa is not None and before.kappa_ci is not None
    assert before.kappa_ci[0] <= before.kappa <= before.kappa_ci[1]
    assert profile.agreement["before_random"].n == 30


def synthetic(n: int, seed: int, *, informative: bool) -> list[Label]:
    """Labels whose truth is P(supported) drawn as a calibrated-but-overconfident judge's;
    with ``informative`` false, the truth is a coin flip (nothing to learn)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        p = rng.random()
        true = rng.random() < (0.5 + (p - 0.5) / 2 if informative else 0.5)
        out.append(
            Label(
                key=f"k{i}",
                claim=f"c{i}",
                label="supported" if true else "not_supported",
                attributed=p >= 0.55,
                p_supported=p,
                word_overlap=rng.random(),
                judge=JUDGE,
            )
        )
    return out


def test_calibrate_keeps_the_defaults_without_a_clear_gain() -> None:
    profile = calibrate(synthetic(60, 1, informative=False))
    assert not profile.moved and "kept the default decision" in profile.note
    assert (profile.support_threshold, profile.lexical_weight) == (0.55, 0.3)


def test_calibrate_scales_an_overconfident_judge() -> None:
    profile = calibrate(synthetic(400, 2, informative=True))
    assert 0 < profile.scale_a < 1  # P(supported) squeezed toward the middle
    assert profile.scale(0.95) < 0.9 and profile.scale(0.05) > 0.1
    before, after = profile.agreement["before"].ece, profile.agreement["after"].ece
    assert before is not None and after is not None and after < before


def test_calibrate_needs_enough_labels() -> None:
    profile = calibrate(synthetic(10, 3, informative=True))
    assert not profile.moved and "at least 20" in profile.note
    with pytest.raises(CalibrationError, match="no labels"):
        calibrate(
            [x.model_copy(update={"label": "skip"}) for x in synthetic(5, 3, informative=True)]
        )


def test_calibrate_refuses_mixed_judges() -> None:
    labels = synthetic(30, 4, informative=True)
    labels[0] = labels[0].model_copy(update={"judge": "openai:gpt-4o"})
    with pytest.raises(CalibrationError, match="mix judges"):
        calibrate(labels)


def test_profile_refuses_another_judge_or_prompt_version(tmp_path: Path) -> None:
    profile = calibrate(synthetic(40, 5, informative=True))
    profile.check(JUDGE)
    with pytest.raises(CalibrationError, match="fitted for judge 'scripted:scripted'"):
        profile.check("openai:gpt-4o")
    with pytest.raises(CalibrationError, match="prompt version"):
        profile.check(JUDGE, "0")
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(CalibrationError, match=r"bad\.json: not a ragrecall calibration profile"):
        CalibrationProfile.load(bad)


def test_bad_labels_name_the_row(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"key": "k", "claim": "c", "label": "supported"}\n{"key": "k"}\n')
    with pytest.raises(ValueError, match=r"labels.jsonl:2: not a label"):
        read_labels(path)
    assert main(["calibrate", str(path)]) == 2


def fitted_profile(results: Path) -> Path:
    labels = labels_from_csv(review(results, "--uncertain", "20", "--random", "30"))
    out = labels.parent / "calibration.json"
    assert main(["calibrate", str(labels), "--out", str(out)]) == 0
    return out


def test_eval_applies_the_profile(results: Path) -> None:
    profile_path = fitted_profile(results)
    profile = CalibrationProfile.load(profile_path)
    data = results.parent / "data.jsonl"
    out = results.parent / "calibrated.jsonl"
    judge = ["--judge-factory", "fakes:LogprobJudge", "--strategy", "per_claim"]
    calibrated = ["--calibration", str(profile_path), "--out", str(out)]
    assert main(["eval", str(data), *judge, *calibrated]) == 0
    before = {r.key: r.results["context_recall"] for r in read_records(results)}
    after = {r.key: r.results["context_recall"] for r in read_records(out)}
    wrong = {"before": 0, "after": 0}
    for record in read_records(out):
        for name, result in (("before", before[record.key]), ("after", after[record.key])):
            for v in result.verdicts:
                wrong[name] += v.attributed != truth(v.claim, record.sample.sample_id or "")
        result = after[record.key]
        assert result.calibration == profile.id and before[record.key].calibration is None
        for v in result.verdicts:
            assert v.p_supported is not None and v.confidence is not None
            p = profile.scale(v.p_supported)
            assert v.confidence == pytest.approx(p if v.attributed else 1 - p)
    assert wrong["after"] < wrong["before"]


def test_a_profile_for_another_judge_is_refused(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = fitted_profile(results)
    other = CalibrationProfile.load(path).model_copy(update={"judge": "openai:gpt-4o"})
    other.save(path)
    capsys.readouterr()
    data = results.parent / "data.jsonl"
    judge = ["--judge-factory", "fakes:LogprobJudge", "--strategy", "per_claim"]
    assert main(["eval", str(data), *judge, "--calibration", str(path)]) == 2
    assert "fitted for judge 'openai:gpt-4o', not 'scripted:scripted'" in capsys.readouterr().err
    recall = ContextRecall(LogprobJudge(), strategy="per_claim", calibration=path)
    sample = rows(1)[0]
    with pytest.raises(CalibrationError, match="fitted for judge"):
        recall.score(sample)
    other.model_copy(update={"judge": JUDGE, "prompt_version": "1"}).save(path)
    with pytest.raises(CalibrationError, match="prompt version '1'"):
        ContextRecall(LogprobJudge(), strategy="per_claim", calibration=path).score(sample)
