"""The judge server's child process, run as a script so it skips importing ragrecall:

    python .../_child.py --model PATH --port N --slots N --context N --threads N --parent-pid N

The API key comes in $RAGRECALL_JUDGE_API_KEY, not in argv. Standard library and xllamacpp only.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from typing import Any

ENV_API_KEY = "RAGRECALL_JUDGE_API_KEY"
HOST = "127.0.0.1"


def start_llama(
    model: str, *, host: str, port: int, api_key: str, slots: int, context: int, threads: int
) -> Any:
    """Start llama.cpp's server in this process (background threads); keep the handle alive.
    ``context`` is per slot."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model
    params.hostnames = [host]
    params.port = port
    params.n_ctx = slots * context
    params.n_parallel = slots
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.api_keys = [api_key]
    params.warmup = False
    return xllamacpp.Server(params)


def watch_parent(parent_pid: int, interval: float = 1.0) -> None:
    """Exit this process once its parent is gone (polling sees the whole parent process,
    unlike PR_SET_PDEATHSIG, which fires when the spawning *thread* exits)."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(interval)
        os._exit(0)

    threading.Thread(target=watch, name="ragrecall-parent-watch", daemon=True).start()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="ragrecall-judge-child")
    for name in ("port", "slots", "context", "threads", "parent-pid"):
        parser.add_argument(f"--{name}", type=int, required=True)
    parser.add_argument("--model", required=True)
    args = parser.parse_args(argv)
    api_key = os.environ.pop(ENV_API_KEY, "")
    if not api_key:
        parser.error(f"${ENV_API_KEY} is not set")
    watch_parent(args.parent_pid)
    _handle = start_llama(
        args.model,
        host=HOST,
        port=args.port,
        api_key=api_key,
        slots=args.slots,
        context=args.context,
        threads=args.threads,
    )
    threading.Event().wait()  # serve until terminated, or until the parent is gone


if __name__ == "__main__":
    main()
