"""Two retrievers on the same questions: does ``ragrecall compare`` catch a real regression?

    python benchmarks/compare_retrievers.py [--questions 20] [--k-good 4] [--k-bad 1]
        [--claim-mode atomic|sentences] [--small 4] [--alpha 0.05] [--workdir DIR]
        [--summary benchmarks/out/compare_retrievers.json]

A small corpus written for this benchmark (``TOPICS``: 20 topics, each with a question and a
reference of three short facts, each fact stated in its own document; plus ``DISTRACTORS``) in
a real ``langchain_core.vectorstores.InMemoryVectorStore`` on ``langchain_ragrecall``'s
``HashingEmbeddings``. Retriever A is ``as_retriever(search_kwargs={"k": K_GOOD})`` (4: brings
back the three facts), retriever B the same store at ``k = K_BAD`` (1: one fact at most), a
deliberately degraded candidate. Each retriever answers the first ``--questions`` questions and
its answers are written as a JSONL dataset (sample_id, user_input, reference,
retrieved_contexts with the documents' ids). Then the user's workflow, through the ``ragrecall``
command (``ragrecall.cli.main``), on the embedded judge:

    ragrecall claims A.jsonl --out claims.jsonl --claims-store DIR/claims.sqlite
    ragrecall eval A.jsonl --claims claims.jsonl --out ra.jsonl
    ragrecall eval B.jsonl --claims claims.jsonl --out rb.jsonl
    ragrecall compare ra.jsonl rb.jsonl --fail-if-worse

(``claims`` decomposes each reference once with the judge, ``--claim-mode atomic``, the
default; a fresh claim store, so that nothing comes from an earlier run.) The same comparison
is then made on the records of the first ``--small`` questions only (4: too few pairs for the
exact sign-flip test to reach alpha 0.05, whatever the data; the expected verdict is "too few
pairs", not "no significant difference").

Printed: the retrieval itself (facts of the reference among the retrieved documents, judge-free:
what a perfect judge would score with one claim per fact), each command's output verbatim with
its exit code and seconds, and a summary row per comparison, ready for ``RESULTS.md``: pairs,
only in A / B, means, mean difference B - A with its 95 % bootstrap interval, permutation p,
paired effect size, smallest detectable difference (80 % power), the verdict and exit code of
``compare --fail-if-worse``, and wall seconds. The summary figures are computed again from the
results files with ``ragrecall.stats`` (same seed and resamples as ``compare``), so that the
row does not depend on the table's layout; the verdict is the command's own. Asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import re
import shlex
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import commit, write_json

METRIC = "context_recall"
SEED, RESAMPLES = 0, 10_000  # compare's defaults

# (question, [(reference sentence, the document that states it), ...]) per topic; every fact
# in its own document, no document stating another fact of its topic.
TOPICS: list[tuple[str, list[tuple[str, str]]]] = [
    (
        (
            "Which countries does the Amazon River flow through, how long is the Amazon River, and"
            " which ocean does it empty into?"
        ),
        [
            (
                "The Amazon River flows through Peru, Colombia and Brazil.",
                (
                    "The Amazon River rises in the Andes of Peru and flows through Colombia and "
                    "Brazil."
                ),
            ),
            (
                "The Amazon River is about 6,400 kilometres long.",
                "Measured from its source, the Amazon River is roughly 6,400 kilometres long.",
            ),
            (
                "The Amazon River empties into the Atlantic Ocean.",
                "The Amazon River ends in a wide estuary and empties into the Atlantic Ocean.",
            ),
        ],
    ),
    (
        (
            "Where does Mount Kilimanjaro stand, how many metres high is Mount Kilimanjaro, and is"
            " Mount Kilimanjaro a volcano?"
        ),
        [
            (
                "Mount Kilimanjaro is in Tanzania.",
                "Mount Kilimanjaro stands in northeastern Tanzania, near the border with Kenya.",
            ),
            (
                "Mount Kilimanjaro is 5,895 metres high.",
                "The summit of Mount Kilimanjaro, Uhuru Peak, is 5,895 metres above sea level.",
            ),
            (
                "Mount Kilimanjaro is a dormant volcano.",
                "Mount Kilimanjaro is a dormant volcano made of three volcanic cones.",
            ),
        ],
    ),
    (
        (
            "Where does the Great Barrier Reef lie, how many reefs make up the Great Barrier Reef,"
            " and what threatens the Great Barrier Reef?"
        ),
        [
            (
                "The Great Barrier Reef lies off the coast of Queensland, Australia.",
                (
                    "The Great Barrier Reef lies in the Coral Sea off the coast of Queensland, "
                    "Australia."
                ),
            ),
            (
                "The Great Barrier Reef is made of about 2,900 individual reefs.",
                (
                    "The Great Barrier Reef is made up of about 2,900 individual reefs and 900 "
                    "islands."
                ),
            ),
            (
                "Coral bleaching threatens the Great Barrier Reef.",
                "Warmer sea water causes coral bleaching, which threatens the Great Barrier Reef.",
            ),
        ],
    ),
    (
        (
            "How do honeybees communicate, does each colony of honeybees have a queen, and how do "
            "honeybees make honey?"
        ),
        [
            (
                "Honeybees communicate with a waggle dance.",
                "Honeybees tell each other where flowers are with a waggle dance.",
            ),
            (
                "Each colony of honeybees has one queen.",
                "Each colony of honeybees has one queen, and she lays all of its eggs.",
            ),
            (
                "Honeybees make honey from flower nectar.",
                "Honeybees make honey by collecting flower nectar and evaporating its water.",
            ),
        ],
    ),
    (
        (
            "When was the Rosetta Stone found, which scripts does the Rosetta Stone carry, and "
            "where is the Rosetta Stone kept?"
        ),
        [
            (
                "The Rosetta Stone was found in 1799.",
                "French soldiers found the Rosetta Stone in Egypt in 1799.",
            ),
            (
                "The Rosetta Stone carries one text in three scripts.",
                (
                    "The Rosetta Stone carries one decree written in three scripts: hieroglyphic, "
                    "Demotic and Greek."
                ),
            ),
            (
                "The Rosetta Stone is kept in the British Museum.",
                "Since 1802 the Rosetta Stone has been on display in the British Museum in London.",
            ),
        ],
    ),
    (
        (
            "Where was Marie Curie born, what did Marie Curie discover, and which Nobel Prizes did"
            " Marie Curie win?"
        ),
        [
            (
                "Marie Curie was born in Warsaw in 1867.",
                "Marie Curie was born Maria Sklodowska in Warsaw in 1867.",
            ),
            (
                "Marie Curie discovered polonium and radium.",
                "Together with her husband Pierre, Marie Curie discovered polonium and radium.",
            ),
            (
                "Marie Curie won two Nobel Prizes.",
                "Marie Curie won two Nobel Prizes, in physics in 1903 and in chemistry in 1911.",
            ),
        ],
    ),
    (
        "Who discovered penicillin, what makes penicillin, and what does penicillin treat?",
        [
            (
                "Alexander Fleming discovered penicillin in 1928.",
                "Alexander Fleming discovered penicillin in 1928 at St Mary's Hospital in London.",
            ),
            (
                "Penicillin is made by Penicillium mould.",
                "Penicillin is made by a mould of the genus Penicillium.",
            ),
            (
                "Penicillin treats bacterial infections.",
                "Doctors use penicillin to treat bacterial infections such as strep throat.",
            ),
        ],
    ),
    (
        (
            "Where does the Sahara Desert stretch, is the Sahara Desert the largest hot desert, "
            "and how much does the Sahara Desert cover?"
        ),
        [
            (
                "The Sahara Desert stretches across North Africa.",
                "The Sahara Desert stretches across North Africa, from Mauritania to Egypt.",
            ),
            (
                "The Sahara Desert is the largest hot desert on Earth.",
                "No hot desert on Earth is larger than the Sahara Desert.",
            ),
            (
                "The Sahara Desert covers about 9 million square kilometres.",
                "The Sahara Desert covers about 9 million square kilometres.",
            ),
        ],
    ),
    (
        (
            "Is Jupiter the largest planet, which storm has raged on Jupiter for centuries, and "
            "how many moons orbit Jupiter?"
        ),
        [
            (
                "Jupiter is the largest planet in the solar system.",
                "Jupiter is the largest planet in the solar system, a gas giant of hydrogen.",
            ),
            (
                "Jupiter has a giant storm called the Great Red Spot.",
                (
                    "A storm bigger than Earth, the Great Red Spot, has raged on Jupiter for "
                    "centuries."
                ),
            ),
            (
                "Jupiter has 95 known moons.",
                "Astronomers have counted 95 moons orbiting Jupiter, Ganymede among them.",
            ),
        ],
    ),
    (
        (
            "How long is the Great Wall of China, why was the Great Wall of China built, and who "
            "built the Great Wall of China that survives?"
        ),
        [
            (
                "The Great Wall of China is over 21,000 kilometres long.",
                (
                    "Counting all its branches, the Great Wall of China is over 21,000 kilometres "
                    "long."
                ),
            ),
            (
                "The Great Wall of China was built to keep out northern invaders.",
                "The Great Wall of China was built to keep out invaders from the northern steppes.",
            ),
            (
                "The Ming dynasty built most of the surviving Great Wall of China.",
                (
                    "Most of the Great Wall of China that survives today was built by the Ming "
                    "dynasty."
                ),
            ),
        ],
    ),
    (
        (
            "How many hearts do octopuses have, what colour is the blood of octopuses, and can "
            "octopuses change the colour of their skin?"
        ),
        [
            (
                "Octopuses have three hearts.",
                "Octopuses have three hearts that keep their blood moving.",
            ),
            (
                "Octopuses have blue blood.",
                "The blood of octopuses is blue because it carries copper-based hemocyanin.",
            ),
            (
                "Octopuses can change the colour of their skin.",
                "Octopuses can change the colour of their skin in a fraction of a second.",
            ),
        ],
    ),
    (
        (
            "When did the Panama Canal open, what does the Panama Canal link, and how does the "
            "Panama Canal lift ships?"
        ),
        [
            (
                "The Panama Canal opened in 1914.",
                "The Panama Canal opened to shipping in August 1914.",
            ),
            (
                "The Panama Canal links the Atlantic and Pacific oceans.",
                (
                    "The Panama Canal links the Atlantic Ocean with the Pacific Ocean across the "
                    "Isthmus of Panama."
                ),
            ),
            (
                "The Panama Canal uses locks to lift ships.",
                "Locks on the Panama Canal lift ships 26 metres up to Gatun Lake.",
            ),
        ],
    ),
    (
        "Where was Mozart born, how many works did Mozart write, and where did Mozart die?",
        [
            (
                "Mozart was born in Salzburg in 1756.",
                "Wolfgang Amadeus Mozart was born in Salzburg in 1756.",
            ),
            (
                "Mozart wrote more than 600 works.",
                "Mozart wrote more than 600 works, among them 41 symphonies.",
            ),
            (
                "Mozart died in Vienna in 1791.",
                "Mozart died in Vienna in December 1791, at the age of 35.",
            ),
        ],
    ),
    (
        (
            "When did Johannes Gutenberg build his printing press, what type did the Gutenberg "
            "press use, and when was the Gutenberg Bible printed?"
        ),
        [
            (
                "Johannes Gutenberg built his printing press around 1440.",
                "Johannes Gutenberg built his printing press in Mainz around 1440.",
            ),
            (
                "The Gutenberg press used movable metal type.",
                "The Gutenberg press printed with movable metal type cast in a hand mould.",
            ),
            (
                "The Gutenberg Bible was printed in the 1450s.",
                (
                    "The Gutenberg Bible, printed in the 1450s, was the first major book from the "
                    "press."
                ),
            ),
        ],
    ),
    (
        (
            "Where does Lake Baikal lie, how deep is Lake Baikal, and how much fresh water does "
            "Lake Baikal hold?"
        ),
        [
            (
                "Lake Baikal is in Siberia.",
                "Lake Baikal lies in southern Siberia, in Russia.",
            ),
            (
                "Lake Baikal is the deepest lake in the world.",
                "At 1,642 metres, Lake Baikal is the deepest lake in the world.",
            ),
            (
                "Lake Baikal holds about a fifth of the fresh surface water on Earth.",
                "Lake Baikal holds about a fifth of all fresh surface water on Earth.",
            ),
        ],
    ),
    (
        (
            "Where did the Titanic leave from, what did the Titanic strike, and when did the "
            "Titanic sink?"
        ),
        [
            (
                "The Titanic sailed from Southampton.",
                "The Titanic left Southampton on its maiden voyage to New York.",
            ),
            (
                "The Titanic struck an iceberg.",
                "Late at night the Titanic struck an iceberg in the North Atlantic.",
            ),
            (
                "The Titanic sank in April 1912.",
                "The Titanic sank on 15 April 1912, with more than 1,500 deaths.",
            ),
        ],
    ),
    (
        (
            "What energy does photosynthesis capture, what does photosynthesis take in, and what "
            "does photosynthesis release?"
        ),
        [
            (
                "Photosynthesis uses the energy of sunlight.",
                "Photosynthesis captures the energy of sunlight with the pigment chlorophyll.",
            ),
            (
                "Photosynthesis takes in carbon dioxide and water.",
                "Photosynthesis takes in carbon dioxide from the air and water from the roots.",
            ),
            (
                "Photosynthesis releases oxygen.",
                "Photosynthesis releases oxygen into the air as a by-product.",
            ),
        ],
    ),
    (
        (
            "When was the Eiffel Tower completed, how tall is the Eiffel Tower, and what is the "
            "Eiffel Tower built from?"
        ),
        [
            (
                "The Eiffel Tower was completed in 1889.",
                "The Eiffel Tower was completed in 1889 for the World's Fair in Paris.",
            ),
            (
                "The Eiffel Tower is about 330 metres tall.",
                "Including its antennas, the Eiffel Tower is about 330 metres tall.",
            ),
            (
                "The Eiffel Tower is made of wrought iron.",
                "The Eiffel Tower is built from some 18,000 pieces of wrought iron.",
            ),
        ],
    ),
    (
        "Is Venus the hottest planet, which way does Venus spin, and how long is a day on Venus?",
        [
            (
                "Venus is the hottest planet in the solar system.",
                "Venus, at about 465 degrees Celsius, is the hottest planet in the solar system.",
            ),
            (
                "Venus spins in the opposite direction to most planets.",
                "Venus spins backwards, the opposite way from most planets.",
            ),
            (
                "A day on Venus lasts longer than its year.",
                "A day on Venus lasts 243 Earth days, longer than its year of 225 days.",
            ),
        ],
    ),
    (
        (
            "Which way does the Nile flow, which countries does the Nile pass through, and what "
            "controls the floods of the Nile?"
        ),
        [
            (
                "The Nile flows north into the Mediterranean Sea.",
                "The Nile flows north and empties into the Mediterranean Sea at a wide delta.",
            ),
            (
                "The Nile passes through Sudan and Egypt.",
                "On its way the Nile passes through Uganda, South Sudan, Sudan and Egypt.",
            ),
            (
                "The Aswan High Dam controls the floods of the Nile.",
                "Since 1970 the Aswan High Dam has controlled the yearly floods of the Nile.",
            ),
        ],
    ),
]

DISTRACTORS = [
    "The Mississippi River flows into the Gulf of Mexico.",
    "Mount Everest is the highest mountain above sea level.",
    "Saturn is known for its bright rings of ice and rock.",
    "Lake Superior is the largest of the Great Lakes by area.",
    "Ludwig van Beethoven composed nine symphonies.",
    "Bumblebees are larger and hairier than most other bees.",
    "The Statue of Liberty was a gift from France in 1886.",
    "Squid have long tentacles and a beak like a parrot.",
    "The Suez Canal links the Mediterranean Sea and the Red Sea.",
    "Aspirin was first made from a compound found in willow bark.",
    "The Gobi Desert is a cold desert in Mongolia and China.",
    "Isaac Newton described the law of universal gravitation.",
    "Chlorophyll gives the leaves of plants their green colour.",
    "The Leaning Tower of Pisa began to tilt while it was being built.",
    "Mars is called the red planet because of iron oxide dust.",
    "The Colosseum in Rome could hold about 50,000 spectators.",
]


def sample_id(i: int) -> str:
    return f"q{i + 1:02d}"


def build_store() -> Any:
    """Every topic's fact documents (ids ``q01-1`` ...) and the distractors (``d01`` ...) in
    an ``InMemoryVectorStore`` on ``HashingEmbeddings``."""
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore
    from langchain_ragrecall import HashingEmbeddings

    docs = [
        Document(text, id=f"{sample_id(i)}-{j + 1}")
        for i, (_, facts) in enumerate(TOPICS)
        for j, (_, text) in enumerate(facts)
    ]
    docs += [Document(text, id=f"d{i + 1:02d}") for i, text in enumerate(DISTRACTORS)]
    store = InMemoryVectorStore(HashingEmbeddings())
    store.add_documents(docs)
    return store


def dataset(retriever: Any, questions: int) -> list[dict[str, Any]]:
    """The retriever's answers to the first ``questions`` questions, as dataset rows."""
    rows = []
    for i, (question, facts) in enumerate(TOPICS[:questions]):
        docs = retriever.invoke(question)
        rows.append(
            {
                "sample_id": sample_id(i),
                "user_input": question,
                "reference": " ".join(ref for ref, _ in facts),
                "retrieved_contexts": [{"id": d.id, "text": d.page_content} for d in docs],
            }
        )
    return rows


def facts_found(rows: Sequence[dict[str, Any]]) -> list[float]:
    """Per row, the share of its topic's fact documents among the retrieved ones."""
    shares = []
    for row in rows:
        ids = {c["id"] for c in row["retrieved_contexts"]}
        facts = TOPICS[int(row["sample_id"][1:]) - 1][1]
        found = sum(f"{row['sample_id']}-{j + 1}" in ids for j in range(len(facts)))
        shares.append(found / len(facts))
    return shares


def write_rows(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")


def ragrecall(argv: list[str]) -> tuple[int, str, float]:
    """``ragrecall ARGV`` in this process: exit code, what it printed, seconds; printed as it
    goes, indented."""
    from ragrecall.cli import main as cli

    print(f"\n$ ragrecall {shlex.join(argv)}", flush=True)
    out = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out):
        code = cli(argv)
    seconds = time.perf_counter() - start
    text = out.getvalue()
    for line in text.rstrip("\n").splitlines():
        print(f"    {line}")
    print(f"  exit {code}, {seconds:.1f} s", flush=True)
    return code, text, seconds


def scores(path: Path) -> dict[str, float | None]:
    """Score by task key from a results file (the last line of a key wins, as in ragrecall)."""
    found: dict[str, float | None] = {}
    for line in path.read_text("utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            found[record["key"]] = record["results"][METRIC]["score"]
    return found


def subset(path: Path, ids: set[str], out: Path) -> None:
    """The lines of results file ``path`` whose sample id is in ``ids``."""
    lines = [
        line
        for line in path.read_text("utf-8").splitlines(keepends=True)
        if line.strip() and json.loads(line)["sample"].get("sample_id") in ids
    ]
    out.write_text("".join(lines), "utf-8")


def figures(a: dict[str, float | None], b: dict[str, float | None], alpha: float) -> dict[str, Any]:
    """Pairs, means, interval, tests and detectable difference, with ``ragrecall.stats``."""
    from ragrecall.stats import (
        bootstrap_ci,
        mean,
        minimum_detectable_difference,
        paired_effect_size,
        sign_flip_test,
    )

    shared = [k for k in b if k in a]
    pairs: list[tuple[float, float]] = []
    for key in shared:
        x, y = a[key], b[key]
        if x is not None and y is not None:
            pairs.append((x, y))
    diffs = [y - x for x, y in pairs]
    result: dict[str, Any] = {
        "samples_a": len(a),
        "samples_b": len(b),
        "paired": len(shared),
        "only_a": len(a) - len(shared),
        "only_b": len(b) - len(shared),
        "both_scored": len(pairs),
        "worse": sum(d < 0 for d in diffs),
        "better": sum(d > 0 for d in diffs),
        "same": sum(d == 0 for d in diffs),
    }
    if diffs:
        result.update(
            mean_a=mean([x for x, _ in pairs]),
            mean_b=mean([y for _, y in pairs]),
            mean_diff=mean(diffs),
            ci=bootstrap_ci(diffs, resamples=RESAMPLES, seed=SEED),
            p=sign_flip_test(diffs, resamples=RESAMPLES, seed=SEED),
            d=paired_effect_size(diffs),
            mdd=minimum_detectable_difference(diffs, alpha=alpha),
        )
    return result


def verdict_of(text: str) -> str:
    found = re.search(r"^verdict: (.+?) \(alpha", text, re.MULTILINE)
    return found.group(1) if found else "(no verdict line)"


def signed(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.2f}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")


def mdd_text(value: float | None) -> str:
    if value is None:
        return "n/a"
    return "none (too few pairs)" if value == math.inf else f"±{value:.3f}"


def row(label: str, f: dict[str, Any], verdict: str, code: int) -> str:
    if "mean_diff" in f:
        lo, hi = f["ci"]
        means = (
            f"{f['mean_a']:.3f} | {f['mean_b']:.3f} | {f['mean_diff']:+.3f} [{lo:+.3f}, {hi:+.3f}]"
        )
        tests = f"{f['p']:.4g} | {signed(f['d'])} | {mdd_text(f['mdd'])}"
    else:
        means, tests = "n/a | n/a | n/a", "n/a | n/a | n/a"
    return (
        f"| {label} | {f['paired']} | {f['only_a']} / {f['only_b']} | {means} | "
        f"{f['better']} / {f['worse']} / {f['same']} | {tests} | {verdict} | {code} |"
    )


HEADER = (
    "| comparison | pairs | only in A / B | mean A | mean B | B - A [95% CI] | better / worse "
    "/ same | permutation p | paired d | smallest detectable (80% power) | verdict | exit "
    "(--fail-if-worse) |\n|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=20, help=f"at most {len(TOPICS)}")
    parser.add_argument("--k-good", type=int, default=4, help="A: documents retrieved (4)")
    parser.add_argument("--k-bad", type=int, default=1, help="B, degraded: documents (1)")
    parser.add_argument(
        "--claim-mode",
        choices=["atomic", "sentences"],
        default="atomic",
        help="how `ragrecall claims` splits the references (atomic: the judge)",
    )
    parser.add_argument("--small", type=int, default=4, help="questions of the small comparison")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--workdir", type=Path, help="where the files go (default: a temp dir)")
    parser.add_argument("--summary", type=Path, help="JSON summary")
    args = parser.parse_args()
    if not 1 <= args.questions <= len(TOPICS):
        parser.error(f"--questions must be in [1, {len(TOPICS)}]")

    command = shlex.join(["python", *sys.argv])
    date = time.strftime("%Y-%m-%d %H:%M")
    load_start = os.getloadavg()
    print(f"command: {command}")
    print(
        f"commit {commit()}  date {date}  load average {load_start[0]:.2f} {load_start[1]:.2f} "
        f"{load_start[2]:.2f}"
    )
    work = args.workdir or Path(tempfile.mkdtemp(prefix="ragrecall-compare-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"workdir {work}")
    wall_start = time.perf_counter()

    store = build_store()
    data = {}
    for name, k in (("A", args.k_good), ("B", args.k_bad)):
        rows = dataset(store.as_retriever(search_kwargs={"k": k}), args.questions)
        data[name] = work / f"{name}.jsonl"
        write_rows(data[name], rows)
        shares = facts_found(rows)
        print(
            f"retriever {name} (k={k}): {args.questions} questions, reference facts among the "
            f"retrieved documents {sum(shares) / len(shares):.3f} on average, all found on "
            f"{sum(s == 1 for s in shares)}, at most one on {sum(s <= 1 / 3 for s in shares)}"
        )

    claims, results = work / "claims.jsonl", {n: work / f"r{n.lower()}.jsonl" for n in "AB"}
    for path in (claims, *results.values()):
        path.unlink(missing_ok=True)  # fresh runs: eval --out would resume from an old file
    steps: dict[str, dict[str, Any]] = {}
    code, _, seconds = ragrecall(
        [
            "claims",
            str(data["A"]),
            "--out",
            str(claims),
            "--claim-mode",
            args.claim_mode,
            "--claims-store",
            str(work / "claims.sqlite"),
        ]
    )
    steps["claims"] = {"exit": code, "seconds": seconds}
    for name in "AB":
        code, _, seconds = ragrecall(
            ["eval", str(data[name]), "--claims", str(claims), "--out", str(results[name])]
        )
        steps[f"eval {name}"] = {"exit": code, "seconds": seconds}

    small_ids = {sample_id(i) for i in range(min(args.small, args.questions))}
    small = {n: work / f"r{n.lower()}-first{args.small}.jsonl" for n in "AB"}
    for name in "AB":
        subset(results[name], small_ids, small[name])
    comparisons = []
    for label, files in (
        (f"{args.questions} questions", results),
        (f"first {len(small_ids)} questions", small),
    ):
        code, text, seconds = ragrecall(
            [
                "compare",
                str(files["A"]),
                str(files["B"]),
                "--fail-if-worse",
                "--alpha",
                str(args.alpha),
            ]
        )
        f = figures(scores(files["A"]), scores(files["B"]), args.alpha)
        comparisons.append(
            {"label": label, "exit": code, "verdict": verdict_of(text), "seconds": seconds, **f}
        )
    wall = time.perf_counter() - wall_start

    load_end = os.getloadavg()
    print(
        f"\nk={args.k_good} (A) against k={args.k_bad} (B), claims {args.claim_mode}, embedded "
        f"judge, alpha {args.alpha}; steps: "
        + ", ".join(f"{n} {s['seconds']:.0f} s (exit {s['exit']})" for n, s in steps.items())
    )
    print(HEADER)
    total = sum(s["seconds"] for s in steps.values())
    for c in comparisons:
        print(row(c["label"], c, c["verdict"], c["exit"]))
    print(
        f"\nwall {wall:.1f} s (claims and scoring {total:.1f} s); load average at the end "
        f"{load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f}"
    )
    write_json(
        args.summary,
        {
            "commit": commit(),
            "date": date,
            "command": command,
            "args": {k: str(v) for k, v in vars(args).items()},
            "workdir": str(work),
            "steps": steps,
            "comparisons": comparisons,
            "wall_s": wall,
            "load_avg_start": load_start,
            "load_avg_end": load_end,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
