"""The judge: any LangChain chat model, a ``"provider:model"`` string, a factory, or None for
the embedded local judge (``JudgeLike``, what every metric, ``MetricSpec`` and engine takes);
the embedded judge itself (``LocalJudge``, loaded on first use); typed replies from any chat
model (``structured``) and the chains the metrics ask (``attribution_chain``,
``decomposition_chain``); the retry and deadline ``Policy`` of judge calls.
"""

import typing as _typing

from ._core.lazy import lazy as _lazy

# Each public name and the module it lives in, imported on first use.
_EXPORTS: dict[str, str] = {
    "JudgeLike": "ragrecall._judge.resolve",
    "resolve_judge": "ragrecall._judge.resolve",
    "Policy": "ragrecall._judge.retry",
    "structured": "ragrecall._judge.structured",
    "DEFAULT_MODEL": "ragrecall._judge.local",
    "LocalJudge": "ragrecall._judge.local",
    "ModelInfo": "ragrecall._judge.local",
    "resolve_model": "ragrecall._judge.local",
    "attribution_chain": "ragrecall._metrics.verdicts.attribution",
    "decomposition_chain": "ragrecall._metrics.claims.decompose",
}


__getattr__, __dir__ = _lazy(__name__, _EXPORTS)


if _typing.TYPE_CHECKING:
    from ._judge.local import DEFAULT_MODEL, LocalJudge, ModelInfo, resolve_model
    from ._judge.resolve import JudgeLike, resolve_judge
    from ._judge.retry import Policy
    from ._judge.structured import structured
    from ._metrics.claims.decompose import decomposition_chain
    from ._metrics.verdicts.attribution import attribution_chain

__all__ = [
    "DEFAULT_MODEL",
    "JudgeLike",
    "LocalJudge",
    "ModelInfo",
    "Policy",
    "attribution_chain",
    "decomposition_chain",
    "resolve_judge",
    "resolve_model",
    "structured",
]
