"""The embedded local judge: a pinned GGUF model served by llama.cpp in a child process."""

from ._chat import LocalJudge
from ._model import DEFAULT_MODEL, ModelInfo, ModelSpec, resolve_model
from ._server import shutdown_servers

__all__ = [
    "DEFAULT_MODEL",
    "LocalJudge",
    "ModelInfo",
    "ModelSpec",
    "resolve_model",
    "shutdown_servers",
]
