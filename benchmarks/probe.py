"""A logistic probe on the judge's hidden state at the verdict position (issue 28 item 3).

    python benchmarks/probe.py collect --data D/data.jsonl --gold D/gold.jsonl
        --baseline D/results.jsonl [--limit 47] --out OUT.jsonl
    python benchmarks/probe.py fit OUT.jsonl [--folds 5]

``collect`` starts llama.cpp (xllamacpp) on the pinned model with embeddings on (pooling
"last", not normalised) and, for each claim of the baseline run (``lfqa_scores.py``'s results
file: today's defaults), sends the very prompt of its token verdict: ``PER_CLAIM_PROMPT`` with
the passages as the metric renders them, in the model's chat format, ending with
``VERDICT_PREFIX``. The reply is the last layer's state at the last prompt token, the one that
predicts the verdict token. Each claim is written with its people's label, the baseline's
P(supported), word overlap and decision; the file is resumable (answers already in it are
skipped). llama.cpp computes embeddings without its prompt cache, so each claim pays for its
passages (about 8 s on 2 cores).

``fit`` compares, by grouped cross-validation (answers never split across folds), today's
P(supported) with logistic models fitted on the other folds: on [logit P, word overlap]
(a recalibration), on the hidden state, and on both. The L2 strength is chosen in the
training folds. Printed per model: AUC, Brier score, distinct P (rounded 0.01), balanced
accuracy at P = 0.5 (today's: its own decision). Needs numpy and scikit-learn.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import commit

PORT = 18777


def collect(args: argparse.Namespace) -> None:
    import xllamacpp

    from ragrecall import ContextRecall
    from ragrecall._data import to_sample
    from ragrecall._judge.resolve import context_window
    from ragrecall._local._model import resolve_model
    from ragrecall._metrics.windows import pack
    from ragrecall.judges import LocalJudge
    from ragrecall.prompts import PER_CLAIM_PROMPT, VERDICT_PREFIX

    info = resolve_model()
    p = xllamacpp.CommonParams()
    p.model.path = str(getattr(info, "path", info))
    p.hostnames, p.port = ["127.0.0.1"], PORT
    p.n_ctx, p.n_parallel, p.n_batch, p.n_ubatch = 4096, 1, 4096, 4096
    p.cpuparams.n_threads = p.cpuparams_batch.n_threads = args.threads
    p.warmup, p.embedding, p.embd_normalize = False, True, -1
    p.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_LAST
    _server = xllamacpp.Server(p)
    for _ in range(120):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{PORT}/health")
            break
        except OSError:
            time.sleep(1)

    def chat(messages: list[Any]) -> str:  # the model's (Qwen2.5) chat format, reply started
        roles = {"system": "system", "human": "user"}
        turns = [f"<|im_start|>{roles[m.type]}\n{m.content}<|im_end|>\n" for m in messages]
        return "".join(turns) + "<|im_start|>assistant\n" + VERDICT_PREFIX

    def hidden(text: str) -> list[float]:
        body = json.dumps({"input": text}).encode()
        req = urllib.request.Request(
            f"http://127.0.0.1:{PORT}/v1/embeddings",
            data=body,
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=600) as reply:
            vector: list[float] = json.load(reply)["data"][0]["embedding"]
        return vector

    gold: dict[str, list[bool]] = {}
    for line in args.gold.open():
        g = json.loads(line)
        gold.setdefault(g["sample_id"], g["gold"])
    baseline = {}
    for line in args.baseline.open():
        r = json.loads(line)
        baseline[r["sample"]["sample_id"]] = r["results"]["context_recall"]
    done = {json.loads(line)["sample_id"] for line in args.out.open()} if args.out.exists() else set()
    metric = ContextRecall(LocalJudge())
    start, n = time.perf_counter(), 0
    with args.out.open("a") as sink:
        for i, line in enumerate(args.data.open()):
            if i >= args.limit:
                break
            raw = json.loads(line)
            sid = raw["sample_id"]
            if sid in done or sid not in baseline or sid not in gold:
                continue
            chunks = [c for c in to_sample(raw).retrieved_contexts if c.text.strip()]
            windows = pack(chunks, metric.window_tokens or context_window(metric.judge))
            if len(windows) > 1:  # the baseline's verdict may come from any of them
                print(f"  {sid}: {len(windows)} windows; skipped")
                continue
            passages = metric.render_passages(windows[0])
            verdicts = baseline[sid]["verdicts"]
            for k, (v, y) in enumerate(zip(verdicts, gold[sid], strict=True)):
                if v["p_supported"] is None:
                    continue
                messages = PER_CLAIM_PROMPT.format_messages(passages=passages, claim=v["claim"])
                row = {
                    "sample_id": sid,
                    "k": k,
                    "gold": y,
                    "p": v["p_supported"],
                    "overlap": v["word_overlap"],
                    "attributed": v["attributed"],
                    "h": [round(x, 5) for x in hidden(chat(messages))],
                }
                sink.write(json.dumps(row) + "\n")
                sink.flush()
                n += 1
            print(f"  {i + 1} {sid}: {n} claims, {time.perf_counter() - start:.0f} s", flush=True)


def fit(args: argparse.Namespace) -> None:
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import brier_score_loss, roc_auc_score
    from sklearn.model_selection import GroupKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rows = [json.loads(line) for line in args.rows.open()]
    y = np.array([r["gold"] for r in rows], dtype=int)
    groups = np.array([r["sample_id"] for r in rows])
    p = np.clip(np.array([r["p"] for r in rows]), 1e-6, 1 - 1e-6)
    base = np.column_stack([np.log(p / (1 - p)), [r["overlap"] or 0.0 for r in rows]])
    h = np.array([r["h"] for r in rows])
    print(f"{len(rows)} claims, {len(set(groups))} answers, {y.mean():.2f} supported, dim {h.shape[1]}")

    def held_out(x: Any) -> Any:
        out = np.zeros(len(y))
        for train, test in GroupKFold(args.folds).split(x, y, groups):
            best, best_c = -1.0, 1.0
            for c in (1e-4, 1e-3, 1e-2, 1e-1, 1.0):  # chosen inside the training folds
                inner = np.zeros(len(train))
                for a, b in GroupKFold(3).split(x[train], y[train], groups[train]):
                    model = make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=5000))
                    model.fit(x[train][a], y[train][a])
                    inner[b] = model.predict_proba(x[train][b])[:, 1]
                score = roc_auc_score(y[train], inner)
                if score > best:
                    best, best_c = score, c
            model = make_pipeline(StandardScaler(), LogisticRegression(C=best_c, max_iter=5000))
            model.fit(x[train], y[train])
            out[test] = model.predict_proba(x[test])[:, 1]
        return out

    def balanced(pred: Any) -> float:
        return float((pred[y == 1].mean() + (1 - pred[y == 0]).mean()) / 2)

    def show(name: str, q: Any, pred: Any) -> None:
        print(
            f"{name:34s} AUC {roc_auc_score(y, q):.3f}  Brier {brier_score_loss(y, q):.4f}"
            f"  distinct {len({round(float(v), 2) for v in q}):3d}  BA {balanced(pred):.3f}"
        )

    show("today's P (its own decision)", p, np.array([r["attributed"] for r in rows], dtype=int))
    for name, x in (
        ("recalibrated [logit P, overlap]", base),
        ("probe on the hidden state", h),
        ("probe + [logit P, overlap]", np.column_stack([h, base])),
    ):
        q = held_out(x)
        show(name, q, (q >= 0.5).astype(int))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--data", type=Path, required=True)
    c.add_argument("--gold", type=Path, required=True)
    c.add_argument("--baseline", type=Path, required=True)
    c.add_argument("--limit", type=int, default=47)
    c.add_argument("--threads", type=int, default=2)
    c.add_argument("--out", type=Path, required=True)
    f = sub.add_parser("fit")
    f.add_argument("rows", type=Path)
    f.add_argument("--folds", type=int, default=5)
    args = parser.parse_args()
    print(f"command: {shlex.join(['python', *sys.argv])}")
    print(f"commit {commit()}  date {time.strftime('%Y-%m-%d %H:%M')}")
    collect(args) if args.command == "collect" else fit(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
