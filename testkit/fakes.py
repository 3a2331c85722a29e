"""The tests' scripted judges: the public ones of `ragrecall.testing` (``ScriptedJudge``,
``TextOnlyJudge``, ``keyword_reply``), and ones only these tests need: a judge that obeys an
injection, and one whose verdicts carry logprobs.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from ragrecall.testing import ScriptedJudge, TextOnlyJudge, keyword_reply, passages

__all__ = [
    "PATHS",
    "LogprobJudge",
    "ScriptedJudge",
    "TextOnlyJudge",
    "dying_judge",
    "keyword_and_relevance",
    "keyword_reply",
    "obedient",
    "obeying",
    "p_reply",
    "passages",
    "words",
]

_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def obeying(quote: str, passage: int = 2) -> ScriptedJudge:
    """A judge that says supported, cites ``passage`` and quotes ``quote``, whatever it reads
    (an attacked judge that obeys the injection)."""

    def reply(messages: Any) -> dict[str, Any]:
        verdict = {"supported": True, "passage": passage, "quote": quote}
        if "\n\nClaims:\n" in str(messages[-1].content):
            return {"verdicts": [{"claim": 1, **verdict}]}
        return verdict

    return ScriptedJudge(reply=reply)


_BLOCK = re.compile(r'<passage id="(\d+)">\n(.*?)\n</passage>', re.DOTALL)


# Every default path a verdict takes (the embedded judge's verdict token, a loopback server's
# JSON, a remote API's batch) and each evidence mode named explicitly.
PATHS: dict[str, dict[str, str]] = {
    "token": {"strategy": "per_claim", "evidence": "align", "verdict": "token"},
    "loopback": {"strategy": "per_claim", "evidence": "align", "verdict": "json"},
    "remote": {"strategy": "batched"},
    "align": {"strategy": "batched", "evidence": "align"},
    "quote": {"strategy": "per_claim", "evidence": "quote"},
}


def obedient(
    attacks: Sequence[str],
    passage: int | None = None,
    quote: str | None = None,
    cite: str = "own",
    token: bool = False,
    order_removed: str = "",
) -> ScriptedJudge:
    """The worst case of a prompt injection: a judge that obeys any attack it can see. While the
    text of one of ``attacks`` is in the prompt (shown as a passage, in any rendering that keeps
    its words), it says supported and cites ``passage``, or by ``cite``: the attack's own
    passage ("own"), or the first other passage ("other": the order sends it to an honest
    one); it quotes ``quote``, or by ``cite``: the claim itself ("own", as an order to "mark the
    claim supported" asks) or the cited passage's first sentence ("other": a real quote of
    honest text). With ``token`` it answers a verdict-token call (the reply's start given) with
    P(supported) 1. Without an attack in view it finds no support (P 0.04). An attack counts
    as in view while any sentence or line of it is (a redacted chunk keeps some), unless that
    sentence only states a claim the judge is asked about, or is kept in ``order_removed`` (the
    attack with its order taken out by hand: what it states is not an order)."""
    kept = _words(order_removed)
    pieces = [_mark(a) for a in attacks] + [
        _words(p) for a in attacks for p in _PIECE.split(a) if len(_words(p)) >= 12
    ]
    pieces = [p for p in pieces if not (kept and p in kept)]

    def reply(messages: Any) -> Any:
        prompt = next(str(m.content) for m in reversed(messages) if m.type == "human")
        batched = "\n\nClaims:\n" in prompt
        claims = (
            [c.split(". ", 1)[1] for c in prompt.split("\n\nClaims:\n", 1)[1].splitlines()]
            if batched
            else [prompt.rsplit("\n\nClaim: ", 1)[-1]]
        )
        stated = [_words(c) for c in claims]
        marks = [m for m in pieces if m and not any(m in c or c in m for c in stated)]
        blocks = {int(n): text for n, text in _BLOCK.findall(prompt)}
        seen = [n for n, text in blocks.items() if any(m in _words(text) for m in marks)]
        if messages[-1].type == "ai":  # a verdict token after the reply's given start
            return "true" if seen else "false"
        others = [n for n in blocks if n not in seen]
        cited = passage or (others[0] if cite == "other" and others else seen[0] if seen else 0)
        first = _PIECE.split(blocks.get(cited, ""), 1)[0]
        verdicts = [
            {
                "supported": True,
                "passage": cited,
                "quote": quote or (first if cite == "other" else claim),
            }
            if seen
            else {"supported": False, "passage": 0, "quote": ""}
            for claim in claims
        ]
        if batched:
            return {"verdicts": [{"claim": n, **v} for n, v in enumerate(verdicts, start=1)]}
        return verdicts[0]

    return _TokenObedient(reply=reply) if token else ScriptedJudge(reply=reply)


class _TokenObedient(ScriptedJudge):
    """``obedient`` for the verdict-token path: "true" or "false" with its logprobs."""

    def _message(self, out: Any) -> AIMessage:
        import math

        message = super()._message(out)
        if out in ("true", "false"):
            p = 1.0 - 1e-9 if out == "true" else 0.04
            alternatives = [
                {"token": "true", "logprob": math.log(p)},
                {"token": "false", "logprob": math.log(1 - p)},
            ]
            message.response_metadata = {
                "logprobs": {"content": [{**alternatives[0], "top_logprobs": alternatives}]}
            }
        return message


_PIECE = re.compile(r"(?<=[.!?])\s+|\n")


def _mark(text: str) -> str:
    """The words of ``text`` (from its middle): how the fake recognises an attack whatever
    rendering or marking the passage got."""
    found = _words(text)
    return found[len(found) // 4 : len(found) // 4 + 40]


def _words(text: str) -> str:
    """The letters and digits of ``text``, lower case, run together."""
    return "".join(re.findall(r"\w+", unicodedata.normalize("NFKC", text).lower()))


def p_reply(messages: Sequence[BaseMessage]) -> float:
    """The LogprobJudge's P(supported): an overconfident judge, for calibration tests. Every
    claim it is asked about reads "... <n>." with a number n; the words that are not numbers
    all occur in a passage or not; P grows with n % 10 (0.05 to 0.95)."""
    human = next(str(m.content) for m in messages if m.type == "human")
    claim = human.split("\n\nClaim: ", 1)[1]
    digits = re.findall(r"\d+", claim)
    n = int(digits[-1]) if digits else 0
    return 0.05 + 0.1 * (n % 10)


class LogprobJudge(ScriptedJudge):
    """A ScriptedJudge whose per-claim verdicts carry true/false logprobs (``p_reply``), as
    llama.cpp's do, so ContextRecall decides from P(supported) and the word check."""

    def _message(self, out: Any) -> AIMessage:
        import math

        message = super()._message(out)
        if isinstance(out, dict) and "supported" in out and self.calls:
            p = p_reply(self.calls[-1])
            alternatives = [
                {"token": "true", "logprob": math.log(p)},
                {"token": "false", "logprob": math.log(1 - p)},
            ]
            token = {**alternatives[0], "top_logprobs": alternatives}
            message.response_metadata = {"logprobs": {"content": [token]}}
        return message


def dying_judge() -> ScriptedJudge:
    """A judge that answers six calls, then is gone for good (its server died twice): a judge
    that fails mid-run, not one that cannot start."""
    from ragrecall import JudgeModelError

    answered = [0]

    def reply(messages: Sequence[BaseMessage]) -> Any:
        answered[0] += 1
        if answered[0] > 6:
            return JudgeModelError("the local judge server died again after a restart")
        return keyword_reply(messages)

    return ScriptedJudge(reply=reply)


def keyword_and_relevance(messages: Sequence[BaseMessage]) -> Any:
    """``keyword_reply``, and relevance too (context precision): a passage is relevant when
    the reference answer holds all its words."""
    human = next(str(m.content) for m in messages if m.type == "human")
    if "\nReference answer: " not in human:
        return keyword_reply(messages)
    reference = set(_WORD.findall(human.split("\nReference answer: ", 1)[1].split("\n\n")[0]))
    found = passages(messages)
    if not found:  # one passage a call
        passage = human.split("\n\nPassage:\n", 1)[1].rsplit("\n\n", 1)[0]
        return {"relevant": set(_WORD.findall(passage)) <= reference}
    return {
        "verdicts": [
            {"passage": n, "relevant": set(_WORD.findall(text)) <= reference}
            for n, text in found.items()
        ]
    }
