"""Shared by the benchmarks: dataset readers, judge options, statistics, output."""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent  # the repository
DATA = HERE / "data"  # the inputs written for the benchmarks
OUT = HERE / "out"  # where they write by default (not committed)
DEFAULT_DATA = ROOT.parent / "shared" / "datasets"


def data_dir(value: str | None) -> Path | None:
    """The shared datasets folder, or None (benchmarks then skip cleanly)."""
    path = Path(value or os.environ.get("RAGRECALL_DATASETS") or DEFAULT_DATA)
    return path if path.is_dir() else None


def add_judge_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--judge", default="local", help="'local' or 'provider:model'")
    parser.add_argument("--base-url", help="an OpenAI-compatible server to use as the judge")
    parser.add_argument("--api-key", default="none")
    parser.add_argument("--model", default="judge", help="model name at --base-url")


def make_judge(args: argparse.Namespace) -> BaseChatModel | str:
    if args.base_url:
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(
            base_url=args.base_url,
            api_key=args.api_key,
            model=args.model,
            temperature=0,
            logprobs=True,
            top_logprobs=5,
            max_retries=0,
        )
    if args.judge == "local":
        from ragrecall.judges import LocalJudge

        return LocalJudge()
    return str(args.judge)


def judge_at(base_url: str, api_key: str, model: str, timeout: float | None = None) -> Any:
    """A ``ChatOpenAI`` with ``LocalJudge``'s settings at ``base_url`` (e.g. the counting proxy
    in front of the embedded judge): temperature 0, logprobs, no client retries, no proxies."""
    import openai
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        base_url=base_url,
        api_key=api_key,
        model=model,
        temperature=0,
        logprobs=True,
        top_logprobs=5,
        max_retries=0,
        timeout=timeout,
        http_client=openai.DefaultHttpxClient(trust_env=False),
        http_async_client=openai.DefaultAsyncHttpxClient(trust_env=False),
    )


def majority(labels: Sequence[str]) -> str | None:
    label, count = Counter(labels).most_common(1)[0]
    return label if count >= 2 else None


def lfqa_answers(root: Path, limit: int, seed: int) -> list[dict[str, Any]]:
    """Seeded sample of LFQA-Verification answers as samples with gold sentence labels (and
    each annotator's, under ``labels``)."""
    base = root / "lfqa_verification"
    docs = {
        d["question_id"]: d["docs"]
        for d in json.loads((base / "docs" / "docs-webgpt.json").read_text())
    }
    answers = []
    for path in sorted((base / "annotations").glob("annotations-*.json")):
        system = path.stem.removeprefix("annotations-")
        for item in json.loads(path.read_text()):
            labelled, seen = [], set()
            for a in item["annotations"]:  # a repeated sentence is one claim, labelled once
                label, sentence = majority(a["labels"]), a["answer"].strip()
                if label is not None and sentence and sentence not in seen:
                    seen.add(sentence)
                    labelled.append((sentence, label, a["labels"]))
            if not labelled or item["question_id"] not in docs:
                continue
            answers.append(
                {
                    "id": f"{system}:{item['question_id']}",
                    "user_input": item["question"],
                    "reference": " ".join(s for s, _, _ in labelled),
                    "reference_claims": [s for s, _, _ in labelled],
                    "gold": [label == "supported" for _, label, _ in labelled],
                    "labels": [labels for _, _, labels in labelled],  # each annotator's
                    "retrieved_contexts": [
                        {"id": d["doc_id"], "text": f"{d['title']}\n{d['text']}"}
                        for d in docs[item["question_id"]]
                    ],
                }
            )
    random.Random(seed).shuffle(answers)
    return answers[:limit]


def attributionbench_rows(root: Path, split: str, limit: int, seed: int) -> list[dict[str, Any]]:
    name = {
        "dev": "dev_all_subset_balanced.jsonl",
        "test": "test_all_subset_balanced_sampled500.jsonl",
    }[split]
    rows = [json.loads(line) for line in (root / "attributionbench" / name).open()]
    random.Random(seed).shuffle(rows)
    return [
        {
            "id": r["id"],
            "source": r["src_dataset"],
            "user_input": r["question"],
            "reference_claims": [r["claim"]],
            "retrieved_contexts": [t for t in r["references"] if t.strip()],
            "gold": [r["attribution_label"] == "attributable"],
        }
        for r in rows[:limit]
    ]


def shared_sets(root: Path) -> dict[str, list[dict[str, Any]]]:
    """Every LFQA-Verification answer and AttributionBench dev row, by set name."""
    return {
        "lfqa": lfqa_answers(root, 600, 0),
        "attributionbench dev": attributionbench_rows(root, "dev", 10**9, 0),
    }


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    n = len(x)
    if n < 3:
        return None
    mx, my = sum(x) / n, sum(y) / n
    sx = math.sqrt(sum((a - mx) ** 2 for a in x))
    sy = math.sqrt(sum((b - my) ** 2 for b in y))
    if sx == 0 or sy == 0:
        return None
    return sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True)) / (sx * sy)


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    from ragrecall.stats import ranks

    return pearson(ranks(x), ranks(y))


def mae(x: Sequence[float], y: Sequence[float]) -> float:
    return sum(abs(a - b) for a, b in zip(x, y, strict=True)) / len(x)


def auc(gold: Sequence[bool], scores: Sequence[float]) -> float | None:
    pos = [s for g, s in zip(gold, scores, strict=True) if g]
    neg = [s for g, s in zip(gold, scores, strict=True) if not g]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def write_json(path: Path | None, value: Any) -> None:
    """``value`` as indented JSON at ``path`` (its folder made); nothing if ``path`` is None."""
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value, indent=2))


def write_jsonl(path: Path | None, items: Sequence[Any]) -> None:
    """One JSON line per item at ``path`` (its folder made); nothing if ``path`` is None."""
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(i) + "\n" for i in items))


def commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).parent,
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def scored_answers(
    results: Path, gold: Path, source: str | None = None
) -> list[tuple[str, dict[str, Any], list[bool]]]:
    """The scored answers of a ``judge_scores.py`` folder, each with its context_recall result
    and the majority label of each claim: ``(sample_id, result, labels)``; with ``source``,
    only an AttributionBench source's rows. A line the run may be writing now, an unscored
    answer and one whose claims do not match its labels are left out."""
    truth = {}
    for line in gold.read_text().splitlines():
        row = json.loads(line)
        if source is None or row.get("source") == source:
            truth[row["sample_id"]] = row["gold"]
    out = []
    for line in results.read_text().splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        sid = row["sample"]["sample_id"]
        result = row["results"].get("context_recall") or {}
        labels = truth.get(sid)
        if result.get("status") != "scored" or labels is None:
            continue
        if len(labels) == len(result.get("verdicts") or []):
            out.append((sid, result, labels))
    return out
