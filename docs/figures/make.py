"""The documentation's figures, drawn from real runs of the embedded judge saved in
``docs/figures/data/`` (no judge, no network: the saved runs are the figures' only input).

    python -m docs.figures.make              # redraw every figure into docs/figures/
    python -m docs.figures.make --out DIR    # into DIR (tests/unit/project/test_site.py)

The saved runs, and how to run them again (the embedded judge, minutes):

- ``example-results.jsonl``: ``ragrecall eval src/ragrecall/data/example.jsonl --judge local
  --out docs/figures/data/example-results.jsonl`` (the bundled example: the README's Eiffel
  sample and three more).
- ``lfqa-claims.jsonl``: people-labelled LFQA answers (the shared development data, never
  copied here) scored by ``python -m benchmarks.quality.judge_scores --data
  ../shared/datasets --out DIR --limit 36`` (stopped after the answers saved here: the
  results of any prefix are a random sample), then reduced to one line per claim (the
  judge's P(supported), word overlap and decision, people's majority label) by
  ``python -m docs.figures.make --from-lfqa DIR``.

Figures (SVG, text kept as text, no dates: the same data draws the same bytes):
``claims.svg`` (a reference becoming claims, and claims meeting chunks with their evidence),
``decision.svg`` (the decision rule over P(supported) and word overlap), ``reliability.svg``
(P(supported) against people's labels) and ``ppi.svg`` (the PPI interval against labels-only).
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import json
import random
import textwrap
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from ragrecall import ContextRecall
from ragrecall.calibration import Decision
from ragrecall.engines import read_records
from ragrecall.stats import mean, ppi_mean

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
FIGURES = ("claims.svg", "decision.svg", "reliability.svg", "ppi.svg")
GREEN, RED, GREY, BLUE = "#2e7d32", "#c62828", "#9e9e9e", "#1565c0"
LABELLED = 10  # answers a person labels in each draw of the PPI figure (PPI needs 10)
DRAWS = 8
SEED = 0


def style() -> None:
    plt.rcParams.update(
        {
            "svg.hashsalt": "ragrecall",  # ids in the SVG do not change from run to run
            "svg.fonttype": "none",  # text stays text (searchable, small)
            "font.family": "sans-serif",
            "font.size": 9,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )


def save(fig: Any, path: Path) -> None:
    fig.savefig(path, format="svg", metadata={"Date": None}, bbox_inches="tight")
    plt.close(fig)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# --- a reference becoming claims, claims meeting chunks ------------------------------------


REFERENCE, CLAIM, QUOTE, CHUNK = 27, 46, 42, 33  # characters per line in each column
GAP = 0.6  # between boxes, in lines


def box(ax: Axes, x: float, y: float, w: float, lines: list[str], color: str) -> float:
    """A rounded box whose top-left corner is (x, y), one text line per unit; its height."""
    h = len(lines) + 0.6
    ax.add_patch(
        FancyBboxPatch(
            (x, y - h),
            w,
            h,
            boxstyle="round,pad=0.1,rounding_size=0.3",
            facecolor=color,
            edgecolor="none",
            alpha=0.15,
        )
    )
    ax.text(x + 0.3, y - 0.3, "\n".join(lines), va="top", ha="left", linespacing=1.3)
    return h


def claim_lines(verdict: Any) -> list[str]:
    lines = textwrap.wrap(verdict.claim, CLAIM)
    if verdict.attributed and verdict.evidence:
        quote = textwrap.wrap(f"\u201c{verdict.evidence}\u201d", QUOTE)
        lines += ["    " + line for line in quote]
    mark = "supported" if verdict.attributed else "missing"
    p, overlap = verdict.p_supported or 0.0, verdict.word_overlap or 0.0
    return [*lines, f"{mark}: P(supported) {p:.2f}, word overlap {overlap:.2f}"]


def chunk_lines(chunk: Any) -> list[str]:
    return [chunk.id, *textwrap.wrap(chunk.text, CHUNK)]


def extent(record: Any) -> float:
    """The lines a sample's panel takes (the taller of its claims and its chunks)."""
    verdicts = record.results["context_recall"].verdicts
    claims = sum(len(claim_lines(v)) + 0.6 + GAP for v in verdicts)
    chunks = sum(len(chunk_lines(c)) + 0.6 + GAP for c in record.sample.retrieved_contexts)
    return max(claims, chunks, len(textwrap.wrap(record.sample.reference, REFERENCE)) + 1)


def draw_sample(ax: Axes, record: Any, title: str) -> None:
    result = record.results["context_recall"]
    ax.set_axis_off()
    ax.text(0, 1.3, title, fontsize=10, fontweight="bold", va="bottom")
    for x, head in ((0, "reference"), (13.5, "claims, with the evidence each verdict cites"),
                    (35, "retrieved chunks")):  # fmt: skip
        ax.text(x, 0.3, head, color=GREY, va="bottom")
    box(ax, 0, 0, 12.3, textwrap.wrap(record.sample.reference, REFERENCE), GREY)
    ax.add_patch(FancyArrowPatch((12.5, -1.0), (13.3, -1.0), arrowstyle="-|>",
                                 mutation_scale=10, color=GREY))  # fmt: skip
    ends: dict[str, float] = {}
    y = 0.0
    for chunk in record.sample.retrieved_contexts:
        ends[chunk.id] = y - 0.8
        y -= box(ax, 35, y, 14.5, chunk_lines(chunk), BLUE) + GAP
    y = 0.0
    for verdict in result.verdicts:
        color = GREEN if verdict.attributed else RED
        for cid in verdict.chunk_ids if verdict.attributed else []:
            ax.add_patch(FancyArrowPatch((34.8, ends[cid]), (33.6, y - 0.8), arrowstyle="-|>",
                                         mutation_scale=10, color=GREEN, lw=1.2))  # fmt: skip
        y -= box(ax, 13.5, y, 20, claim_lines(verdict), color) + GAP
    ax.set_xlim(-0.2, 49.7)
    ax.set_ylim(-extent(record), 2.3)


def claims_figure(out: Path) -> None:
    rows = {r.index: r for r in read_records(DATA / "example-results.jsonl")}
    picked = [rows[1], rows[2]]  # a claim the chunks contradict; two they do not hold
    heights = [extent(r) + 2.3 for r in picked]
    fig, axes = plt.subplots(
        len(picked), 1, figsize=(10.5, sum(heights) * 0.235), gridspec_kw={"height_ratios": heights}
    )
    for ax, record in zip(axes, picked, strict=True):
        score = record.results["context_recall"].score
        draw_sample(ax, record, f"{record.sample.user_input}   (context recall {score:.2f})")
    save(fig, out / "claims.svg")


# --- the decision rule ----------------------------------------------------------------------


def lfqa() -> list[dict[str, Any]]:
    return read_jsonl(DATA / "lfqa-claims.jsonl")


def decision_figure(out: Path) -> None:
    defaults = inspect.signature(ContextRecall).parameters  # the decision ContextRecall makes
    d = Decision(defaults["support_threshold"].default, defaults["lexical_weight"].default)
    rows = [r for r in lfqa() if r["p"] is not None and r["overlap"] is not None]
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for people, color, name in ((True, GREEN, "supported"), (False, RED, "not supported")):
        pts = [(r["overlap"], r["p"]) for r in rows if r["people"] is people]
        ax.scatter(
            [x for x, _ in pts],
            [y for _, y in pts],
            s=14,
            alpha=0.6,
            color=color,
            label=f"people: {name} ({len(pts)})",
            linewidths=0,
        )
    w, t = d.lexical_weight, d.support_threshold
    xs = [i / 100 for i in range(101)]
    line = [(t - w * x) / (1 - w) for x in xs]
    ax.plot(
        xs,
        line,
        color="black",
        lw=1.2,
        label=f"threshold: {1 - w:.1f} P + {w:.1f} overlap = {t:.2f}",
    )
    ax.fill_between(xs, line, [1.05] * len(xs), color=GREEN, alpha=0.06, label="the claim counts")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("word overlap (share of the claim's content words in its best sentence)")
    ax.set_ylabel("P(supported) (the judge's verdict token)")
    ax.set_title(f"The decision rule (the defaults), {len(rows)} LFQA claims", fontsize=10)
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    save(fig, out / "decision.svg")


# --- calibration ----------------------------------------------------------------------------


def reliability_figure(out: Path) -> None:
    rows = [r for r in lfqa() if r["p"] is not None]
    edges = [i / 5 for i in range(6)]
    bins: list[list[dict[str, Any]]] = [[] for _ in range(5)]
    for r in rows:
        bins[min(int(r["p"] * 5), 4)].append(r)
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(5, 5.2), sharex=True, gridspec_kw={"height_ratios": [3, 1]}
    )
    top.plot([0, 1], [0, 1], color=GREY, lw=1, ls="--", label="perfectly calibrated")
    xs = [mean([r["p"] for r in b]) for b in bins if b]
    ys = [mean([float(r["people"]) for r in b]) for b in bins if b]
    ece = sum(
        len(b) * abs(x - y) for b, x, y in zip([b for b in bins if b], xs, ys, strict=True)
    ) / len(rows)
    top.plot(xs, ys, marker="o", color=BLUE, label=f"the judge (plain 5-bin ECE {ece:.2f})")
    top.set_ylabel("share people call supported")
    top.set_ylim(0, 1)
    top.set_title(f"Reliability of P(supported), {len(rows)} LFQA claims", fontsize=10)
    top.legend(loc="lower right", fontsize=8, frameon=False)
    bottom.bar(
        [(a + b) / 2 for a, b in itertools.pairwise(edges)],
        [len(b) for b in bins],
        width=0.18,
        color=GREY,
    )
    bottom.set_ylabel("claims")
    bottom.set_xlabel("P(supported), in five bins")
    bottom.set_xlim(0, 1)
    save(fig, out / "reliability.svg")


def ppi_figure(out: Path) -> None:
    answers: dict[str, dict[str, list[float]]] = {}
    for r in lfqa():
        a = answers.setdefault(r["answer"], {"judge": [], "people": []})
        a["judge"].append(float(r["attributed"]))
        a["people"].append(float(r["people"]))
    ids = sorted(answers)
    judge = {i: mean(answers[i]["judge"]) for i in ids}
    people = {i: mean(answers[i]["people"]) for i in ids}
    truth, raw = mean(list(people.values())), mean(list(judge.values()))
    n, big_n = LABELLED, len(ids)
    rng = random.Random(SEED)
    fig, ax = plt.subplots(figsize=(6.2, 3.8))
    for k in range(DRAWS):
        picked = rng.sample(ids, n)
        ppi = ppi_mean(
            [judge[i] for i in ids], [judge[i] for i in picked], [people[i] for i in picked]
        )
        y = DRAWS - k
        ax.plot(
            list(ppi.labels_only),
            [y + 0.15] * 2,
            color=GREY,
            lw=3,
            solid_capstyle="butt",
            label="people's labels only" if k == 0 else None,
        )
        ax.plot(
            [ppi.low, ppi.high],
            [y - 0.15] * 2,
            color=BLUE,
            lw=3,
            solid_capstyle="butt",
            label="PPI: the judge's scores corrected by the labels" if k == 0 else None,
        )
    ax.axvline(truth, color=GREEN, lw=1.2, label=f"people's mean over all {big_n} answers")
    ax.axvline(raw, color=RED, lw=1.2, ls="--", label="the judge's mean, uncorrected")
    ax.set_yticks(range(1, DRAWS + 1), [f"draw {DRAWS - i + 1}" for i in range(1, DRAWS + 1)])
    ax.set_xlabel("mean context recall (90 % intervals)")
    ax.set_title(f"{n} of {big_n} LFQA answers labelled, {DRAWS} random draws", fontsize=10)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2, fontsize=8, frameon=False)
    save(fig, out / "ppi.svg")


# --- the saved LFQA run ---------------------------------------------------------------------


def from_lfqa(run: Path) -> int:
    """``judge_scores``' folder (results.jsonl, gold.jsonl) -> lfqa-claims.jsonl."""
    gold = {g["sample_id"]: g["gold"] for g in read_jsonl(run / "gold.jsonl")}
    lines = []
    for record in read_records(run / "results.jsonl"):
        result = record.results["context_recall"]
        if result.status != "scored":
            continue
        for number, (v, people) in enumerate(
            zip(result.verdicts, gold[record.sample.sample_id], strict=True)
        ):
            row = {
                "answer": record.sample.sample_id,
                "claim": number,
                "p": None if v.p_supported is None else round(v.p_supported, 4),
                "overlap": None if v.word_overlap is None else round(v.word_overlap, 4),
                "attributed": v.attributed,
                "people": people,
            }
            lines.append(json.dumps(row))
    (DATA / "lfqa-claims.jsonl").write_text("\n".join(lines) + "\n")
    return len(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE, help="where the figures go")
    parser.add_argument("--from-lfqa", type=Path, help="judge_scores' folder to reduce first")
    args = parser.parse_args()
    if args.from_lfqa:
        print(f"{from_lfqa(args.from_lfqa)} claims -> {DATA / 'lfqa-claims.jsonl'}")
    args.out.mkdir(parents=True, exist_ok=True)
    style()
    claims_figure(args.out)
    decision_figure(args.out)
    reliability_figure(args.out)
    ppi_figure(args.out)
    print(f"{', '.join(FIGURES)} -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
