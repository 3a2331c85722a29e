"""``eval``'s engine flags: ``--engine`` and the settings each engine takes, turned into the
engine object ``evaluate`` takes. A flag the chosen engine does not take is refused (exit 2)
with a sentence naming the engine; ``--concurrency`` is the samples scored at once, on every
engine that takes it (Ray splits it among its workers). The engines are imported when built,
not when the flags are added."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from .._core.errors import SampleError

if TYPE_CHECKING:
    from .._judge.resolve import JudgeLike
    from .._running.engines.base import Engine

__all__ = ["add_engine_arguments", "build_engine", "judge_recipe"]

# flag -> (the engine option it sets, its checked minimum)
FLAGS: dict[str, tuple[str, float]] = {
    "--concurrency": ("concurrency", 1),
    "--poll": ("poll_interval", 0),
    "--workers": ("workers", 1),
    "--worker-cpus": ("num_cpus", 0),
    "--address": ("address", 0),
    "--rpm": ("rpm", 0),
    "--tpm": ("tpm", 0),
}


def add_engine_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--engine",
        choices=("local", "ray", "batch"),
        default="local",
        help="where to score: this process (local), a Ray cluster (ray; pip install "
        "'ragrecall[ray]'; --out is then a directory of Parquet parts), or the judge "
        "provider's Batch API (batch: half price, within a day; needs --out)",
    )
    p.add_argument(
        "--concurrency", type=int, default=None, help="local, ray: samples scored at once"
    )
    p.add_argument(
        "--poll",
        type=float,
        default=None,
        metavar="SECONDS",
        help="batch: seconds between batch status checks (30)",
    )
    p.add_argument("--address", default=None, help="ray: the cluster (default: start one)")
    p.add_argument("--workers", type=int, default=None, help="ray: scoring actors (2)")
    p.add_argument("--worker-cpus", type=float, default=None, help="ray: CPUs per worker (1)")
    p.add_argument("--rpm", type=float, default=None, help="ray: judge requests per minute")
    p.add_argument("--tpm", type=float, default=None, help="ray: judge tokens per minute")


def engine_class(name: str) -> Any:
    """The engine class ``--engine`` names (Ray's imported only when named)."""
    if name == "batch":
        from .._running.engines.batch.engine import BatchEngine

        return BatchEngine
    if name == "ray":
        from .._core.extras import requires

        try:
            with requires("--engine ray"):
                from ..ray import RayEngine
        except ImportError as err:
            raise SampleError(str(err)) from err
        # Ray prints its workers' lines with colour codes unless told not to (read at print
        # time, in this process); a user's own setting stands
        os.environ.setdefault("RAY_COLOR_PREFIX", "0")
        return RayEngine
    from .._running.engines.local import LocalEngine

    return LocalEngine


def build_engine(args: argparse.Namespace) -> Engine:
    """The engine of ``--engine`` with the settings its flags give; SampleError for a flag it
    does not take or a value below its minimum."""
    cls = engine_class(args.engine)
    options: dict[str, Any] = {}
    for flag, (option, least) in FLAGS.items():
        value = getattr(args, flag[2:].replace("-", "_"))
        if value is None:
            continue
        if option not in cls.options:
            takes = [f for f, (o, _) in FLAGS.items() if o in cls.options]
            raise SampleError(
                f"{flag} is not taken by the {cls.name} engine"
                + (f" (it takes {', '.join(takes)})" if takes else " (it takes no engine flag)")
            )
        if isinstance(value, int | float) and value < least:
            raise SampleError(f"{flag} must be at least {least:g}")
        options[option] = value
    engine: Engine = cls(**options)
    return engine


def judge_recipe(args: argparse.Namespace) -> JudgeLike:
    """The judge as every engine takes it in a metric spec: a string, or a picklable factory
    (so it travels to Ray workers too)."""
    from .._running.spec import factory, server

    if args.judge_factory:
        return factory(args.judge_factory)
    if args.judge_url:
        model = (args.judge or "").partition(":")[2] or args.judge
        return server(args.judge_url, model, args.judge_key_env)
    spec: str | None = args.judge
    return spec
