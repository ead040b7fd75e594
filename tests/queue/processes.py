"""What the queue's tests run in processes of their own (started with multiprocessing's
"spawn", which imports this small module rather than a test module)."""

from __future__ import annotations

import asyncio
from typing import Any

from tempest_typed import create_async_engine, create_engine
from tempest_typed.queue import AsyncQueue, Queue, message_model


def create_table_at_once(url: str, table: str, aio: bool, start: Any, out: Any) -> None:
    """In a process of its own: wait for the others, then create the queue's table."""
    try:
        if aio:
            async def create() -> None:
                engine = create_async_engine(url, pool_size=1)
                try:
                    queue = AsyncQueue(engine, "mail", model=message_model(table))
                    await queue._know_dialect()  # connected before the start, as the others
                    start.wait()
                    await queue.create_table()
                finally:
                    await engine.dispose()
            asyncio.run(create())
        else:
            engine = create_engine(url, pool_size=1)
            try:
                engine.execute_sql("SELECT 1")
                start.wait()
                Queue(engine, "mail", model=message_model(table)).create_table()
            finally:
                engine.close()
        out.put("ok")
    except Exception as exc:  # reported to the test, which shows it
        out.put(f"{type(exc).__name__}: {exc}")


def async_run_given_sigterm(url: str, table: str, out: Any) -> None:
    """In a process of its own: two AsyncQueue.run() tasks under asyncio.run(), whose first
    handler sends SIGTERM to the process and goes on for a moment; then what the runs
    returned together, and whether SIGTERM's handler before them is back."""
    import os
    import signal

    async def work() -> None:
        engine = create_async_engine(url, pool_size=2)
        try:
            queue = AsyncQueue(engine, "mail", model=message_model(table))
            idle = AsyncQueue(engine, "mail", model=message_model(table))

            async def handler(lease: Any) -> None:
                os.kill(os.getpid(), signal.SIGTERM)
                await asyncio.sleep(0.3)  # the message in hand is finished, not cut off

            runs = asyncio.gather(queue.run(handler, batch=5, poll_interval=0.1),
                                  idle.run(handler, batch=5, poll_interval=0.1))
            summaries = await asyncio.wait_for(runs, 30)
            out.put((sum(s.processed for s in summaries), sum(s.released for s in summaries),
                     signal.getsignal(signal.SIGTERM) is signal.SIG_DFL))
        finally:
            await engine.dispose()

    try:
        asyncio.run(work())
    except Exception as exc:  # reported to the test, which shows it
        out.put(f"{type(exc).__name__}: {exc}")
