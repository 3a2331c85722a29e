"""A local Ray cluster of the test's own (2 CPUs), with ``src/`` and ``testkit/`` on its
workers' path and the session's claim store."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def local_cluster(**env: str) -> Iterator[None]:
    """``ray.init`` of a cluster of its own (never one a `ray start` left behind), shut down
    after; ``env`` adds environment variables for the workers."""
    import ray

    paths = [str(ROOT / "src"), str(ROOT / "testkit"), os.environ.get("PYTHONPATH", "")]
    env_vars = {
        "PYTHONPATH": os.pathsep.join(p for p in paths if p),
        "RAGRECALL_CLAIMS_STORE": os.environ["RAGRECALL_CLAIMS_STORE"],
        **env,
    }
    ray.init(
        address="local",
        num_cpus=2,
        object_store_memory=200 * 1024**2,
        include_dashboard=False,
        runtime_env={"env_vars": env_vars},
        log_to_driver=False,
    )
    ray.data.DataContext.get_current().enable_progress_bars = False
    try:
        yield
    finally:
        ray.shutdown()
