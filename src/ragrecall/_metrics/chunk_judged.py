"""Metrics that ask the judge one typed question about each retrieved chunk.

The question (and reference) come first and the chunk last, so the judge's prompt cache reuses
the prefix across chunks; for remote judges the chunks of one window go in a single batched
call, checked for one verdict per passage in order and falling back to per-chunk calls when it
is not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable
from pydantic import BaseModel

from .._core.errors import JudgeError
from .._core.schemas import (
    Chunk,
    Usage,
)
from .._judge.drive import Call, Steps, ask
from .._judge.resolve import JudgeLike, context_window, is_local
from .._judge.retry import DEFAULT_TIMEOUT
from .._judge.structured import structured
from .base import Metric, R
from .prompts import (
    PassageRenderer,
    render_passages,
)
from .text.windows import Window, estimate_tokens, pack

__all__ = ["ChunkJudgedMetric", "ChunkStrategy", "chunk_strategy"]

ChunkStrategy = Literal["per_chunk", "batched"]


def chunk_strategy(value: str) -> ChunkStrategy | Literal["auto"]:
    """``value`` checked as a per-chunk metric's strategy."""
    if value not in ("auto", "per_chunk", "batched"):
        raise ValueError(f"strategy must be 'auto', 'per_chunk' or 'batched', not {value!r}")
    return value  # type: ignore[return-value]


class ChunkJudgedMetric(Metric[R]):
    """A metric that asks the judge one typed question about each retrieved chunk.

    Subclasses set the four class attributes and call ``_judge_chunks``; prompts given to the
    constructor replace the defaults (same input variables, same reply schema).
    """

    reply_schema: ClassVar[type[BaseModel]]
    batched_schema: ClassVar[type[BaseModel]]
    default_prompt: ClassVar[ChatPromptTemplate]
    default_batched_prompt: ClassVar[ChatPromptTemplate]

    def __init__(
        self,
        judge: JudgeLike = None,
        *,
        strategy: ChunkStrategy | Literal["auto"] = "auto",
        prompt: ChatPromptTemplate | None = None,
        batched_prompt: ChatPromptTemplate | None = None,
        window_tokens: int | None = None,
        render_passages: PassageRenderer = render_passages,
        max_retries: int = 3,
        timeout: float = DEFAULT_TIMEOUT,
    ):
        super().__init__(judge, max_retries=max_retries, timeout=timeout)
        self._strategy = chunk_strategy(strategy)
        self.prompt = prompt or self.default_prompt
        self.batched_prompt = batched_prompt or self.default_batched_prompt
        self.window_tokens = window_tokens
        self.render_passages = render_passages
        self._chains: dict[str, Runnable[Any, Any]] = {}

    @property
    def strategy(self) -> ChunkStrategy:
        """``per_chunk`` for local judges (prompt cache), ``batched`` for remote APIs."""
        if self._strategy != "auto":
            return self._strategy

        return "per_chunk" if is_local(self.judge) else "batched"

    def _chain(self, kind: ChunkStrategy) -> Runnable[Any, Any]:
        if kind not in self._chains:
            if kind == "batched":
                chain = self.batched_prompt | structured(self.judge, self.batched_schema)
            else:
                chain = self.prompt | structured(self.judge, self.reply_schema)
            self._chains[kind] = chain
        return self._chains[kind]

    def _judge_chunks(
        self, chunks: Sequence[Chunk], inputs: Mapping[str, str], usage: Usage
    ) -> Steps[dict[int, list[Any]]]:
        """Replies by chunk number (1-based position in ``chunks``), one per part of the chunk
        (a chunk larger than the judge's window is judged in parts)."""
        fixed = estimate_tokens(" ".join(inputs.values()))
        windows = pack(chunks, (self.window_tokens or context_window(self.judge)) - fixed)
        replies: dict[int, list[Any]] = {}
        for window in windows:
            found: list[Any] | None = None
            if self.strategy == "batched":
                try:
                    found = yield from self._batched(window, inputs, usage)
                except JudgeError:
                    found = None
            if found is None:
                found = []
                for passage in window:
                    passage_text = self.render_passages([passage])
                    call = Call(self._chain("per_chunk"), {**inputs, "passage": passage_text})
                    reply = yield from ask(call, usage)
                    found.append(reply.parsed)
            for passage, parsed in zip(window, found, strict=True):
                replies.setdefault(passage.number, []).append(parsed)
        return replies

    def _batched(self, window: Window, inputs: Mapping[str, str], usage: Usage) -> Steps[list[Any]]:
        expected = [p.number for p in window]

        def check(parsed: Any) -> None:
            numbers = [v.passage for v in parsed.verdicts]
            if numbers != expected:
                raise JudgeError(
                    f"expected verdicts for passages {expected} in order, got passages {numbers}"
                )

        call = Call(self._chain("batched"), {**inputs, "passages": self.render_passages(window)})
        reply = yield from ask(call, usage, check)
        parsed: Any = reply.parsed
        return list(parsed.verdicts)
