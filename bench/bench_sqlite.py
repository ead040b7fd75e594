"""Workload 4: SQLite, the seed library's own benchmark.

On a file database (WAL journal, as tempest_typed's SQLite driver sets it), each side:
- inserts N people in one transaction: the batch form each library offers (sqlite3's
  executemany; tempest_typed's values(list); SQLAlchemy's executemany), and one statement per
  row inside one transaction;
- scans every row;
- scans with a filter, `age > 40 AND active`;
- looks up 1,000 rows by primary key, one statement each, built as user code writes it.

Each read sample runs its read 5 times over (READ_REPEATS).

Rows come back in each library's own form: tuples from sqlite3 (the floor; `active` stays
0/1), model instances from tempest_typed (`active` a bool), Rows from SQLAlchemy (`active` a
bool). The table is emptied outside the timing before each insert run.

A second floor, "sqlite3 by hand", is the Python a user writes around sqlite3 to do what the
libraries do: the insert makes its tuples from the dicts inside the clock, and the reads map
each tuple to a plain dataclass with `active` a bool. sqlite3's own loop runs in C; this floor
says how much of the distance to it is the Python any typed result costs.

    .venv/bin/python bench/bench_sqlite.py [--quick] [--rows N]
"""

from __future__ import annotations

import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import sqlalchemy as sa
from _common import Measure, machine, parser, run_rounds, throughput_table
from _models import Person, sa_people

from tempest_typed import create_engine, insert, select

INSERT_SQL = 'INSERT INTO "bench_people" ("name", "email", "age", "active") VALUES (?, ?, ?, ?)'
SCAN_SQL = 'SELECT "id", "name", "email", "age", "active" FROM "bench_people"'
FILTER_SQL = SCAN_SQL + ' WHERE "age" > ? AND "active" = ?'
LOOKUP_SQL = SCAN_SQL + ' WHERE "id" = ?'
LOOKUPS = 1000
#: each read sample runs the read this many times
READ_REPEATS = 5


@dataclass(slots=True)
class PersonRow:
    """What a user writes by hand to get typed rows out of sqlite3."""

    id: int
    name: str
    email: str
    age: int
    active: bool


def mapped(rows: list[tuple[int, str, str, int, int]]) -> list[PersonRow]:
    return [PersonRow(i, name, email, age, bool(active)) for i, name, email, age, active in rows]


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--rows", type=int, default=None)
    args = p.parse_args()
    n = args.rows or (5000 if args.quick else 20000)
    rounds = args.rounds or (3 if args.quick else 7)
    folder = tempfile.mkdtemp(prefix="tempest-bench-")
    path = f"{folder}/bench.db"

    engine = create_engine(f"sqlite:///{path}", pool_size=1)
    engine.create_all(Person)
    session = engine.session()
    raw = sqlite3.connect(path, isolation_level=None)
    raw.execute("PRAGMA journal_mode = wal")
    sa_engine = sa.create_engine(f"sqlite:///{path}", pool_size=1)
    sa_conn = sa_engine.connect()  # autobegins; commit() ends each write transaction
    t = sa_people

    rng = random.Random(7)
    people = [{"name": f"person {i}", "email": f"p{i}@example.com", "age": rng.randint(18, 80),
               "active": rng.random() < 0.5} for i in range(n)]
    tuples = [(d["name"], d["email"], d["age"], d["active"]) for d in people]
    keys = [rng.randint(1, n) for _ in range(LOOKUPS)]
    expected_filtered = sum(1 for d in people if d["age"] > 40 and d["active"])

    assert insert(Person).values(people[0]).compile("sqlite").sql == INSERT_SQL
    assert select(Person).where({"age": {"gt": 40}, "active": True}).compile(
        "sqlite").sql == FILTER_SQL

    def emptied(fn: Callable[[], None]) -> Callable[[], float]:
        def run() -> float:
            raw.execute('DELETE FROM "bench_people"')
            started = time.perf_counter()
            fn()
            elapsed = time.perf_counter() - started
            got = raw.execute('SELECT count(*) FROM "bench_people"').fetchone()
            assert got is not None and got[0] == n, (got, n)
            return elapsed
        return run

    # -- insert -------------------------------------------------------------------------------
    def raw_batch() -> None:
        raw.execute("BEGIN IMMEDIATE")
        raw.executemany(INSERT_SQL, tuples)
        raw.execute("COMMIT")

    def hand_batch() -> None:
        raw.execute("BEGIN IMMEDIATE")
        raw.executemany(INSERT_SQL, [(d["name"], d["email"], d["age"], d["active"])
                                     for d in people])
        raw.execute("COMMIT")

    def tempest_batch() -> None:
        with session.transaction():
            session.execute(insert(Person).values(people))

    def alchemy_batch() -> None:
        sa_conn.execute(sa.insert(t), people)
        sa_conn.commit()

    def raw_each() -> None:
        raw.execute("BEGIN IMMEDIATE")
        for row in tuples:
            raw.execute(INSERT_SQL, row)
        raw.execute("COMMIT")

    def hand_each() -> None:
        raw.execute("BEGIN IMMEDIATE")
        for d in people:
            raw.execute(INSERT_SQL, (d["name"], d["email"], d["age"], d["active"]))
        raw.execute("COMMIT")

    def tempest_each() -> None:
        with session.transaction():
            for person in people:
                session.execute(insert(Person).values(person))

    def alchemy_each() -> None:
        for person in people:
            sa_conn.execute(sa.insert(t).values(person))
        sa_conn.commit()

    # -- reads --------------------------------------------------------------------------------
    def raw_scan() -> None:
        assert len(raw.execute(SCAN_SQL).fetchall()) == n

    def hand_scan() -> None:
        assert len(mapped(raw.execute(SCAN_SQL).fetchall())) == n

    def tempest_scan() -> None:
        assert len(session.execute(select(Person)).all()) == n

    def alchemy_scan() -> None:
        assert len(sa_conn.execute(sa.select(t)).all()) == n

    def raw_filter() -> None:
        assert len(raw.execute(FILTER_SQL, (40, True)).fetchall()) == expected_filtered

    def hand_filter() -> None:
        rows = mapped(raw.execute(FILTER_SQL, (40, True)).fetchall())
        assert len(rows) == expected_filtered

    def tempest_filter() -> None:
        rows = session.execute(select(Person).where({"age": {"gt": 40}, "active": True})).all()
        assert len(rows) == expected_filtered

    def alchemy_filter() -> None:
        rows = sa_conn.execute(sa.select(t).where(t.c.age > 40, t.c.active.is_(True))).all()
        assert len(rows) == expected_filtered

    def raw_lookup() -> None:
        for k in keys:
            raw.execute(LOOKUP_SQL, (k,)).fetchone()

    def hand_lookup() -> None:
        for k in keys:
            row = raw.execute(LOOKUP_SQL, (k,)).fetchone()
            assert row is not None
            PersonRow(row[0], row[1], row[2], row[3], bool(row[4]))

    def tempest_lookup() -> None:
        for k in keys:
            session.execute(select(Person).where({"id": k})).one()

    def alchemy_lookup() -> None:
        for k in keys:
            sa_conn.execute(sa.select(t).where(t.c.id == k)).one()

    def trio(unit: str, units: int, names: tuple[str, ...] = (
            "raw sqlite3", "sqlite3 by hand", "tempest_typed", "SQLAlchemy Core")
             ) -> list[Measure]:
        return [Measure(name, units, unit) for name in names]

    def repeated(fn: Callable[[], None]) -> Callable[[], None]:
        # A read of this table takes 10 to 50 ms; repeated, a sample outlasts the moments
        # this shared machine stalls, which made single reads swing by 2x.
        def run() -> None:
            for _ in range(READ_REPEATS):
                fn()
        return run

    batch, each = trio("row", n), trio("row", n)
    scan = trio("row", n * READ_REPEATS)
    filt = trio("row", expected_filtered * READ_REPEATS)
    look = trio("row", LOOKUPS * READ_REPEATS)
    (raw_scan, hand_scan, tempest_scan, alchemy_scan, raw_filter, hand_filter, tempest_filter,
     alchemy_filter, raw_lookup, hand_lookup, tempest_lookup, alchemy_lookup) = map(
        repeated, (raw_scan, hand_scan, tempest_scan, alchemy_scan, raw_filter, hand_filter,
                   tempest_filter, alchemy_filter, raw_lookup, hand_lookup, tempest_lookup,
                   alchemy_lookup))
    began = time.perf_counter()
    run_rounds([(batch[0], emptied(raw_batch)), (batch[1], emptied(hand_batch)),
                (batch[2], emptied(tempest_batch)), (batch[3], emptied(alchemy_batch)),
                (each[0], emptied(raw_each)), (each[1], emptied(hand_each)),
                (each[2], emptied(tempest_each)), (each[3], emptied(alchemy_each)),
                (scan[0], raw_scan), (scan[1], hand_scan), (scan[2], tempest_scan),
                (scan[3], alchemy_scan),
                (filt[0], raw_filter), (filt[1], hand_filter), (filt[2], tempest_filter),
                (filt[3], alchemy_filter),
                (look[0], raw_lookup), (look[1], hand_lookup), (look[2], tempest_lookup),
                (look[3], alchemy_lookup)],
               rounds)
    sa_conn.close()
    sa_engine.dispose()
    session.close()
    engine.close()
    raw.close()
    for leftover in Path(folder).iterdir():
        leftover.unlink()
    Path(folder).rmdir()
    print(throughput_table(
        f"Workload 4: SQLite file database, {n:,} rows ({machine()}, SQLite "
        f"{sqlite3.sqlite_version}; {rounds} rounds per side after a warm-up, interleaved)",
        [(f"insert {n:,}, batch, 1 transaction", batch, "raw sqlite3"),
         (f"insert {n:,}, 1 by 1, 1 transaction", each, "raw sqlite3"),
         ("scan all", scan, "raw sqlite3"),
         ("scan age > 40 AND active", filt, "raw sqlite3"),
         (f"{LOOKUPS:,} primary-key lookups", look, "raw sqlite3")]))
    print(f"\ntook {time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    main()
