"""What only the blocking queue does: its engine check, and its worker loop (`process()`,
`run()`) on threads (runner.py), stopped by stop(), SIGTERM or SIGINT.

`Queue` (queue.py, generated from aio.py) adds the operations, written once for both queues;
the asyncio queue's counterpart of this module is work_aio.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from ..engine import AsyncEngine, Engine
from ..errors import ValidationError
from .core import QueueCore
from .messages import Lease
from .options import MAX_CLAIM, count_option, flag_option, handler_option
from .runner import Runner
from .worker import Summary

__all__ = ["Work"]


class Work(QueueCore[Engine]):
    """The blocking queue's own part: the engine it takes, and the worker loop on threads."""

    # The acks and the next claim as two statements in psycopg's pipeline: the claim then
    # takes its snapshot after the acks ran. As one statement, its snapshot is older than
    # the acks, so it locks in passing the rows other workers leased meanwhile, whose acks
    # then wait: workload 5, 4 processes, b=100 0.79x -> 0.96x of pgbench, b=10 0.89x ->
    # 1.04x (BENCHMARKS.md, "Acks and the claim sent together").
    _sends_together: ClassVar[bool] = True

    def _check_engine(self, engine: object) -> None:
        if not isinstance(engine, Engine):
            raise ValidationError(
                f"Queue runs on an Engine from create_engine(), got {engine!r}"
                + ("; for an AsyncEngine use AsyncQueue" if isinstance(engine, AsyncEngine)
                   else ""))

    def process(self, handler: Callable[[Lease], object], limit: int = 10) -> Summary:
        """Claim one batch and run `handler` on each message, keeping the leases alive while
        it runs; ack what returned, nack what raised. What happened, as a Summary (false
        when nothing was due).

        A handler never starts on a lease near its end (it is released instead); acks are
        grouped and sent before any lease could end. See `run()` for the worker loop.
        """
        handler_option("process(handler)", handler, blocking=True)
        count_option("process(limit)", limit, maximum=MAX_CLAIM)
        return Runner(self, handler, batch=limit).one_batch()

    def run(self, handler: Callable[[Lease], object], *, batch: int = 10,
            poll_interval: float = 1.0, concurrency: int = 1, grace_seconds: float = 10.0,
            heartbeat_seconds: float | None = None, install_signal_handlers: bool = True,
            ) -> Summary:
        """Claim and handle messages until `stop()`, SIGTERM or SIGINT; the Summary.

        Handlers run on `concurrency` threads; leases are extended every `heartbeat_seconds`
        (a third of the lease by default) while they run, and while heartbeats fail no
        handler starts; a handler is told through `Lease.lost` when its lease is gone. A lost
        connection, a server restart or a pool with no connection free is waited out with
        backoff, never raised. On stop the worker claims nothing more, hands back the
        unstarted messages at once with no attempt charged (trying again until the database
        answers), lets running handlers finish for `grace_seconds`, then hands their
        messages back too. Signal handlers are installed only on the main thread, and
        restored on return.
        """
        handler_option("run(handler)", handler, blocking=True)
        options = self._run_options(batch, poll_interval, concurrency, grace_seconds,
                                    heartbeat_seconds, self.lease_seconds)
        flag_option("run(install_signal_handlers)", install_signal_handlers)
        runner = Runner(self, handler, batch=options.batch, concurrency=options.concurrency,
                        grace_seconds=options.grace_seconds,
                        heartbeat_seconds=options.heartbeat_seconds,
                        poll_interval=options.poll_interval,
                        install_signal_handlers=install_signal_handlers)
        return runner.run()
