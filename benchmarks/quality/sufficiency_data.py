"""Convert the raw answerability datasets into the rows ``benchmarks.quality.sufficiency`` reads.

    python -m benchmarks.quality.sufficiency_data [source ...]

Standard library only. The raw files lie under ``$RAGRECALL_BENCH_DATA`` (default
``~/.cache/ragrecall/bench-data``), one folder per source with ``raw/`` and PROVENANCE.md
(where each came from, at which commit, and what its label means); each ``rows.jsonl`` is
written beside them. Sources: cast_answerability, conditionalqa, hotpotqa_without_support
(default: all).

Each output line:
  {"id", "source", "question", "contexts": [str], "sufficient": bool,
   "history": [[q, a], ...], "dialogue_id": str|None, "split": "dev"|"heldout"}

Split rule: sha256(dialogue_id or id) -> first 8 hex digits as int, % 100 < 30 -> "dev",
else "heldout". A whole dialogue always lands in one split.
All selection is deterministic (no randomness; ordering by sorted keys / hashes).
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import html
import json
import os
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(
    os.environ.get("RAGRECALL_BENCH_DATA") or Path.home() / ".cache" / "ragrecall" / "bench-data"
)
MAX_WORDS = 1200

csv.field_size_limit(10**9)


def _h(s: str) -> int:
    return int(hashlib.sha256(s.encode("utf-8")).hexdigest()[:8], 16)


def split_of(key: str) -> str:
    return "dev" if _h(key) % 100 < 30 else "heldout"


def cap_words(text: str, n: int = MAX_WORDS) -> str:
    w = text.split()
    return text if len(w) <= n else " ".join(w[:n])


def write_rows(source: str, rows: list[dict[str, Any]]) -> Path:
    out = ROOT / source / "rows.jsonl"
    with out.open("w", encoding="utf-8") as f:
        for r in rows:
            r["split"] = split_of(r["dialogue_id"] or r["id"])
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return out


# --------------------------------------------------------------------------
# 1. CAsT-answerability (Łajewska & Balog, ECIR 2024), TREC CAsT 2020 + 2022
# --------------------------------------------------------------------------
def _turn_key(turn_id: str) -> tuple[tuple[int, str], tuple[int, str]]:
    topic, _, turn = turn_id.partition("_")

    def num(x: str) -> tuple[int, str]:
        m = re.match(r"\d+", x)
        return (int(m.group()) if m else 10**9, x)

    return (num(topic), num(turn))


def _parse_set(s: str) -> list[str]:
    s = (s or "").strip()
    if not s or s == "set()":
        return []
    try:
        v = ast.literal_eval(s)
        return [str(x) for x in v]
    except (ValueError, SyntaxError):
        return []


def convert_cast() -> list[dict[str, Any]]:
    src = "cast_answerability"
    raw = ROOT / src / "raw" / "data"
    snip = list(
        csv.DictReader(
            (raw / "CAsT-snippets" / "snippets_data_sentence-answerability.csv").open(
                encoding="utf-8", newline=""
            )
        )
    )
    unans = list(
        csv.DictReader(
            (raw / "CAsT-unanswerable" / "unanswerable.csv").open(encoding="utf-8", newline="")
        )
    )

    by_turn_pos: dict[str, list[dict[str, Any]]] = defaultdict(
        list
    )  # passages with snippet annotation
    query_of: dict[str, str] = {}
    for r in snip:
        t = r["Input.turn_id"]
        by_turn_pos[t].append(r)
        query_of[t] = r["Input.query"].strip()
    by_turn_neg: dict[str, list[dict[str, Any]]] = defaultdict(list)  # NIST grade-0 passages
    for r in unans:
        by_turn_neg[r["turn_id"]].append(r)
        query_of.setdefault(r["turn_id"], r["query"].strip())

    def snippet_answer(r: dict[str, Any]) -> str:
        sents = _parse_set(r["answerable_sentences"])
        p = r["Input.passage"]
        sents.sort(key=lambda s: (p.find(s) if p.find(s) >= 0 else 10**9, s))
        return " ".join(sents)

    def best_answerable(turn: str) -> list[dict[str, Any]]:
        c = [r for r in by_turn_pos.get(turn, []) if r["answerability"] == "1"]
        c.sort(key=lambda r: (-int(r["Input.relevance_score"] or 0), r["Input.passage_id"]))
        return c

    turns = sorted(query_of, key=_turn_key)
    topics: dict[str, list[str]] = defaultdict(list)
    for t in turns:
        topics[t.partition("_")[0]].append(t)

    rows: list[dict[str, Any]] = []
    for topic, tlist in topics.items():
        dialogue_id = f"cast-{topic}"
        history: list[list[str]] = []
        for t in tlist:
            q = query_of[t]
            pos = best_answerable(t)
            # sufficient: up to 2 passages with >=1 crowd-annotated answer snippet
            chosen = [(r, True, "snippet") for r in pos[:2]]
            # insufficient (hard): judged-relevant passages where no annotator marked a snippet
            chosen += [
                (r, False, "no_snippet")
                for r in sorted(
                    (r for r in by_turn_pos.get(t, []) if r["answerability"] == "0"),
                    key=lambda r: r["Input.passage_id"],
                )
            ]
            # insufficient (easy): NIST relevance grade 0 passages from the pool, 2 per turn
            negs = sorted(by_turn_neg.get(t, []), key=lambda r: _h(t + r["passage_id"]))[:2]
            chosen += [(r, False, "nist_grade0") for r in negs]
            for r, label, kind in chosen:
                pid = r.get("Input.passage_id") or r["passage_id"]
                passage = (r.get("Input.passage") or r["passage"]).strip()
                rows.append(
                    {
                        "id": f"cast-{t}-{pid}",
                        "source": src,
                        "question": q,
                        "contexts": [cap_words(passage)],
                        "sufficient": label,
                        "history": [list(h) for h in history],
                        "dialogue_id": dialogue_id,
                        "label_kind": kind,
                        "relevance_grade": int(
                            r.get("Input.relevance_score") or r.get("relevance_score") or "0"
                        ),
                    }
                )
            ans = snippet_answer(pos[0]) if pos else ""
            history.append([q, ans])
    return rows


# --------------------------------------------------------------------------
# 2. ConditionalQA v1.0 (Sun, Cohen, Salakhutdinov, ACL 2022)
# --------------------------------------------------------------------------
_TAG = re.compile(r"<[^>]+>")


def clean_evidence(s: str) -> str:
    """An evidence sentence as the excerpt holds it: tags and entities out, spaces one."""
    return re.sub(r"\s+", " ", html.unescape(_TAG.sub(" ", s))).strip()


def convert_conditionalqa() -> list[dict[str, Any]]:
    src = "conditionalqa"
    raw = ROOT / src / "raw" / "v1_0"
    items = []
    for name in ("train", "dev"):
        for x in json.loads((raw / f"{name}.json").read_text(encoding="utf-8")):
            items.append(x)
    by_url: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for x in items:
        by_url[x["url"]].append(x)

    def page_excerpt(x: dict[str, Any]) -> list[str]:
        """Union of all human-selected evidence sentences for this page (all questions on
        the same URL), de-duplicated, ordered by a hash so position leaks nothing."""
        seen: dict[str, None] = {}
        for y in by_url[x["url"]]:
            for e in y["evidences"]:
                c = clean_evidence(e)
                if c:
                    seen.setdefault(c, None)
        own = {clean_evidence(e) for e in x["evidences"]}
        sents = sorted(seen, key=lambda s: _h(x["id"] + s))
        # cap: keep own evidence sentences always, fill with others up to MAX_WORDS
        out, n = [], sum(len(s.split()) for s in own)
        for s in sents:
            if s in own:
                out.append(s)
            elif n + len(s.split()) <= MAX_WORDS:
                out.append(s)
                n += len(s.split())
        return out

    unans = [x for x in items if x["not_answerable"]]
    ans = [x for x in items if not x["not_answerable"] and x["evidences"]]
    # keep all human-labelled unanswerable questions; sample answerable so minority >= 30 %
    n_ans = int(len(unans) * 7 / 3)
    ans = sorted(ans, key=lambda x: _h("cqa" + x["id"]))[:n_ans]
    rows = []
    for x in sorted(unans + ans, key=lambda x: x["id"]):
        sents = page_excerpt(x)
        if not sents:
            continue
        q = x["question"].strip()
        scen = (x.get("scenario") or "").strip()
        rows.append(
            {
                "id": f"cqa-{x['id']}",
                "source": src,
                "question": (f"{scen} {q}" if scen else q),
                "contexts": ["\n".join(sents)],
                "sufficient": not x["not_answerable"],
                "history": [],
                "dialogue_id": None,
                "url": x["url"],
                "scenario": scen,
                "bare_question": q,
            }
        )
    return rows


# --------------------------------------------------------------------------
# 3. HotpotQA dev, distractor setting (Yang et al., EMNLP 2018): derived pairs
# --------------------------------------------------------------------------
HOTPOT = "hotpotqa_without_support"


def _complete_records(text: str) -> list[dict[str, Any]]:
    """The whole records of a JSON array cut off mid-record (the copy we could get)."""
    decoder, at, records = json.JSONDecoder(), text.index("[") + 1, []
    while True:
        while at < len(text) and text[at] in ", \n":
            at += 1
        try:
            record, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            return records
        records.append(record)


def convert_hotpotqa() -> list[dict[str, Any]]:
    """Each question twice: with both paragraphs people marked as supporting it (sufficient),
    and with the one that holds the answer swapped for a further distractor (insufficient).
    The raw file is the first 365,099 bytes of ``hotpot_dev_distractor_v1.json`` (GitHub
    ``Rakin061/hotpot`` at 077eab2, the only copy reachable here): its 53 whole records."""
    raw = ROOT / HOTPOT / "raw" / "hotpot_dev_distractor_v1.prefix.json"
    rows = []
    for x in _complete_records(raw.read_text(encoding="utf-8")):
        paragraphs = {t: f"{t}: " + "".join(s).strip() for t, s in x["context"]}
        gold = list(dict.fromkeys(t for t, _ in x["supporting_facts"]))
        answer = x["answer"].strip().lower()
        yes_no = answer in ("yes", "no")
        holds = [t for t in gold if not yes_no and answer in paragraphs[t].lower()]
        removed = (holds or gold)[-1]
        others = [
            t
            for t in sorted(paragraphs, key=lambda t: _h(x["_id"] + t))
            if t not in gold and (yes_no or answer not in paragraphs[t].lower())
        ]
        if len(gold) != 2 or len(others) < 3:
            continue
        kept = [t for t in gold if t != removed]
        for suffix, titles, sufficient in (
            ("+support", [*gold, *others[:2]], True),
            ("-support", [*kept, *others[:3]], False),
        ):
            order = sorted(titles, key=lambda t: _h(x["_id"] + "order" + t))
            rows.append(
                {
                    "id": f"hotpot-{x['_id']}{suffix}",
                    "source": HOTPOT,
                    "question": x["question"].strip(),
                    "contexts": [paragraphs[t] for t in order],
                    "sufficient": sufficient,
                    "history": [],
                    "dialogue_id": f"hotpot-{x['_id']}",
                    "question_id": f"hotpot-{x['_id']}",
                    "type": x["type"],
                    "removed": None if sufficient else removed,
                }
            )
    return rows


CONVERTERS = {
    "cast_answerability": convert_cast,
    "conditionalqa": convert_conditionalqa,
    HOTPOT: convert_hotpotqa,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", nargs="*", help=f"{', '.join(CONVERTERS)} (default: all)")
    names = parser.parse_args().source or list(CONVERTERS)
    if unknown := [n for n in names if n not in CONVERTERS]:
        parser.error(f"unknown source {unknown[0]!r}; choose from {', '.join(CONVERTERS)}")
    if not ROOT.is_dir():
        print(f"skipped: no raw data at {ROOT} (set RAGRECALL_BENCH_DATA)")
        return
    for name in names:
        rows = CONVERTERS[name]()
        out = write_rows(name, rows)
        n = len(rows)
        suf = sum(r["sufficient"] for r in rows)
        dev = sum(r["split"] == "dev" for r in rows)
        words = sum(sum(len(c.split()) for c in r["contexts"]) for r in rows) / max(n, 1)
        print(
            f"{name}: rows={n} sufficient={suf} ({suf / max(n, 1):.1%}) dev={dev} "
            f"heldout={n - dev} avg_context_words={words:.1f} -> {out}"
        )


if __name__ == "__main__":
    main()
