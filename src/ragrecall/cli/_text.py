"""What the commands print: dataset text without the characters that drive a terminal.

A question, claim or file name may carry escape sequences (clear the screen, set the window
title, OSC-8 links), carriage returns that overwrite a line, or bidirectional overrides that
reorder it. Every string a command prints passes through ``plain`` (``PlainConsole`` applies it
to every string it renders); rich's own styling is added after, so colours survive.
"""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console
from rich.text import Text

__all__ = ["PlainConsole", "plain"]

# C0 and C1 controls but tab and newline (ESC among them), DEL, and the bidi embeddings,
# overrides and isolates.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def plain(text: str) -> str:
    """``text`` without control characters (tab and newline kept)."""
    return _CONTROL.sub("", text)


class PlainConsole(Console):
    """A rich console that renders every string through ``plain``."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(plain(text), **kwargs)
