"""The one judge budget every engine spends against: calls and tokens a run may spend.

Work is reserved before it starts (a sample's estimate, locally and on Ray; a batch's requests
in batch mode) and settled when it ends. Work starts only while its reservation fits beside
what is spent and what is held; once one does not, nothing more starts (``spent``). So a run
goes past its budget by at most what the work in flight spends beyond its reservation
(``over``).

This module imports nothing from ragrecall: the Ray gate holds a ``Budget`` in an actor whose
process imports Ray only (the class travels by value).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Budget"]


@dataclass
class Budget:
    """``max_calls`` / ``max_tokens``: None for no limit. ``calls`` and ``tokens``: spent;
    ``held_calls`` and ``held_tokens``: reserved by the work in flight."""

    max_calls: int | None = None
    max_tokens: int | None = None
    calls: int = 0
    tokens: int = 0
    held_calls: int = 0
    held_tokens: int = 0
    spent: bool = False

    @property
    def limited(self) -> bool:
        """Whether any limit is set (without one, nothing needs reserving)."""
        return self.max_calls is not None or self.max_tokens is not None

    def reserve(self, calls: int, tokens: int = 0) -> bool:
        """Hold ``calls`` and ``tokens`` for work about to start; False (and nothing more
        starts) once they do not fit."""
        if self.spent:
            return False
        over_calls = (
            self.max_calls is not None and self.calls + self.held_calls + calls > self.max_calls
        )
        over_tokens = (
            self.max_tokens is not None
            and self.tokens + self.held_tokens + tokens > self.max_tokens
        )
        if over_calls or over_tokens:
            self.spent = True
            return False
        self.held_calls += calls
        self.held_tokens += tokens
        return True

    def settle(self, held: tuple[int, int], calls: int, tokens: int) -> None:
        """Work finished: its reservation ``held`` (calls, tokens) gives way to what it spent."""
        self.held_calls -= held[0]
        self.held_tokens -= held[1]
        self.calls += calls
        self.tokens += tokens
        self._check()

    def account(self, calls: int, tokens: int, held_calls: int = 0, held_tokens: int = 0) -> None:
        """Totals counted elsewhere (the batch journal): spent, and held by work in flight."""
        self.calls, self.tokens = calls, tokens
        self.held_calls, self.held_tokens = held_calls, held_tokens
        self._check()

    def over(self) -> str:
        """How far the run went past its budget ("" if it did not)."""
        parts = []
        if self.max_calls is not None and self.calls > self.max_calls:
            parts.append(f"{self.calls - self.max_calls} calls")
        if self.max_tokens is not None and self.tokens > self.max_tokens:
            parts.append(f"{self.tokens - self.max_tokens} tokens")
        return " and ".join(parts)

    def _check(self) -> None:
        if (self.max_calls is not None and self.calls >= self.max_calls) or (
            self.max_tokens is not None and self.tokens >= self.max_tokens
        ):
            self.spent = True
