"""Calibration measured right, by simulation: proper scores, a debiased ECE that is near 0 for a
calibrated judge (where the plain one is not), its perfectly calibrated yardstick, EM that
recovers a known shift in the share of positives, and ``calibrate`` reporting all of it."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from ragrecall import calibrate
from ragrecall.calibration import CalibrationProfile, Label
from ragrecall.cli import main
from ragrecall.stats import (
    ECE_MIN_LABELS,
    brier_score,
    calibrated_ece,
    debiased_ece,
    expected_calibration_error,
    log_loss,
    prior_shift,
)


def calibrated(n: int, seed: int) -> tuple[list[float], list[bool]]:
    rng = random.Random(seed)
    p = [rng.random() for _ in range(n)]
    return p, [rng.random() < q for q in p]


def test_brier_and_log_loss() -> None:
    assert brier_score([1.0, 0.0, 0.5], [True, False, True]) == pytest.approx(0.25 / 3)
    assert log_loss([0.5, 0.5], [True, False]) == pytest.approx(math.log(2))
    assert log_loss([0.0], [True]) == pytest.approx(-math.log(1e-6))  # clipped, finite
    with pytest.raises(ValueError, match="as many"):
        brier_score([0.5], [True, False])


def test_the_debiased_ece_of_a_calibrated_judge_is_near_zero() -> None:
    plain, debiased = [], []
    for seed in range(200):
        p, y = calibrated(150, seed)
        plain.append(expected_calibration_error(p, y) or 0.0)
        debiased.append(debiased_ece(p, y))
    plain_mean, debiased_mean = sum(plain) / len(plain), sum(debiased) / len(debiased)
    assert plain_mean > 0.07  # the plain ECE's noise floor at this n
    # floored at 0 (a root), so a little above 0 on average, and far below the plain one
    assert debiased_mean < 0.035 and debiased_mean < plain_mean / 2.5


def test_the_debiased_ece_finds_a_real_miscalibration() -> None:
    rng = random.Random(3)
    p = [rng.random() for _ in range(2000)]
    y = [rng.random() < 0.5 + (q - 0.5) / 2 for q in p]  # overconfident: true gap |q - .5| / 2
    true_l2 = math.sqrt(sum(((q - 0.5) / 2) ** 2 for q in p) / len(p))
    assert debiased_ece(p, y) == pytest.approx(true_l2, abs=0.02)
    mean, high = calibrated_ece(p, draws=50)
    assert mean < high < debiased_ece(p, y)  # far beyond what calibration alone shows


def test_em_recovers_a_known_prior() -> None:
    rng = random.Random(11)
    # A judge calibrated where half the claims were supported; the new data has 80 %.
    train, target = 0.5, 0.8
    scores = []
    for _ in range(4000):
        positive = rng.random() < target
        x = rng.gauss(1.0 if positive else -1.0, 1.0)
        scores.append(1 / (1 + math.exp(-2 * x)))  # the Bayes posterior at prior 0.5
    shift = prior_shift(scores, train)
    assert shift.converged and shift.prior == pytest.approx(target, abs=0.03)
    assert shift.logit_shift == pytest.approx(math.log(4), abs=0.25)
    assert sum(shift.probabilities) / len(scores) == pytest.approx(shift.prior, abs=1e-3)
    unchanged = prior_shift([0.3, 0.7], 0.5)  # data at the training share: nothing moves
    assert unchanged.prior == pytest.approx(0.5, abs=1e-4)


def as_labels(p: list[float], truth: list[bool]) -> list[Label]:
    """The fake judge's verdicts with P(supported) ``p`` as a person labelled them."""
    return [
        Label(
            key=f"k{i}",
            claim=f"c{i}",
            label="supported" if t else "not_supported",
            attributed=q >= 0.55,
            p_supported=q,
            word_overlap=0.5,
            judge="fake",
        )
        for i, (q, t) in enumerate(zip(p, truth, strict=True))
    ]


def labels(n: int, seed: int, share: float = 0.5) -> list[Label]:
    """An overconfident judge: truth at 0.5 + (p - 0.5) / 2 around a ``share`` of positives."""
    rng = random.Random(seed)
    p, truth = [], []
    for _ in range(n):
        p.append(rng.random())
        truth.append(rng.random() < min(max(share - 0.5 + 0.5 + (p[-1] - 0.5) / 2, 0.0), 1.0))
    return as_labels(p, truth)


def test_calibrate_reports_proper_scores_and_ece_only_from_100_labels() -> None:
    few = calibrate(labels(60, 1), resamples=200)
    for row in ("before", "after"):
        a = few.agreement[row]
        assert a.brier is not None and a.brier_ci is not None and a.log_loss is not None
        assert a.brier_ci[0] <= a.brier <= a.brier_ci[1]
        assert a.ece is None and a.ece_calibrated is None  # 60 < 100
    many = calibrate(labels(ECE_MIN_LABELS + 200, 2), resamples=200)
    before, after = many.agreement["before"], many.agreement["after"]
    assert before.ece is not None and before.ece_calibrated is not None
    assert after.brier is not None and before.brier is not None and after.brier < before.brier
    assert before.ece > before.ece_calibrated[1]  # overconfident beyond sampling noise


def test_calibrate_shifts_the_prior_to_the_data() -> None:
    fitted = labels(300, 4)
    plain = calibrate(fitted, resamples=100)
    rng = random.Random(5)
    data = [min(rng.random() + 0.35, 0.999) for _ in range(1000)]  # a data set judged richer
    shifted = calibrate(fitted, resamples=100, prior_shift_to=data)
    assert shifted.labels_prior == plain.labels_prior and shifted.data_prior is not None
    assert shifted.data_prior > shifted.labels_prior  # type: ignore[operator]
    assert shifted.scale_b > plain.scale_b and shifted.scale_a == plain.scale_a
    assert "prior shift" in shifted.note and shifted.id != plain.id
    few = calibrate(labels(10, 6), prior_shift_to=data)
    assert "no prior shift" in few.note and few.data_prior is None
    raw = calibrate(labels(30, 8), resamples=100, prior_shift_to=data)  # too few to scale P
    assert (raw.scale_a, raw.data_prior) == (1.0, None)
    assert "no prior shift: it needs calibrated P" in raw.note


def test_the_cli_prints_the_numbers_and_shifts_from_a_results_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(x.model_dump_json() + "\n" for x in labels(150, 7)))
    out = tmp_path / "calibration.json"
    assert main(["calibrate", str(path), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Brier" in printed and "log loss" in printed and "calibrated:" in printed
    assert CalibrationProfile.load(out).agreement["before"].ece is not None
    # an old profile without the new fields still loads
    old = json.loads(out.read_text())
    for row in old["agreement"].values():
        for key in ("brier", "brier_ci", "log_loss", "log_loss_ci", "ece_calibrated"):
            row.pop(key)
    old.pop("labels_prior"), old.pop("data_prior")
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert CalibrationProfile.load(tmp_path / "old.json").data_prior is None
    # --prior-shift with a file that holds no P(supported) is a usage error naming it
    empty = tmp_path / "results.jsonl"
    empty.write_text("")
    assert main(["calibrate", str(path), "--prior-shift", str(empty)]) == 2
    assert "no verdict with P(supported)" in capsys.readouterr().err


def test_a_calibrated_judge_keeps_its_p_and_an_overconfident_one_is_scaled() -> None:
    p, y = calibrated(60, 9)
    rows = as_labels(p, y)
    kept = calibrate(rows, resamples=300)
    assert (kept.scale_a, kept.scale_b) == (1.0, 0.0) and "kept P(supported) unscaled" in kept.note
    scaled = calibrate(labels(400, 8), resamples=300)
    assert scaled.scale_a < 1 and "scaled P(supported)" in scaled.note
