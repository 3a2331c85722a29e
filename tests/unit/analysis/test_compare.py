"""Statistics of `compare` against hand-computed values and brute-force enumeration."""

from __future__ import annotations

import itertools
import math
import random
import re
import statistics
from pathlib import Path

import pytest

from ragrecall import ClaimVerdict, RecallResult, Sample
from ragrecall.cli import main
from ragrecall.engines import Record
from ragrecall.stats import bootstrap_ci, ranks, sign_flip_test, wilcoxon_signed_rank


def brute_force_wilcoxon_p(diffs: list[float]) -> float:
    """Enumerate all 2^n sign patterns of the ranked |d| and count |W+ - E| >= observed."""
    nonzero = [d for d in diffs if d != 0]
    r = ranks([abs(d) for d in nonzero])
    expected = sum(r) / 2
    observed = abs(sum(x for x, d in zip(r, nonzero, strict=True) if d > 0) - expected)
    hits = 0
    for signs in itertools.product((0, 1), repeat=len(r)):
        w = sum(x for x, s in zip(r, signs, strict=True) if s)
        hits += abs(w - expected) >= observed - 1e-9
    return hits / (1 << len(r))


def brute_force_sign_flip_p(diffs: list[float]) -> float:
    observed = abs(sum(diffs))
    hits = 0
    for signs in itertools.product((1, -1), repeat=len(diffs)):
        hits += abs(sum(s * d for s, d in zip(signs, diffs, strict=True))) >= observed - 1e-12
    return hits / (1 << len(diffs))


def test_ranks_average_ties() -> None:
    assert ranks([0.5, 0.25, 0.5, 1.0]) == [2.5, 1.0, 2.5, 4.0]


def test_wilcoxon_one_to_ten_all_positive_matches_hand_values() -> None:
    diffs = [float(i) for i in range(1, 11)]
    exact = wilcoxon_signed_rank(diffs)
    # W+ = 55 is the maximum: only 1 of 1024 sign patterns, doubled for two sides.
    assert (exact.statistic, exact.n, exact.method) == (55.0, 10, "exact")
    assert exact.p_value == pytest.approx(2 / 1024)
    normal = wilcoxon_signed_rank(diffs, method="normal")
    # E = 27.5, Var = 10*11*21/24 = 96.25, z = 27.5 / sqrt(96.25) = 2.8031, p = 0.005062.
    assert normal.z == pytest.approx(2.8031, abs=1e-4)
    assert normal.p_value == pytest.approx(0.005062, abs=1e-6)
    corrected = wilcoxon_signed_rank(diffs, method="normal", correction=True)
    assert corrected.p_value == pytest.approx(math.erfc(27.0 / math.sqrt(96.25) / math.sqrt(2)))


def test_wilcoxon_tie_corrected_variance_by_hand() -> None:
    # |d| = 1, 1, 2, 2, 2 -> ranks 1.5, 1.5, 4, 4, 4; ties of 2 and 3.
    diffs = [1.0, -1.0, 2.0, 2.0, -2.0]
    result = wilcoxon_signed_rank(diffs, method="normal")
    assert result.statistic == 1.5 + 4 + 4
    variance = 5 * 6 * 11 / 24 - ((2**3 - 2) + (3**3 - 3)) / 48
    assert result.z == pytest.approx((9.5 - 7.5) / math.sqrt(variance))


@pytest.mark.parametrize("seed", range(12))
def test_exact_wilcoxon_equals_brute_force_with_ties_and_zeros(seed: int) -> None:
    rng = random.Random(seed)
    diffs = [
        rng.choice([-1, -0.5, -1 / 3, 0, 1 / 3, 0.5, 1, 2 / 3]) for _ in range(rng.randint(3, 11))
    ]
    if not any(diffs):
        diffs[0] = 0.5
    assert wilcoxon_signed_rank(diffs).p_value == pytest.approx(brute_force_wilcoxon_p(diffs))


def test_sign_flip_hand_values() -> None:
    assert sign_flip_test([1.0, 1.0, 1.0]) == pytest.approx(2 / 8)
    # sums over patterns of (1, 2): 3, -1, 1, -3 -> |s| >= 3 twice.
    assert sign_flip_test([1.0, 2.0]) == pytest.approx(2 / 4)
    assert sign_flip_test([0.0, 0.0]) == 1.0
    assert sign_flip_test([0.5, 0.0, 0.0]) == 1.0  # zeros drop out; one +0.5 of 2 patterns


@pytest.mark.parametrize("seed", range(6))
def test_exact_sign_flip_equals_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    diffs = [rng.choice([-1, -0.5, 0.25, 0.5, 1, 1 / 3]) for _ in range(rng.randint(2, 10))]
    assert sign_flip_test(diffs) == pytest.approx(brute_force_sign_flip_p(diffs))


def test_monte_carlo_sign_flip_is_close_to_exact_and_seeded() -> None:
    rng = random.Random(7)
    diffs = [rng.choice([-0.5, 0.25, 0.5, 1.0, -0.25]) for _ in range(14)]
    exact = sign_flip_test(diffs, exact_max=14)
    approx = sign_flip_test(diffs, exact_max=10, resamples=20_000, seed=1)
    assert approx == pytest.approx(exact, abs=0.015)
    assert approx == sign_flip_test(diffs, exact_max=10, resamples=20_000, seed=1)


def test_bootstrap_ci_is_seeded_contains_the_mean_and_collapses_on_constants() -> None:
    values = [0.0, 0.5, 1.0, 1.0, 0.5, 0.0, 1.0, 0.5]
    low, high = bootstrap_ci(values, resamples=4000, seed=3)
    assert (low, high) == bootstrap_ci(values, resamples=4000, seed=3)
    assert low < statistics.fmean(values) < high
    # about mean -+ 1.96 * sd / sqrt(n) for a mean of n = 8 values
    se = statistics.pstdev(values) / math.sqrt(len(values))
    assert high - low == pytest.approx(2 * 1.96 * se, rel=0.15)
    assert bootstrap_ci([0.25] * 5) == (0.25, 0.25)


def make(key_suffix: str, score: float, claims: list[str], missing: list[str]) -> Record:
    sample = Sample(user_input=f"q{key_suffix}", reference="r", retrieved_contexts=["c"])
    verdicts = [ClaimVerdict(claim=c, attributed=c not in missing) for c in claims]
    result = RecallResult(
        score=score, status="scored", claims=claims, verdicts=verdicts, missing=missing
    )
    return Record(sample.key(), 0, sample, {"context_recall": result})


def runs(tmp_path: Path, worse: bool) -> tuple[Path, Path]:
    a, b = [], []
    for i in range(12):
        claims = [f"claim {i}a", f"claim {i}b"]
        a.append(make(str(i), 1.0 if worse else 0.5, claims, [] if worse else claims[1:]))
        b.append(make(str(i), 0.5 if worse else 1.0, claims, claims[1:] if worse else []))
    b.append(make("only-b", 0.0, ["x"], ["x"]))
    paths = []
    for name, records in (("a", a), ("b", b)):
        path = tmp_path / ("worse" if worse else "better") / f"{name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(r.to_json() + "\n" for r in records), "utf-8")
        paths.append(path)
    return paths[0], paths[1]


def summary_row(out: str, name: str) -> str:
    found = re.search(rf"│ {re.escape(name)}\s*│\s*(.*?)\s*│", out)
    assert found, out
    return found.group(1)


def test_compare_pairs_by_key_and_reports_recovered_claims(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps tables at the terminal width
    a, b = runs(tmp_path, worse=False)
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert summary_row(out, "samples A / B / paired") == "12 / 13 / 12"
    assert summary_row(out, "both scored") == "12"
    assert summary_row(out, "mean A / B") == "0.500 / 1.000"
    assert summary_row(out, "improved / worse / same") == "12 / 0 / 0"  # each pair exactly +0.5
    assert summary_row(out, "mean difference B - A") == "+0.500  [+0.500, +0.500] 95% CI"
    # exact over 2^12 sign patterns: 2 / 4096 is the only multiple of 1/4096 shown as 0.0004883
    assert summary_row(out, "permutation test p") == f"{2 / 4096:.4g}" == "0.0004883"
    assert "verdict: better" in out
    assert "\nq0\n  + recovered claim 0b\nq1\n" in out  # recovered, nothing lost


def test_compare_command_gates_on_a_regression(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = runs(tmp_path, worse=True)
    report = tmp_path / "cmp.html"
    assert main(["compare", str(a), str(b), "--report", str(report)]) == 0
    assert main(["compare", str(a), str(b), "--fail-if-worse"]) == 1
    out = capsys.readouterr().out
    assert "worse" in out and "- lost" in out and "claim 0b" in out
    assert "claim 0b" in report.read_text()
    a2, b2 = runs(tmp_path, worse=False)
    assert main(["compare", str(a2), str(b2), "--fail-if-worse"]) == 0
    assert main(["compare", str(a2), str(tmp_path / "missing.jsonl")]) == 2
