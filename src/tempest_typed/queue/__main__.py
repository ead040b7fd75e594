"""`tempest-queue` (or `python -m tempest_typed.queue`): run a worker, or the queue's demo.

    tempest-queue work myapp.jobs:send_mail --url postgresql://app@db/app --consumer mailer
    tempest-queue demo --url postgresql://postgres@127.0.0.1:5432/test --workers 8

A bad URL, option or handler is one line on stderr and exit status 2; the demo exits 1 when a
message is unaccounted for.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, QueryExecutionError, ValidationError
from .demo import DemoConfig, run_demo

if TYPE_CHECKING:
    from .worker import Summary

__all__ = ["main"]

PROG = "tempest-queue"


class _Help(argparse.HelpFormatter):
    """Wider option columns, so that help text and defaults read on one line."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32, width=100)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, formatter_class=_Help,
                                     description="The tempest_typed durable queue.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{work,demo}")
    _work_parser(commands)
    _demo_parser(commands)
    return parser


def _work_parser(commands: Any) -> None:
    work = commands.add_parser(
        "work", formatter_class=_Help,
        help="run a worker: claim messages and hand each to your handler, until SIGTERM/SIGINT",
        description="Runs Queue.run(): claims batches, calls HANDLER(lease) for each message "
        "on --concurrency threads (an async def HANDLER runs on AsyncQueue.run as asyncio "
        "tasks, waiting on LISTEN on PostgreSQL), keeps the leases alive while handlers run, acks what "
        "returned and nacks what raised, reconnects after a lost connection. SIGTERM or "
        "SIGINT stops it cleanly: unstarted messages go back at once with no attempt "
        "charged, running handlers get --grace seconds. Prints the summary at the end.",
    )
    work.add_argument("handler", metavar="MODULE:HANDLER",
                      help="the handler to import, e.g. myapp.jobs:send_mail; it takes a Lease "
                      "(lease.payload, lease.id, lease.attempts) and raises to fail")
    work.add_argument("--url", default=os.environ.get("TEMPEST_QUEUE_URL"),
                      help="database URL, e.g. postgresql://app@db/app (default: the "
                      "TEMPEST_QUEUE_URL environment variable)")
    work.add_argument("--consumer", required=True,
                      help="the consumer whose messages to work (required)")
    work.add_argument("--table", default="tempest_queue",
                      help="the queue's table (default: %(default)s)")
    work.add_argument("--batch", type=int, default=10,
                      help="messages per claim (default: %(default)s)")
    work.add_argument("--concurrency", type=int, default=1,
                      help="handlers at once: threads, or tasks for an async handler "
                      "(default: %(default)s)")
    work.add_argument("--lease", type=float, default=30.0,
                      help="lease seconds; extended every third of it while a handler runs "
                      "(default: %(default)s)")
    work.add_argument("--grace", type=float, default=10.0,
                      help="seconds running handlers get to finish after SIGTERM/SIGINT; "
                      "then their messages go back (default: %(default)s)")
    work.add_argument("--poll-interval", type=float, default=1.0,
                      help="seconds between claims while the queue is empty "
                      "(default: %(default)s)")
    work.add_argument("--log-level", default="INFO",
                      choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                      help="what the worker logs on stderr (default: %(default)s)")


def _demo_parser(commands: Any) -> None:
    defaults = DemoConfig()
    demo = commands.add_parser(
        "demo", formatter_class=_Help,
        help="enqueue messages, deliver them with worker processes, account for each one",
        description="Creates the queue table (an embedded SQLite file unless --url; with "
        "--url the demo drops and creates its --table there), enqueues messages (some "
        "repeating an idempotency key), runs worker processes whose deliveries fail at "
        "--fail-rate, and prints what was delivered, deduplicated, retried, dead-lettered, "
        "lost (must be 0) and delivered twice. Exits 1 if a message is lost.",
    )
    demo.add_argument("--url", default=None,
                      help="database URL, e.g. postgresql://postgres@127.0.0.1:5432/test; the "
                      "demo drops and recreates --table there (default: a temporary SQLite "
                      "file)")
    demo.add_argument("--messages", type=int, default=defaults.messages,
                      help="messages to enqueue (default: %(default)s)")
    demo.add_argument("--workers", type=int, default=defaults.workers,
                      help="worker processes (default: %(default)s)")
    demo.add_argument("--fail-rate", type=float, default=defaults.fail_rate,
                      help="share of delivery attempts that fail (default: %(default)s)")
    demo.add_argument("--duplicates", type=float, default=defaults.duplicates,
                      help="share of enqueues repeating an earlier key (default: %(default)s)")
    demo.add_argument("--max-attempts", type=int, default=defaults.max_attempts,
                      help="attempts before a message is dead-lettered (default: %(default)s)")
    demo.add_argument("--lease-seconds", type=float, default=defaults.lease_seconds,
                      help="lease of each claim, in seconds (default: %(default)s)")
    demo.add_argument("--batch", type=int, default=defaults.batch,
                      help="messages per claim (default: %(default)s)")
    demo.add_argument("--delivery-ms", type=float, default=defaults.delivery_ms,
                      help="time one delivery takes, in ms (default: %(default)s)")
    demo.add_argument("--crash-rate", type=float, default=defaults.crash_rate,
                      help="chance per message that its worker kills itself (kill -9) after "
                      "the claim, mid-delivery or before the ack (default: %(default)s)")
    demo.add_argument("--table", default=defaults.table,
                      help="table name, dropped and created again (default: %(default)s)")
    demo.add_argument("--seed", type=int, default=None,
                      help="random seed, for a run that can be repeated (default: none, a "
                      "new run each time)")
    demo.add_argument("--engine", choices=["sync", "async"], default=defaults.engine,
                      help="the workers' queue: Queue on the blocking engine, or AsyncQueue "
                      "on the asyncio engine (default: %(default)s)")
    demo.add_argument("--quiet", action="store_true",
                      help="no progress lines (default: progress every 2 s)")


def _import_handler(spec: str) -> Callable[..., object]:
    """The callable that MODULE:HANDLER names, or ConfigurationError saying what is wrong."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigurationError(f"handler {spec!r} must be MODULE:HANDLER, e.g. myapp.jobs:send")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` does: the project's own modules
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(f"cannot import {module_name!r} for the handler: {exc}") from exc
    found: object = module
    for part in attr.split("."):
        try:
            found = getattr(found, part)
        except AttributeError as exc:
            raise ConfigurationError(f"{module_name} has no {attr!r} (handler {spec!r})") from exc
    if not callable(found):
        raise ConfigurationError(f"handler {spec!r} is not callable: {found!r}")
    return found


def _work(args: argparse.Namespace) -> int:
    from .options import is_async_handler

    if not args.url:
        raise ConfigurationError("no database: pass --url or set TEMPEST_QUEUE_URL")
    handler = _import_handler(args.handler)
    logging.basicConfig(level=args.log_level, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.log_level != "DEBUG":  # every statement is logged at INFO: only when asked
        logging.getLogger("tempest_typed.sql").setLevel(logging.WARNING)
    summary = _work_async(args, handler) if is_async_handler(handler) else _work_sync(args, handler)
    print("summary", flush=True)
    for name in ("processed", "retried", "dead_lettered", "leases_lost", "released",
                 "database_errors", "abandoned"):
        print(f"  {name.replace('_', ' '):<16}{getattr(summary, name):>8}", flush=True)
    return 0


def _work_sync(args: argparse.Namespace, handler: Callable[..., object]) -> Summary:
    from ..engine import create_engine
    from .model import message_model
    from .queue import Queue

    engine = create_engine(args.url, pool_size=2)
    try:
        queue = Queue(engine, args.consumer, model=message_model(args.table),
                      lease_seconds=args.lease)
        return queue.run(handler, batch=args.batch, concurrency=args.concurrency,
                         grace_seconds=args.grace, poll_interval=args.poll_interval)
    finally:
        engine.close()


def _work_async(args: argparse.Namespace, handler: Callable[..., object]) -> Summary:
    """An async handler: AsyncQueue.run on an asyncio engine; SIGTERM/SIGINT stop it."""
    from ..engine.aio import create_async_engine
    from .aio import AsyncQueue
    from .arunner import AsyncRunner
    from .model import message_model

    async def work() -> Summary:
        engine = create_async_engine(args.url, pool_size=2)
        try:
            queue = AsyncQueue(engine, args.consumer, model=message_model(args.table),
                               lease_seconds=args.lease)
            await queue._know_dialect()
            options = queue._run_options(args.batch, args.poll_interval, args.concurrency,
                                         args.grace, None, queue.lease_seconds)
            runner = AsyncRunner(queue, handler, batch=options.batch,
                                 concurrency=options.concurrency,
                                 grace_seconds=options.grace_seconds,
                                 poll_interval=options.poll_interval,
                                 listen=queue._dialect.supports_listen_notify)
            task = asyncio.ensure_future(runner.run())
            loop = asyncio.get_running_loop()
            signals = (signal.SIGTERM, signal.SIGINT)
            for sig in signals:  # the first stops cleanly, a second ends the grace period
                loop.add_signal_handler(sig, task.cancel)
            try:
                await task
            except asyncio.CancelledError:
                pass
            finally:
                for sig in signals:
                    loop.remove_signal_handler(sig)
            return runner.summary
        finally:
            await engine.dispose()

    return asyncio.run(work())


def _demo(args: argparse.Namespace) -> int:
    config = DemoConfig(
        url=args.url, messages=args.messages, workers=args.workers, fail_rate=args.fail_rate,
        duplicates=args.duplicates, max_attempts=args.max_attempts,
        lease_seconds=args.lease_seconds, batch=args.batch, delivery_ms=args.delivery_ms,
        crash_rate=args.crash_rate, table=args.table, seed=args.seed, progress=not args.quiet,
        engine=args.engine,
    )
    report = run_demo(config)
    return 1 if report.problems else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line: 0 on success, 1 when the demo lost a message, 2 on bad input."""
    args = _parser().parse_args(argv)
    try:
        return _work(args) if args.command == "work" else _demo(args)
    except (ConfigurationError, ValidationError) as exc:
        print(f"{PROG}: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    except QueryExecutionError as exc:  # the demo's database refused it, or is not there
        from .shell import error_line  # its hint names the fix (a missing table)

        print(f"{PROG}: error: {error_line(exc)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
