"""``python -m phoenix_ragrecall scored.json [--base-url URL]``: post the scores of a
``ragrecall eval --from-traces ... --traces-out scored.json`` file to Phoenix as span
annotations."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from phoenix.client import Client

from ._annotations import log_traces_out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m phoenix_ragrecall",
        description="Post the scores of a ragrecall --traces-out file to Phoenix.",
    )
    parser.add_argument("traces_out", help="the file ragrecall eval --traces-out wrote")
    parser.add_argument(
        "--base-url",
        help="Phoenix's URL (default: $PHOENIX_COLLECTOR_ENDPOINT, else http://localhost:6006)",
    )
    args = parser.parse_args(argv)
    try:
        posted = log_traces_out(args.traces_out, Client(base_url=args.base_url))
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"{posted} span annotations posted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
