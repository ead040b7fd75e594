"""What psycopg's pipeline costs the client: two statements in one round trip, against one
statement and against two in turn, on the blocking and the asyncio connection.

One connection (autocommit) runs N times: one `SELECT %s::int`; two of them in turn; two of
them in `conn.pipeline()` (one Sync). Printed: the client's CPU time and the wall time a
repetition. It is why `Queue.run` sends a batch's acks and next claim in the pipeline and
`AsyncQueue.run` as one statement (BENCHMARKS.md, "Acks and the claim sent together").

    .venv/bin/python bench/pipeline_cost.py [--repeat N]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable

import psycopg
from _common import PG_URL, machine

SQL = "SELECT %s::int"


def report(kind: str, name: str, n: int, began: tuple[float, float]) -> None:
    cpu, wall = time.process_time() - began[0], time.perf_counter() - began[1]
    print(f"  {kind:<8} {name:<22} CPU {1e6 * cpu / n:7.1f} us   wall {1e6 * wall / n:7.1f} us")


def now() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def blocking(n: int) -> None:
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        c1, c2 = conn.cursor(), conn.cursor()

        def one(i: int) -> None:
            c1.execute(SQL, (i,))
            c1.fetchall()

        def two(i: int) -> None:
            c1.execute(SQL, (i,))
            c2.execute(SQL, (i,))
            c2.fetchall()

        def pipelined(i: int) -> None:
            with conn.pipeline():
                c1.execute(SQL, (i,))
                c2.execute(SQL, (i,))
            c2.fetchall()

        sides: list[tuple[str, Callable[[int], None]]] = [
            ("one statement", one), ("two in turn", two), ("two in the pipeline", pipelined)]
        for name, side in sides:
            for i in range(n // 10):  # warm-up (and psycopg's prepared statements)
                side(i)
            began = now()
            for i in range(n):
                side(i)
            report("blocking", name, n, began)


async def asyncio_side(n: int) -> None:
    conn = await psycopg.AsyncConnection.connect(PG_URL, autocommit=True)
    c1, c2 = conn.cursor(), conn.cursor()

    async def one(i: int) -> None:
        await c1.execute(SQL, (i,))
        await c1.fetchall()

    async def two(i: int) -> None:
        await c1.execute(SQL, (i,))
        await c2.execute(SQL, (i,))
        await c2.fetchall()

    async def pipelined(i: int) -> None:
        async with conn.pipeline():
            await c1.execute(SQL, (i,))
            await c2.execute(SQL, (i,))
        await c2.fetchall()

    try:
        for name, side in [("one statement", one), ("two in turn", two),
                           ("two in the pipeline", pipelined)]:
            for i in range(n // 10):
                await side(i)
            began = now()
            for i in range(n):
                await side(i)
            report("asyncio", name, n, began)
    finally:
        await conn.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--repeat", type=int, default=5000)
    args = p.parse_args()
    print(f"psycopg {psycopg.__version__} ({psycopg.pq.__impl__}), a repetition ({machine()})")
    blocking(args.repeat)
    asyncio.run(asyncio_side(args.repeat))


if __name__ == "__main__":
    main()
