"""Peak memory of reading 200,000 rows: `execute(...).all()` against `session.stream(...)`.

Each measurement runs in a process of its own, so one's peak does not hide another's: the
peak of Python's allocations while the rows are read (tracemalloc), and, in a second
process without tracemalloc, how far the resident set grew above what it was just before
the query (VmHWM minus VmRSS before). Rows are counted, not kept, in both modes: what
all() holds is its list. Databases: TEMPEST_PG_URL, TEMPEST_MYSQL_URL, and a SQLite file in
a temporary folder.

    .venv/bin/python bench/bench_stream.py [--rows 200000] [--only sqlite]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import tracemalloc
from typing import Any

from _common import status_kib

from tempest_typed import Model, column, create_async_engine, create_engine, insert, select

URLS = {
    "postgresql": os.environ.get("TEMPEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test"),
    "mysql": os.environ.get("TEMPEST_MYSQL_URL", "mysql://root@127.0.0.1:3306/test"),
}
MODES = ("all", "stream", "async all", "async stream")


class StreamRow(Model, table="bench_stream_rows"):
    """A row of a typical width: a key, a 40-character name, a number, a note."""

    id: int = column(primary_key=True)
    name: str = column(max_length=64)
    qty: int
    note: str | None = None


def _read(url: str, mode: str) -> int:
    query = select(StreamRow)
    if not mode.startswith("async"):
        with create_engine(url) as engine, engine.session() as s:
            if mode == "all":
                return sum(1 for _ in s.execute(query).all())
            return sum(1 for _ in s.stream(query))

    async def read() -> int:
        engine = create_async_engine(url)
        try:
            async with engine.session() as s:
                if mode == "async all":
                    return sum(1 for _ in (await s.execute(query)).all())
                n = 0
                async for _ in s.stream(query):
                    n += 1
                return n
        finally:
            await engine.dispose()

    return asyncio.run(read())


def child(url: str, mode: str, traced: bool) -> None:
    """Read the table once and print the peak (one JSON line)."""
    # Warm up imports and the driver's pool outside the measured part.
    with create_engine(url) as engine:
        engine.execute_sql("SELECT 1")
    before = status_kib("VmRSS")
    if traced:
        tracemalloc.start()
    n = _read(url, mode)
    out: dict[str, Any] = {"rows": n}
    if traced:
        out["traced_peak_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
    else:
        # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent across exec.
        out["rss_growth_mib"] = (status_kib("VmHWM") - before) / 1024
    print(json.dumps(out))


def fill(url: str, rows: int) -> None:
    with create_engine(url) as engine:
        engine.drop_all(StreamRow)
        engine.create_all(StreamRow)
        for first in range(0, rows, 5000):
            engine.execute(insert(StreamRow).values([
                {"id": i, "name": f"row {i:08} " + "x" * 28, "qty": i, "note": None if i % 3 else "n"}
                for i in range(first, min(rows, first + 5000))
            ]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=200_000)
    p.add_argument("--only", choices=["postgresql", "mysql", "sqlite"])
    p.add_argument("--child", nargs=3, metavar=("URL", "MODE", "TRACED"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.child[2] == "1")
        return
    with tempfile.TemporaryDirectory() as tmp:
        urls = {**URLS, "sqlite": f"sqlite:///{tmp}/stream.db"}
        print(f"{args.rows:,} rows of bench_stream_rows (4 columns), peak memory while read")
        print(f"{'database':11} {'mode':13} {'tracemalloc peak':>17} {'RSS growth':>11}")
        for name, url in urls.items():
            if args.only and name != args.only:
                continue
            fill(url, args.rows)
            try:
                for mode in MODES:
                    got = {}
                    for traced in ("1", "0"):
                        done = subprocess.run(
                            [sys.executable, __file__, "--child", url, mode, traced],
                            check=True, capture_output=True, text=True)
                        got.update(json.loads(done.stdout.strip().splitlines()[-1]))
                    assert got["rows"] == args.rows, got
                    print(f"{name:11} {mode:13} {got['traced_peak_mib']:13.1f} MiB "
                          f"{got['rss_growth_mib']:7.1f} MiB", flush=True)
            finally:
                with create_engine(url) as engine:
                    engine.drop_all(StreamRow)


if __name__ == "__main__":
    main()
