"""What the system tests share."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest


@pytest.fixture
def sigint_taken() -> Iterator[None]:
    """SIGINT taken, not ignored, while a test runs: a shell script's background job (this
    pytest, say) ignores it, and so would the CLI processes the test starts (ragrecall leaves
    an ignored signal ignored), where they must take Ctrl-C as a user's command does."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)
