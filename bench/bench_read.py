"""Reading a select whole: `execute(select(M)).all()` against the raw driver's `fetchall`.

Two measurements of the same 5-column table (int key, 40-character text, int, timestamptz,
bool), filled (COPY on PostgreSQL, multi-row inserts on MariaDB) and its statistics taken
(VACUUM ANALYZE, ANALYZE TABLE) before anything is timed, on PostgreSQL (psycopg) or, with
`--database mariadb`, on MariaDB (PyMySQL):

- **peak memory** of reading 200,000 rows and keeping them, each side in a process of its
  own (a warm-up query first, outside the measure): the peak of Python's allocations
  (tracemalloc) and, in a second process without tracemalloc, how far the resident set grew
  (VmHWM minus VmRSS before the query). Sides: the driver's `fetchall()` (tuples: the floor),
  the same with a hand-written split into a `slots=True` dataclass per row (what a typed
  program writes by hand), and tempest_typed's `all()` (model instances), of a model as
  declared by default and of the same model declared `slots=True`.
- **throughput** at 10,000 and 200,000 rows: the same four sides, one connection each,
  interleaved rounds after a warm-up round (bench/_common.py).

    .venv/bin/python bench/bench_read.py [--quick] [--rounds N] [--database mariadb]
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import tracemalloc
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pymysql
from _common import PG_URL, Measure, machine, parser, run_rounds, status_kib, throughput_table

from tempest_typed import Model, column, create_engine, insert, select

TABLE = "bench_read_rows"
SQL = f'SELECT "id", "name", "qty", "at", "flag" FROM "{TABLE}"'
MYSQL_URL = "mysql://root@127.0.0.1:3306/test"
#: the raw driver of each database, as the tables name its sides
DRIVER = {"postgresql": "psycopg", "mariadb": "PyMySQL"}


class ReadRow(Model, table=TABLE):
    """A row of a typical width."""

    id: int = column(primary_key=True)
    name: str
    qty: int
    at: datetime
    flag: bool


class SlotRow(Model, table=TABLE, slots=True):
    """The same row, its model declared `slots=True` (instances without a `__dict__`)."""

    id: int = column(primary_key=True)
    name: str
    qty: int
    at: datetime
    flag: bool


@dataclass(slots=True)
class HandRow:
    """What a program writes by hand to get a typed row out of a tuple."""

    id: int
    name: str
    qty: int
    at: datetime
    flag: bool


def _row(i: int) -> tuple[Any, ...]:
    return (i, f"row {i:08} " + "x" * 27, i * 3, datetime(2026, 1, 1, tzinfo=UTC)
            + timedelta(seconds=i), i % 2 == 0)


def fill(database: str, rows: int) -> None:
    """Create the table with `rows` rows, then take its statistics."""
    with create_engine(_url(database)) as engine:
        engine.drop_all(ReadRow)
        engine.create_all(ReadRow)
        if database == "mariadb":
            names = ("id", "name", "qty", "at", "flag")
            for start in range(0, rows, 10_000):
                engine.execute(insert(ReadRow).values(
                    [ReadRow(**dict(zip(names, _row(i), strict=True)))
                     for i in range(start, min(rows, start + 10_000))]))
            engine.execute_sql(f"ANALYZE TABLE `{TABLE}`")
            return
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        with conn.cursor().copy(f'COPY "{TABLE}" ("id", "name", "qty", "at", "flag") '
                                "FROM STDIN") as copy:
            for i in range(rows):
                copy.write_row(_row(i))
        conn.execute(f'VACUUM ANALYZE "{TABLE}"')


def drop(database: str) -> None:
    with create_engine(_url(database)) as engine:
        engine.drop_all(ReadRow)


def _url(database: str) -> str:
    return PG_URL if database == "postgresql" else MYSQL_URL


def _raw_reader(database: str, limit: int) -> tuple[Any, Any]:
    """A connection of the raw driver and its read of `limit` rows as tuples."""
    if database == "postgresql":
        sql = SQL + ' ORDER BY "id" LIMIT %s'
        conn = psycopg.connect(PG_URL, autocommit=True)
        return conn, lambda: conn.execute(sql, (limit,)).fetchall()
    mysql_sql = SQL.replace('"', "`") + " ORDER BY `id` LIMIT %s"
    my = pymysql.connect(host="127.0.0.1", port=3306, user="root", database="test",
                         autocommit=True)

    def read() -> Any:
        with my.cursor() as cur:
            cur.execute(mysql_sql, (limit,))
            return cur.fetchall()
    return my, read


def _one_row(conn: Any) -> None:
    if isinstance(conn, psycopg.Connection):
        conn.execute("SELECT 1").fetchall()
    else:
        with conn.cursor() as cur:
            cur.execute("SELECT 1")
            cur.fetchall()


def sides(database: str, limit: int) -> tuple[dict[str, Any], list[Any]]:
    """The four readers of `limit` rows, and what to close after."""
    query = select(ReadRow).order_by("id").limit(limit)
    slotted = select(SlotRow).order_by("id").limit(limit)
    raw, raw_read = _raw_reader(database, limit)
    split, split_read = _raw_reader(database, limit)
    engine = create_engine(_url(database), pool_size=1)
    session = engine.session()

    def read_split() -> list[HandRow]:
        return [HandRow(r[0], r[1], r[2], r[3], r[4]) for r in split_read()]

    def read_tempest() -> list[ReadRow]:
        return session.execute(query).all()

    def read_slotted() -> list[SlotRow]:
        return session.execute(slotted).all()

    driver = DRIVER[database]
    return ({f"{driver} fetchall": raw_read, f"{driver} + split": read_split,
             "tempest_typed all()": read_tempest, "all(), slots=True": read_slotted},
            [raw, split, session, engine])


def child(database: str, side: str, limit: int, traced: bool) -> None:
    """Read `limit` rows once on `side`, keep them, print the peak (one JSON line)."""
    readers, closers = sides(database, limit)
    read = readers[side]
    read()  # warm-up: the connection, the statement's compilation, the imports
    for conn in closers[:2]:
        # a statement of one row on each raw connection: PyMySQL's keeps its last result
        # (the warm-up's rows) until its next statement, which would free them during the
        # measured read and hide that read's growth
        _one_row(conn)
    gc.collect()
    before = status_kib("VmRSS")
    if traced:
        tracemalloc.start()
    kept = read()
    out: dict[str, Any] = {"rows": len(kept)}
    if traced:
        out["traced_peak_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
    else:
        out["rss_growth_mib"] = (status_kib("VmHWM") - before) / 1024
    print(json.dumps(out))
    for c in closers:
        c.close()


def memory(database: str, limit: int) -> str:
    driver = DRIVER[database]
    lines = [f"Peak memory of reading {limit:,} rows and keeping them, {database} "
             f"({machine()})", "",
             f"{'side':22} {'tracemalloc peak':>17} {'ratio':>7} {'RSS growth':>11} {'ratio':>7}"]
    got: dict[str, dict[str, Any]] = {}
    for side in (f"{driver} fetchall", f"{driver} + split", "tempest_typed all()",
                 "all(), slots=True"):
        got[side] = {}
        for traced in ("1", "0"):
            done = subprocess.run([sys.executable, __file__, "--child", database, side,
                                   str(limit), traced],
                                  check=True, capture_output=True, text=True)
            got[side].update(json.loads(done.stdout.strip().splitlines()[-1]))
        assert got[side]["rows"] == limit, got
    base = got[f"{driver} fetchall"]
    for side, m in got.items():
        lines.append(f"{side:22} {m['traced_peak_mib']:13.1f} MiB "
                     f"{m['traced_peak_mib'] / base['traced_peak_mib']:6.2f}x "
                     f"{m['rss_growth_mib']:7.1f} MiB {m['rss_growth_mib'] / base['rss_growth_mib']:6.2f}x")
    lines.append("")
    lines.append(f"ratio = this side's peak / {driver} fetchall's (lower is leaner)")
    return "\n".join(lines)


def _timed_whole(read: Any) -> Any:
    """The reader, returning None: run_rounds times the whole call (the rows kept until the
    call returns, then let go)."""
    def run() -> None:
        read()
    return run


def throughput(database: str, limits: list[int], rounds: int) -> str:
    groups = []
    for limit in limits:
        readers, closers = sides(database, limit)
        measures = [(Measure(name, limit, "rows"), fn) for name, fn in readers.items()]
        run_rounds([(m, _timed_whole(fn)) for m, fn in measures], rounds)
        groups.append((f"{limit:,} rows", [m for m, _ in measures],
                       f"{DRIVER[database]} fetchall"))
        for c in closers:
            c.close()
    return throughput_table(f"Reading a select whole, {database} ({machine()}; {rounds} rounds "
                            "per side, interleaved, medians)", groups)


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--database", choices=sorted(DRIVER), default="postgresql")
    p.add_argument("--child", nargs=4, help="(internal) one measured read")
    args = p.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]), args.child[3] == "1")
        return
    big = 50_000 if args.quick else 200_000
    rounds = args.rounds or (3 if args.quick else 9)
    fill(args.database, big)
    try:
        print(memory(args.database, big), flush=True)
        print()
        print(throughput(args.database, [10_000, big], rounds))
    finally:
        drop(args.database)


if __name__ == "__main__":
    main()
