"""`python -m tempest_typed.queue demo` (or `tempest-queue demo`): the durable queue's main job."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .demo import DemoConfig, run_demo

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    defaults = DemoConfig()
    parser = argparse.ArgumentParser(prog="python -m tempest_typed.queue",
                                     description="The tempest_typed durable queue.")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo",
        help="enqueue messages, deliver them with worker processes, account for each one",
        description="Creates the queue table (an embedded SQLite file unless --url), enqueues "
        "messages (some repeating an idempotency key), runs worker processes whose deliveries "
        "fail at --fail-rate, and prints what was delivered, deduplicated, retried, "
        "dead-lettered, lost (must be 0) and delivered twice. Exits 1 if a message is lost.",
    )
    demo.add_argument("--url", default=None,
                      help="database URL, e.g. postgresql://postgres@127.0.0.1:5432/test "
                      "(default: a temporary SQLite file)")
    demo.add_argument("--messages", type=int, default=defaults.messages)
    demo.add_argument("--workers", type=int, default=defaults.workers)
    demo.add_argument("--fail-rate", type=float, default=defaults.fail_rate,
                      help="share of delivery attempts that fail (default %(default)s)")
    demo.add_argument("--duplicates", type=float, default=defaults.duplicates,
                      help="share of enqueues repeating an earlier key (default %(default)s)")
    demo.add_argument("--max-attempts", type=int, default=defaults.max_attempts)
    demo.add_argument("--lease-seconds", type=float, default=defaults.lease_seconds)
    demo.add_argument("--batch", type=int, default=defaults.batch,
                      help="messages per claim (default %(default)s)")
    demo.add_argument("--delivery-ms", type=float, default=defaults.delivery_ms,
                      help="time one delivery takes (default %(default)s)")
    demo.add_argument("--crash-rate", type=float, default=defaults.crash_rate,
                      help="chance per message that its worker kills itself (kill -9) after "
                      "the claim, mid-delivery or before the ack (default %(default)s)")
    demo.add_argument("--table", default=defaults.table,
                      help="table name (dropped and created again; default %(default)s)")
    demo.add_argument("--seed", type=int, default=None)
    demo.add_argument("--quiet", action="store_true", help="no progress lines")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; the exit status is 1 when the demo lost a message."""
    args = _parser().parse_args(argv)
    config = DemoConfig(
        url=args.url, messages=args.messages, workers=args.workers, fail_rate=args.fail_rate,
        duplicates=args.duplicates, max_attempts=args.max_attempts,
        lease_seconds=args.lease_seconds, batch=args.batch, delivery_ms=args.delivery_ms,
        crash_rate=args.crash_rate, table=args.table, seed=args.seed, progress=not args.quiet,
    )
    report = run_demo(config)
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
