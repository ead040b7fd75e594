"""A program that ends (asyncio.run() returning) while its AsyncQueue.run task still runs,
without stopping it or disposing of its engine: asyncio.run() cancels the worker, which is a
clean stop, and the messages it held, started or not, are handed back uncharged before the
engine's pool closes. Run in a child process on PostgreSQL (LISTEN, the pool's own tasks)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tempest_typed import create_engine
from tempest_typed.queue import Queue, message_model

from .conftest import table_name

_PROGRAM = """
    import asyncio, sys
    from tempest_typed import create_async_engine
    from tempest_typed.queue import AsyncQueue, message_model

    async def handler(lease) -> None:
        await asyncio.sleep(60)

    async def main() -> None:
        engine = create_async_engine(sys.argv[1])
        queue = AsyncQueue(engine, "mail", model=message_model(sys.argv[2]))
        for i in range(6):
            await queue.enqueue({"i": i}, key=f"k{i}")
        asyncio.create_task(queue.run(handler, batch=3, grace_seconds=0.5))
        await asyncio.sleep(1.0)  # the worker claimed and its handlers run

    asyncio.run(main())
    print("ended")
"""


def test_a_worker_running_when_the_program_ends_hands_its_messages_back(pg_url: str) -> None:
    table = table_name("program_end")
    engine = create_engine(pg_url)
    queue = Queue(engine, "mail", model=message_model(table))
    queue.create_table()
    try:
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(_PROGRAM), pg_url, table],
                              capture_output=True, text=True, timeout=120, check=False,
                              cwd=Path(__file__).parents[2])
        assert done.returncode == 0, done.stderr
        assert done.stdout == "ended\n"
        rows = engine.execute_sql(
            f'SELECT status, attempts, count(*) FROM "{table}" GROUP BY 1, 2').all()
        assert [tuple(row) for row in rows] == [("queued", 0, 6)]
    finally:
        queue.drop_table()
        engine.dispose()
