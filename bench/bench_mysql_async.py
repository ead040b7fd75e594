"""aiomysql against asyncmy: the choice of the async engine's MySQL/MariaDB driver.

Times, on TEMPEST_MYSQL_URL, 2,000 one-row selects and 5 fetches of a 20,000-row result on
one connection, wall time, median of 3. Run: `.venv/bin/python bench/bench_mysql_async.py`.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import statistics
import time
from typing import Any
from urllib.parse import urlsplit

URL = urlsplit(os.environ.get("TEMPEST_MYSQL_URL", "mysql://root@127.0.0.1:3306/test"))
ARGS = {"host": URL.hostname or "127.0.0.1", "port": URL.port or 3306,
        "user": URL.username or "root", "password": URL.password or "",
        "db": URL.path.lstrip("/"), "autocommit": True}
ROWS = "SELECT seq, CONCAT('row ', seq), seq * 1.5 FROM seq_1_to_20000"


async def run(connect: Any) -> tuple[float, float]:
    conn = await connect(**ARGS)
    try:
        cur = conn.cursor()
        if inspect.isawaitable(cur):  # aiomysql's cursor() is awaited, asyncmy's is not
            cur = await cur
        started = time.perf_counter()
        for i in range(2000):
            await cur.execute("SELECT %s", (i,))
            await cur.fetchall()
        small = time.perf_counter() - started
        started = time.perf_counter()
        for _ in range(5):
            await cur.execute(ROWS)
            await cur.fetchall()
        large = time.perf_counter() - started
        closed = cur.close()
        if inspect.isawaitable(closed):
            await closed
    finally:
        conn.close()
    return small, large


def main() -> None:
    import aiomysql
    import asyncmy

    for name, connect in (("aiomysql", aiomysql.connect), ("asyncmy", asyncmy.connect)):
        runs = [asyncio.run(run(connect)) for _ in range(3)]
        small = statistics.median(r[0] for r in runs)
        large = statistics.median(r[1] for r in runs)
        print(f"{name:9} 2,000 one-row selects {small * 1000:7.0f} ms   "
              f"5 x 20,000-row fetch {large * 1000:7.0f} ms")


if __name__ == "__main__":
    main()
