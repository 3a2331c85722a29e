"""``ragrecall judge serve`` and ``ragrecall judge info``.

Each command sets ``func`` on the parsed namespace: ``args.func(args)`` returns the exit code.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import secrets
import sys
import threading
from pathlib import Path
from typing import Any

from .._core.errors import JudgeModelError
from ._exit import JUDGE_UNAVAILABLE, OK, USAGE_ERROR

__all__ = ["add_judge_commands"]


def add_judge_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``judge serve`` and ``judge info`` on a ``ragrecall`` parser."""
    judge = subparsers.add_parser("judge", help="the embedded local judge")
    commands = judge.add_subparsers(dest="judge_command", required=True)

    serve = commands.add_parser(
        "serve", help="run the judge in the foreground as an OpenAI-compatible server"
    )
    serve.add_argument("--model", metavar="PATH", help="a GGUF file (default: the pinned model)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--slots", type=int, default=2, help="requests served in parallel")
    serve.add_argument("--context", type=int, default=4096, help="context tokens per slot")
    serve.add_argument("--threads", type=int, help="CPU threads (default: all usable)")
    serve.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="take the API key from this environment variable (default: a random key, printed)",
    )
    serve.add_argument(
        "--api-key-file", metavar="PATH", help="take the API key from this file's first line"
    )
    serve.add_argument("--api-key", metavar="KEY", help=argparse.SUPPRESS)  # visible in ps
    serve.add_argument(
        "--allow-remote", action="store_true", help="allow a --host other than loopback"
    )
    serve.set_defaults(func=_serve)

    info = commands.add_parser("info", help="find (and if needed assemble) the judge model")
    info.add_argument("--model", metavar="PATH", help="a GGUF file (default: the pinned model)")
    info.add_argument("--json", action="store_true", help="print JSON")
    info.set_defaults(func=_info)


def _serve(args: argparse.Namespace) -> int:
    from .._judge.local._child import start_llama
    from .._judge.local._model import model_id, resolve_model
    from .._judge.local._server import START_TIMEOUT, default_threads, wait_healthy

    if not _is_loopback(args.host) and not args.allow_remote:
        print(f"error: refusing to serve on {args.host}; add --allow-remote", file=sys.stderr)
        return USAGE_ERROR
    try:
        model = resolve_model(args.model)
    except JudgeModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return JUDGE_UNAVAILABLE
    try:
        key = _api_key(args)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    try:
        _handle = start_llama(
            str(model.path),
            host=args.host,
            port=args.port,
            api_key=key,
            slots=args.slots,
            context=args.context,
            threads=args.threads or default_threads(),
        )
    except RuntimeError as exc:  # llama.cpp could not load the model or bind the port
        print(f"error: {exc} (is port {args.port} free?)", file=sys.stderr)
        return JUDGE_UNAVAILABLE
    probe = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    try:
        if not wait_healthy(probe, args.port, START_TIMEOUT, lambda: True):
            print(f"error: the judge did not get ready on port {args.port}", file=sys.stderr)
            return JUDGE_UNAVAILABLE
        host = f"[{args.host}]" if ":" in args.host else args.host
        print(f"Judge ready: {model_id(model.path)}")
        print(f"  base URL  http://{host}:{args.port}/v1")
        given = args.api_key_env or args.api_key_file
        print(f"  API key   {'as given (' + given + ')' if given else key}")
        print("Ctrl-C stops it.", flush=True)
        threading.Event().wait()
    except KeyboardInterrupt:
        print("Stopped.")
    return OK


def _api_key(args: argparse.Namespace) -> str:
    """The key from ``--api-key-env`` or ``--api-key-file`` (another user can read a key given
    in argv, so ``--api-key`` only warns and works), else a random one."""
    if args.api_key:
        print(
            "warning: --api-key shows the key to every local user; use --api-key-env",
            file=sys.stderr,
        )
        return str(args.api_key)
    if args.api_key_env:
        key = os.environ.get(args.api_key_env, "").strip()
        if not key:
            raise ValueError(f"--api-key-env: ${args.api_key_env} is not set")
        return key
    if args.api_key_file:
        lines = Path(args.api_key_file).read_text(encoding="utf-8").splitlines()
        key = lines[0].strip() if lines else ""
        if not key:
            raise ValueError(f"--api-key-file: {args.api_key_file} holds no key")
        return key
    return secrets.token_urlsafe(24)


def _info(args: argparse.Namespace) -> int:
    from .._judge.local._model import DEFAULT_MODEL, model_id, models_dir, resolve_model

    try:
        model = resolve_model(args.model)
    except JudgeModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return JUDGE_UNAVAILABLE
    data: dict[str, Any] = {
        "model": model_id(model.path),
        "path": str(model.path),
        "sha256": model.sha256,
        "size": model.size,
        "source": model.source,
        "verified": model.pinned,  # size and SHA-256 match the pinned model
        "license": DEFAULT_MODEL.license if model.pinned else None,
        "cache_dir": str(models_dir()),
    }
    if args.json:
        print(json.dumps(data, indent=2))
        return OK
    data["verified"] = (
        "yes: size and SHA-256 match the pinned model"
        if model.pinned
        else "no: not the pinned model, only its GGUF header was checked"
    )
    for name, value in data.items():
        print(f"{name:<9} {'-' if value is None else value}")
    return OK


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name
        return False
