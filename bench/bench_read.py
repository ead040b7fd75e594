"""Reading a select whole, PostgreSQL: `execute(select(M)).all()` against psycopg's `fetchall`.

Two measurements of the same 5-column table (int key, 40-character text, int, timestamptz,
bool), filled by COPY and VACUUM ANALYZEd before anything is timed:

- **peak memory** of reading 200,000 rows and keeping them, each side in a process of its
  own (a warm-up query first, outside the measure): the peak of Python's allocations
  (tracemalloc) and, in a second process without tracemalloc, how far the resident set grew
  (VmHWM minus VmRSS before the query). Sides: psycopg's `fetchall()` (tuples: the floor),
  the same with a hand-written split into a `slots=True` dataclass per row (what a typed
  program writes by hand), and tempest_typed's `all()` (model instances), of a model as
  declared by default and of the same model declared `slots=True`.
- **throughput** at 10,000 and 200,000 rows: the same four sides, one connection each,
  interleaved rounds after a warm-up round (bench/_common.py).

    .venv/bin/python bench/bench_read.py [--quick] [--rounds N]
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
from _common import PG_URL, Measure, machine, parser, run_rounds, status_kib, throughput_table

from tempest_typed import Model, column, create_engine, select

TABLE = "bench_read_rows"
SQL = f'SELECT "id", "name", "qty", "at", "flag" FROM "{TABLE}"'


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


def fill(rows: int) -> None:
    """Create the table with `rows` rows (COPY), then VACUUM ANALYZE it."""
    with create_engine(PG_URL) as engine:
        engine.drop_all(ReadRow)
        engine.create_all(ReadRow)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        with conn.cursor().copy(f'COPY "{TABLE}" ("id", "name", "qty", "at", "flag") '
                                "FROM STDIN") as copy:
            for i in range(rows):
                copy.write_row((i, f"row {i:08} " + "x" * 27, i * 3, t0 + timedelta(seconds=i),
                                i % 2 == 0))
        conn.execute(f'VACUUM ANALYZE "{TABLE}"')


def drop() -> None:
    with create_engine(PG_URL) as engine:
        engine.drop_all(ReadRow)


def sides(limit: int) -> tuple[dict[str, Any], list[Any]]:
    """The four readers of `limit` rows, and what to close after."""
    query = select(ReadRow).order_by("id").limit(limit)
    slotted = select(SlotRow).order_by("id").limit(limit)
    sql = SQL + ' ORDER BY "id" LIMIT %s'
    raw = psycopg.connect(PG_URL, autocommit=True)
    split = psycopg.connect(PG_URL, autocommit=True)
    engine = create_engine(PG_URL, pool_size=1)
    session = engine.session()

    def read_raw() -> list[Any]:
        return raw.execute(sql, (limit,)).fetchall()

    def read_split() -> list[HandRow]:
        rows = split.execute(sql, (limit,)).fetchall()
        return [HandRow(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    def read_tempest() -> list[ReadRow]:
        return session.execute(query).all()

    def read_slotted() -> list[SlotRow]:
        return session.execute(slotted).all()

    return ({"psycopg fetchall": read_raw, "psycopg + split": read_split,
             "tempest_typed all()": read_tempest, "all(), slots=True": read_slotted},
            [raw, split, session, engine])


def child(side: str, limit: int, traced: bool) -> None:
    """Read `limit` rows once on `side`, keep them, print the peak (one JSON line)."""
    readers, closers = sides(limit)
    read = readers[side]
    read()  # warm-up: the connection, the statement's compilation, the imports
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


def memory(limit: int) -> str:
    lines = [f"Peak memory of reading {limit:,} rows and keeping them ({machine()})", "",
             f"{'side':22} {'tracemalloc peak':>17} {'ratio':>7} {'RSS growth':>11} {'ratio':>7}"]
    got: dict[str, dict[str, Any]] = {}
    for side in ("psycopg fetchall", "psycopg + split", "tempest_typed all()",
                 "all(), slots=True"):
        got[side] = {}
        for traced in ("1", "0"):
            done = subprocess.run([sys.executable, __file__, "--child", side, str(limit), traced],
                                  check=True, capture_output=True, text=True)
            got[side].update(json.loads(done.stdout.strip().splitlines()[-1]))
        assert got[side]["rows"] == limit, got
    base = got["psycopg fetchall"]
    for side, m in got.items():
        lines.append(f"{side:22} {m['traced_peak_mib']:13.1f} MiB "
                     f"{m['traced_peak_mib'] / base['traced_peak_mib']:6.2f}x "
                     f"{m['rss_growth_mib']:7.1f} MiB {m['rss_growth_mib'] / base['rss_growth_mib']:6.2f}x")
    lines.append("")
    lines.append("ratio = this side's peak / psycopg fetchall's (lower is leaner)")
    return "\n".join(lines)


def _timed_whole(read: Any) -> Any:
    """The reader, returning None: run_rounds times the whole call (the rows kept until the
    call returns, then let go)."""
    def run() -> None:
        read()
    return run


def throughput(limits: list[int], rounds: int) -> str:
    groups = []
    for limit in limits:
        readers, closers = sides(limit)
        measures = [(Measure(name, limit, "rows"), fn) for name, fn in readers.items()]
        run_rounds([(m, _timed_whole(fn)) for m, fn in measures], rounds)
        groups.append((f"{limit:,} rows", [m for m, _ in measures], "psycopg fetchall"))
        for c in closers:
            c.close()
    return throughput_table(f"Reading a select whole, PostgreSQL ({machine()}; {rounds} rounds "
                            "per side, interleaved, medians)", groups)


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--child", nargs=3, help="(internal) one measured read")
    args = p.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), args.child[2] == "1")
        return
    big = 50_000 if args.quick else 200_000
    rounds = args.rounds or (3 if args.quick else 9)
    fill(big)
    try:
        print(memory(big), flush=True)
        print()
        print(throughput([10_000, big], rounds))
    finally:
        drop()


if __name__ == "__main__":
    main()
