"""The handlers ``RecallCapture`` adds to a dispatcher: ``EventHandler`` passes each event to
the capture, ``SpanHandler`` tells it where each span opens and ends (it keeps no spans)."""

from __future__ import annotations

import inspect
import logging
from typing import Any

from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.span import BaseSpan
from llama_index.core.instrumentation.span_handlers import BaseSpanHandler
from pydantic import PrivateAttr

__all__ = ["EventHandler", "SpanHandler"]

log = logging.getLogger("ragrecall")


class EventHandler(BaseEventHandler):
    _capture: Any = PrivateAttr(None)

    @classmethod
    def class_name(cls) -> str:
        return "RagrecallEventHandler"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        try:
            self._capture._handle(event)
        except Exception:  # the dispatcher would swallow it silently; say so
            log.exception("ragrecall: failed to capture %s", event.class_name())


class SpanHandler(BaseSpanHandler[BaseSpan]):
    """Records each span's parent; keeps no spans of its own."""

    _capture: Any = PrivateAttr(None)

    @classmethod
    def class_name(cls) -> str:
        return "RagrecallSpanHandler"

    def new_span(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any | None = None,
        parent_span_id: str | None = None,
        tags: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> BaseSpan | None:
        self._capture._enter(id_, parent_span_id)
        return None

    def prepare_to_exit_span(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any | None = None,
        result: Any | None = None,
        **kwargs: Any,
    ) -> BaseSpan | None:
        self._capture._leave(id_, None)
        return None

    def prepare_to_drop_span(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any | None = None,
        err: BaseException | None = None,
        **kwargs: Any,
    ) -> BaseSpan | None:
        self._capture._leave(id_, err)
        return None
