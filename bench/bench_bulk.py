"""Bulk writes: a plain `insert(M).values(rows)` of 100,000 rows against the raw drivers.

The rows go into the seed's table (bench_outbound: 7 columns, a uuid key, the partial unique
index and the claim index), in one transaction per round, the table emptied (TRUNCATE or
DELETE) before each round, outside the timing. The rows are made before the clock starts, in
each side's own form: tuples for the raw drivers, dicts or model instances for
tempest_typed, dicts for SQLAlchemy Core. Sides, interleaved round by round after a warm-up:

- PostgreSQL: psycopg's `executemany` (pipelined; the baseline), psycopg's `COPY ... FROM
  STDIN` written row by row (`write_row`), in text and in binary (`set_types`),
  tempest_typed with dicts and with models (a plain insert of many rows goes through COPY,
  binary where the table's types are the model's), SQLAlchemy Core's executemany (its
  "insertmanyvalues" multi-row form).
- MySQL/MariaDB: PyMySQL's `executemany` (which rewrites the rows into multi-row VALUES
  statements), tempest_typed with dicts and models.
- SQLite: sqlite3's `executemany`, tempest_typed with dicts and models.

The raw MySQL and SQLite sides convert inside the timing what their driver cannot bind (a
UUID to text; an aware datetime to naive UTC, or to ISO text), as a program must.

    .venv/bin/python bench/bench_bulk.py [--quick] [--rounds N] [--rows N] [--only DB]
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import uuid4

sys.path.insert(0, str(Path(__file__).parent))

import psycopg
import pymysql
import sqlalchemy as sa
from _common import PG_URL, Measure, machine, parser, run_rounds, throughput_table
from _models import Outbound, sa_outbound

from tempest_typed import create_engine, insert

MYSQL_URL = "mysql://root@127.0.0.1:3306/test"
COLUMNS = ("id", "consumer", "idempotency_key", "status", "attempts", "next_attempt_at",
           "updated_at")
TABLE = "bench_outbound"


def _sql(quote: str, placeholder: str) -> tuple[str, str]:
    cols = ", ".join(f"{quote}{c}{quote}" for c in COLUMNS)
    values = ", ".join([placeholder] * len(COLUMNS))
    return (f"INSERT INTO {quote}{TABLE}{quote} ({cols}) VALUES ({values})",
            f"COPY {quote}{TABLE}{quote} ({cols}) FROM STDIN")


def make_rows(n: int) -> tuple[list[tuple[Any, ...]], list[dict[str, Any]], list[Outbound]]:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    models = [Outbound(consumer="mail", idempotency_key=f"k{i}", next_attempt_at=now)
              for i in range(n)]
    dicts = [{"id": uuid4(), "consumer": "mail", "idempotency_key": f"k{i}", "status": "queued",
              "attempts": 0, "next_attempt_at": now, "updated_at": None} for i in range(n)]
    tuples = [(d["id"], "mail", d["idempotency_key"], "queued", 0, now, None) for d in dicts]
    return tuples, dicts, models


def timed(prepare: Callable[[], None], write: Callable[[], None]) -> Callable[[], float]:
    """A side: `prepare` (emptying the table) untimed, then `write` timed."""
    def run() -> float:
        prepare()
        started = time.perf_counter()
        write()
        return time.perf_counter() - started
    return run


def tempest_sides(engine: Any, n: int, empty: Callable[[], None], dicts: list[dict[str, Any]],
                  models: list[Outbound]) -> list[tuple[Measure, Callable[[], float]]]:
    """tempest_typed's two sides on `engine`: the rows as dicts, and as model instances."""
    def write(rows: list[Any]) -> Callable[[], None]:
        def run() -> None:
            engine.execute(insert(Outbound).values(rows))
        return run
    return [(Measure("tempest dicts", n, "rows"), timed(empty, write(dicts))),
            (Measure("tempest models", n, "rows"), timed(empty, write(models)))]


def postgres(n: int, rounds: int) -> tuple[str, list[Measure], str]:
    engine = create_engine(PG_URL, pool_size=1)
    engine.drop_all(Outbound)
    engine.create_all(Outbound)
    raw = psycopg.connect(PG_URL)
    sa_engine = sa.create_engine(PG_URL.replace("postgresql://", "postgresql+psycopg://"))
    one, copy_sql = _sql('"', "%s")
    tuples, dicts, models = make_rows(n)

    def empty() -> None:
        with psycopg.connect(PG_URL, autocommit=True) as c:
            c.execute(f'TRUNCATE "{TABLE}"')

    def raw_executemany() -> None:
        with raw.transaction(), raw.cursor() as cur:
            cur.executemany(one, tuples)

    def raw_copy() -> None:
        with raw.transaction(), raw.cursor() as cur, cur.copy(copy_sql) as copy:
            for row in tuples:
                copy.write_row(row)

    def raw_binary_copy() -> None:
        with raw.transaction(), raw.cursor() as cur, \
                cur.copy(copy_sql + " (FORMAT BINARY)") as copy:
            copy.set_types(["uuid", "text", "text", "text", "int8", "timestamptz",
                            "timestamptz"])
            for row in tuples:
                copy.write_row(row)

    def alchemy() -> None:
        with sa_engine.begin() as conn:
            conn.execute(sa_outbound.insert(), dicts)

    try:
        sides = [(Measure("psycopg executemany", n, "rows"), timed(empty, raw_executemany)),
                 (Measure("psycopg COPY", n, "rows"), timed(empty, raw_copy)),
                 (Measure("psycopg binary COPY", n, "rows"), timed(empty, raw_binary_copy)),
                 *tempest_sides(engine, n, empty, dicts, models),
                 (Measure("SQLAlchemy Core", n, "rows"), timed(empty, alchemy))]
        run_rounds(sides, rounds)
        return (f"PostgreSQL, {n:,} rows", [m for m, _ in sides], "psycopg executemany")
    finally:
        raw.close()
        sa_engine.dispose()
        engine.drop_all(Outbound)
        engine.close()


def mysql(n: int, rounds: int) -> tuple[str, list[Measure], str]:
    engine = create_engine(MYSQL_URL, pool_size=1)
    engine.drop_all(Outbound)
    engine.create_all(Outbound)
    raw = pymysql.connect(host="127.0.0.1", port=3306, user="root", database="test")
    one, _ = _sql("`", "%s")
    tuples, dicts, models = make_rows(n)

    def empty() -> None:
        with raw.cursor() as cur:
            cur.execute(f"DELETE FROM `{TABLE}`")
        raw.commit()

    def raw_executemany() -> None:
        # PyMySQL binds no UUID, and a datetime without its zone: what the program converts
        with raw.cursor() as cur:
            cur.executemany(one, [(str(r[0]), r[1], r[2], r[3], r[4], r[5].replace(tzinfo=None),
                                   r[6]) for r in tuples])
        raw.commit()

    try:
        sides = [(Measure("PyMySQL executemany", n, "rows"), timed(empty, raw_executemany)),
                 *tempest_sides(engine, n, empty, dicts, models)]
        run_rounds(sides, rounds)
        return (f"MariaDB, {n:,} rows", [m for m, _ in sides], "PyMySQL executemany")
    finally:
        raw.close()
        engine.drop_all(Outbound)
        engine.close()


def sqlite(n: int, rounds: int, folder: str) -> tuple[str, list[Measure], str]:
    path = f"{folder}/bulk.db"
    engine = create_engine(f"sqlite:///{path}")
    engine.create_all(Outbound)
    raw = sqlite3.connect(path)
    one, _ = _sql('"', "?")
    tuples, dicts, models = make_rows(n)

    def empty() -> None:
        raw.execute(f'DELETE FROM "{TABLE}"')
        raw.commit()

    def raw_executemany() -> None:
        # sqlite3 binds no UUID nor aware datetime: what the program converts, as text
        raw.executemany(one, [(str(r[0]), r[1], r[2], r[3], r[4], r[5].isoformat(), r[6])
                              for r in tuples])
        raw.commit()

    try:
        sides = [(Measure("sqlite3 executemany", n, "rows"), timed(empty, raw_executemany)),
                 *tempest_sides(engine, n, empty, dicts, models)]
        run_rounds(sides, rounds)
        return (f"SQLite, {n:,} rows", [m for m, _ in sides], "sqlite3 executemany")
    finally:
        raw.close()
        engine.close()


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=None)
    p.add_argument("--only", choices=["postgresql", "mysql", "sqlite"])
    args = p.parse_args()
    n = args.rows or (10_000 if args.quick else 100_000)
    rounds = args.rounds or (2 if args.quick else 5)
    groups = []
    with tempfile.TemporaryDirectory() as folder:
        if args.only in (None, "postgresql"):
            groups.append(postgres(n, rounds))
        if args.only in (None, "mysql"):
            groups.append(mysql(n, rounds))
        if args.only in (None, "sqlite"):
            groups.append(sqlite(n, rounds, folder))
    print(throughput_table(f"Bulk insert of {n:,} rows, one transaction each ({machine()}; "
                           f"{rounds} rounds per side, interleaved, medians)", groups))


if __name__ == "__main__":
    main()
