"""What only the asyncio queue does: its engine check, learning MySQL from MariaDB on
connecting, and its worker loop (`process()`, `run()`) on asyncio tasks (arunner.py).

`AsyncQueue` (aio.py) adds the operations, written once for both queues; the blocking
queue's counterpart of this module is work.py.
"""

from __future__ import annotations

from typing import ClassVar

from ..engine.aio import AsyncEngine
from ..errors import ValidationError
from .arunner import AsyncHandler, AsyncRunner
from .core import QueueCore
from .options import MAX_CLAIM, count_option, flag_option, handler_option
from .worker import Summary

__all__ = ["AsyncWork"]


class AsyncWork(QueueCore[AsyncEngine]):
    """The asyncio queue's own part: the engine it takes, and the worker loop on tasks."""

    # One statement: psycopg's asyncio pipeline costs the client as much as two statements
    # (204 against 101 us of CPU a round trip, bench/pipeline_cost.py), and the tasks of one
    # loop share one core: workload 7, AsyncQueue.run x4 0.80x of the raw async driver in
    # the pipeline, 0.89x as one statement (BENCHMARKS.md, "Acks and the claim sent
    # together").
    _sends_together: ClassVar[bool] = False

    def _check_engine(self, engine: object) -> None:
        if not isinstance(engine, AsyncEngine):
            raise ValidationError(
                f"AsyncQueue runs on an AsyncEngine from create_async_engine(), got "
                f"{engine!r}; for an Engine use Queue")

    async def _know_dialect(self) -> None:
        """Learn MySQL from MariaDB by connecting, before building the first statement."""
        if self._known_dialect is None:
            await self.engine.execute_sql("SELECT 1")
            self._known_dialect = self.engine.dialect

    async def process(self, handler: AsyncHandler, limit: int = 10) -> Summary:
        """Claim one batch and await `handler` on each message, keeping the leases alive;
        ack what returned, nack what raised; the Summary (false when nothing was due)."""
        handler_option("process(handler)", handler)
        count_option("process(limit)", limit, maximum=MAX_CLAIM)
        await self._know_dialect()
        return await AsyncRunner(self, handler, batch=limit).one_batch()

    async def run(self, handler: AsyncHandler, *, batch: int = 10, poll_interval: float = 1.0,
                  concurrency: int = 1, grace_seconds: float = 10.0,
                  heartbeat_seconds: float | None = None, listen: bool = True,
                  install_signal_handlers: bool = True) -> Summary:
        """Claim and handle messages until `stop()` or the task is cancelled; the Summary.

        Up to `concurrency` handlers run at once as tasks of this event loop (a plain
        function runs on a daemon thread); leases are extended while they run, an async
        handler whose lease is lost is cancelled, database and pool errors are waited out
        with backoff, and a stop hands back unstarted messages at once and gives running
        handlers `grace_seconds` (as Queue.run). Cancelling the task stops the same
        way, then raises CancelledError; a second cancel ends the grace period. SIGTERM and
        SIGINT stop it as stop() does, where the event loop runs on the main thread and the
        signal has no handler of its own yet (asyncio.run() handles SIGINT: a cancel). While the
        queue is empty it waits on LISTEN on PostgreSQL (woken within milliseconds by an
        enqueue; `listen=False` polls), and polls every `poll_interval` seconds elsewhere.
        """
        handler_option("run(handler)", handler)
        options = self._run_options(batch, poll_interval, concurrency, grace_seconds,
                                    heartbeat_seconds, self.lease_seconds)
        flag_option("run(listen)", listen)
        flag_option("run(install_signal_handlers)", install_signal_handlers)
        await self._know_dialect()
        runner = AsyncRunner(self, handler, batch=options.batch,
                             concurrency=options.concurrency,
                             grace_seconds=options.grace_seconds,
                             heartbeat_seconds=options.heartbeat_seconds,
                             poll_interval=options.poll_interval,
                             listen=listen and self._dialect.supports_listen_notify,
                             install_signal_handlers=install_signal_handlers)
        return await runner.run()
