"""The embedded local judge: a pinned GGUF model served by llama.cpp in a child process.

``LocalJudge`` is a ``ChatOpenAI``: its module, and with it the OpenAI SDK, is imported when it
is first asked for (finding the model or serving it needs neither)."""

from typing import TYPE_CHECKING

from ..._core.lazy import lazy
from ._model import DEFAULT_MODEL, ModelInfo, ModelSpec, resolve_model
from ._server import shutdown_servers

if TYPE_CHECKING:
    from ._chat import LocalJudge

__getattr__, __dir__ = lazy(__name__, {"LocalJudge": "ragrecall._judge.local._chat"})

__all__ = [
    "DEFAULT_MODEL",
    "LocalJudge",
    "ModelInfo",
    "ModelSpec",
    "resolve_model",
    "shutdown_servers",
]
