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
