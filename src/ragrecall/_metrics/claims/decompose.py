"""Reference -> claims: by the judge (atomic), by rule (sentences), or as given."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable

from ragrecall._core.cache import claims_store_path
from ragrecall._core.errors import JudgeError
from ragrecall._core.schemas import ClaimSet, Usage
from ragrecall._judge.drive import Call, Steps, ask
from ragrecall._judge.structured import structured

from ..prompts import DECOMPOSE_PROMPT, PROMPT_VERSION, Claims
from ..text.language import in_english
from ..text.words import content_words, split_sentences
from .compound import split_compound
from .decontext import decontextualise
from .structure import split_structure

__all__ = [
    "CLAIM_RULES_VERSION",
    "ClaimCache",
    "ClaimMode",
    "claims_key",
    "clean_claims",
    "decompose",
    "decomposition_chain",
    "default_claim_cache",
    "metric_claim_cache",
    "needs_judge",
    "restore_dropped",
    "rule_claims",
    "translated",
]

ClaimMode = Literal["atomic", "sentences"]
# A reference's claims restate it: a reply past this is a judge that lost its way (the
# embedded judge once wrote 3,500 tokens for a one-sentence reference, until its context was
# full). A cut reply fails to parse: asked again once, then the reference's sentences are
# its claims, with a note that says why.
CLAIMS_REPLY_TOKENS = 1024
# What makes a clause a checkable fact: a name (a capital after its first word) or a number.
_MARKS = re.compile(r"(?<=\S )[A-Z][\w-]*|\w*\d[\w.,]*")


def decomposition_chain(
    judge: BaseChatModel, prompt: ChatPromptTemplate = DECOMPOSE_PROMPT
) -> Runnable[dict[str, Any], dict[str, Any]]:
    """LCEL: ``{"question", "reference"}`` -> ``{"raw", "parsed": Claims, "parsing_error"}``,
    the reply capped at CLAIMS_REPLY_TOKENS."""
    return prompt | structured(judge, Claims, max_tokens=CLAIMS_REPLY_TOKENS)


class ClaimCache:
    """Claims by (reference, question, judge id, prompt version): in memory, optionally on disk.

    ``path`` names a SQLite file shared across runs and processes.
    """

    def __init__(self, path: str | Path | None = None, max_items: int = 10_000):
        self._memory: OrderedDict[str, list[str]] = OrderedDict()
        self._max_items = max_items
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
            self._db.execute("CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, value TEXT)")
            self._db.commit()

    @staticmethod
    def key(*parts: str) -> str:
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()

    def get(self, key: str) -> list[str] | None:
        with self._lock:
            if key in self._memory:
                self._memory.move_to_end(key)
                return list(self._memory[key])
            if self._db is None:
                return None
            row = self._db.execute("SELECT value FROM claims WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        claims: list[str] = json.loads(row[0])
        self._remember(key, claims)
        return claims

    def put(self, key: str, claims: Sequence[str]) -> list[str]:
        """Keep ``claims`` for ``key`` unless some writer (another run, thread or process on
        the same file) kept claims for it first, and return the claims kept: the first writer
        wins and every other uses its claims, so two runs never hold two claim sets for one
        task (an atomic insert-or-ignore, read back in the same transaction)."""
        with self._lock:
            kept = self._memory.get(key)
            if self._db is not None:
                with self._db:  # one transaction: commit on success
                    self._db.execute(
                        "INSERT OR IGNORE INTO claims VALUES (?, ?)",
                        (key, json.dumps(list(claims))),
                    )
                    row = self._db.execute(
                        "SELECT value FROM claims WHERE key = ?", (key,)
                    ).fetchone()
                kept = json.loads(row[0])  # the file is the truth the runs share
        if kept is None:
            kept = list(claims)
        self._remember(key, list(kept))
        return list(kept)

    def _remember(self, key: str, claims: list[str]) -> None:
        with self._lock:
            self._memory[key] = claims
            self._memory.move_to_end(key)
            while len(self._memory) > self._max_items:
                self._memory.popitem(last=False)

    def close(self) -> None:
        """Close the SQLite file (the memory stays usable)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __len__(self) -> int:
        return len(self._memory)


_shared: dict[Path, ClaimCache] = {}
_shared_lock = threading.Lock()
_log = logging.getLogger("ragrecall")


def default_claim_cache() -> ClaimCache:
    """The claim store metrics share unless given their own: a SQLite file in the user cache
    (``$RAGRECALL_CLAIMS_STORE`` names another), so every run, process and integration on this
    machine scores a reference against the claims it was first decomposed into. A store that
    cannot be opened is replaced by one in memory, with a warning."""
    path = claims_store_path()
    with _shared_lock:
        if path not in _shared:
            try:
                _shared[path] = ClaimCache(path)
            except (OSError, sqlite3.Error) as err:
                _log.warning("ragrecall: claim store %s: %s; claims kept in memory", path, err)
                _shared[path] = ClaimCache()
        return _shared[path]


def metric_claim_cache(cache: ClaimCache | None, cache_path: str | Path | None) -> ClaimCache:
    """A metric's claim store: ``cache`` if given, else a new one in ``cache_path``, else the
    shared default (an empty ClaimCache is falsy: no ``or`` here)."""
    if cache is not None:
        return cache
    return ClaimCache(cache_path) if cache_path else default_claim_cache()


def clean_claims(claims: Sequence[Any]) -> list[str]:
    """Strip; drop non-string items, items with no letter or digit ("}" states nothing) and
    duplicates; keep order."""
    seen: dict[str, None] = {}
    for claim in claims:
        if isinstance(claim, str) and any(c.isalnum() for c in claim):
            seen.setdefault(claim.strip(), None)
    return list(seen)


def rule_claims(reference: str) -> list[str]:
    """Claims without a judge: the structure's statements, the prose by sentence."""
    units = split_structure(reference)
    return clean_claims(
        [s for u in units for s in ([u.text] if u.structured else split_sentences(u.text))]
    )


def needs_judge(reference: str) -> bool:
    """Whether atomic decomposition calls the judge: only for a reference with prose."""
    return any(not u.structured for u in split_structure(reference))


def decompose(
    reference: str,
    question: str | None,
    *,
    mode: ClaimMode,
    chain: Callable[[], Runnable[Any, Any]],
    judge_id: Callable[[], str],
    cache: ClaimCache,
    usage: Usage,
    decontext: Callable[[], Runnable[Any, Any]] | None = None,
) -> Steps[ClaimSet]:
    """Claims of ``reference``. Its structure is split first, without a judge: headings are
    dropped and each list item (its lead-in folded in), fenced command or block of code or
    configuration (fenced or not) is one claim. Prose is split by sentence (``sentences``
    mode) or by the judge (``atomic``: one call for all the prose of a reference, on a
    claim-store miss; a clause of it the judge's claims lost is added, ``restore_dropped``).
    With ``decontext``, the judge's claims are then made to stand alone
    (``decontext.decontextualise``: compound claims split, and a short call for each word of a
    claim that refers outside it). ``chain``, ``decontext`` and ``judge_id`` are asked for
    only then, so a judge is never built for claims that need none. A judge that gives no
    claims, or an invalid reply twice, leaves the reference's sentences as its claims, with a
    note that says why (not stored)."""
    units = split_structure(reference)
    prose = "\n\n".join(u.text for u in units if not u.structured)
    first_prose = next((i for i, u in enumerate(units) if not u.structured), len(units))
    given = [u.text for u in units if u.structured]
    if not prose or mode == "sentences":
        return ClaimSet(claims=rule_claims(reference), source="rules")
    key = claims_key(reference, question or "", judge_id())
    cached = cache.get(key)
    if cached is not None:
        return ClaimSet(claims=cached, source="store")
    call = Call(chain(), {"question": question or "", "reference": prose})
    try:
        reply = yield from ask(call, usage)
    except JudgeError as err:  # a reply cut at CLAIMS_REPLY_TOKENS, or no JSON at all
        return _sentences(given, prose, f"the judge's claims were invalid ({err})")
    assert isinstance(reply.parsed, Claims)
    judged = clean_claims(reply.parsed.claims)
    if judged:
        judged = restore_dropped(judged, prose)
    if judged and decontext is not None:
        judged = clean_claims((yield from decontextualise(judged, prose, decontext(), usage)))
    if not judged:
        return _sentences(given, prose, "the judge returned no claims")
    source, note = "judge", ""
    if translated(judged, prose):
        judged, source = split_sentences(prose), "rules"
        note = "the judge's claims were not in the reference's language; used its sentences"
    before = sum(u.structured for u in units[:first_prose])
    claims = clean_claims([*given[:before], *judged, *given[before:]])
    claims = cache.put(key, claims)  # another run's, when it kept this task's claims first
    return ClaimSet(claims=claims, source=source, note=note)


# The rules that shape a judge's claims before they are stored (restore_dropped, the
# decontext checks): claims stored under older rules are not reused. 2: a rewrite whose
# referent the claim already names is refused also when the name holds a possessive. 3: a
# claim with no letter or digit is dropped; claims in another language than the reference's
# give way to its sentences. 4: a block of code or configuration without a fence is one claim,
# kept whole, as a fenced one is.
CLAIM_RULES_VERSION = "4"


def claims_key(reference: str, question: str, judge_id: str) -> str:
    """Where the judge's claims of ``reference`` are stored: per question, judge, prompt
    version and the rules' version."""
    return ClaimCache.key(reference, question, judge_id, PROMPT_VERSION, CLAIM_RULES_VERSION)


def restore_dropped(claims: Sequence[str], prose: str) -> list[str]:
    """``claims`` and each clause of ``prose`` they lost: one with a name or a number that no
    claim holds, and at least half of its content words in none (the embedded judge kept
    "The city has 165 canals." and dropped ", and they were dug in the 17th century").
    A clause without a name or a number (filler: "Here is what you need to know.") stays out."""
    held = set().union(*(content_words(c) for c in claims))
    lost = []
    for sentence in split_sentences(prose):
        for clause in split_compound(sentence):
            words = content_words(clause)
            missing = words - held
            marks = content_words(" ".join(_MARKS.findall(clause)))
            if marks & missing and 2 * len(missing) >= len(words):
                lost.append(clause)
    return [*claims, *lost]


def translated(claims: Sequence[str], prose: str) -> bool:
    """The judge wrote ``claims`` in another language than ``prose``: the prose is not in
    English and a claim holds under half of its content words in it (the embedded judge
    writes English claims of a Japanese or Italian reference, which no passage in the
    reference's language then states word for word, and the rules cannot read against it)."""
    if in_english(prose):
        return False
    words = content_words(prose)
    return any(2 * len(own & words) < len(own) for own in map(content_words, claims))


def _sentences(given: list[str], prose: str, why: str) -> ClaimSet:
    """The claims when the judge gave none: the structure's and the prose's sentences."""
    claims = clean_claims([*given, *split_sentences(prose)])
    return ClaimSet(claims=claims, source="rules", note=f"{why}; used the reference's sentences")
