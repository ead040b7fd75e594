"""Workload 3: enqueue N messages on PostgreSQL with the seed's idempotent insert.

Every statement is INSERT ... ON CONFLICT ("consumer", "idempotency_key") WHERE
"idempotency_key" IS NOT NULL DO NOTHING RETURNING "id": the partial unique index makes a
repeated send a no-op, and RETURNING says which messages were new. Messages are written in
transactions of 1,000, in one process, three ways:

- one statement per message;
- executemany: one statement text, 1,000 parameter sets (psycopg's executemany, which
  pipelines them; SQLAlchemy's executemany, which rewrites them to multi-row VALUES);
- multi-row VALUES: one statement of 1,000 rows.

tempest_typed has one batch form, a list passed to values(); the engine runs it the way the
driver runs it fastest (on psycopg, from 50 rows, as the one-row statement through the
pipelined executemany, in one transaction), so its batch figure is compared with both.

The messages are made before the clock starts, in each side's own form (tuples for psycopg,
dicts for the builders). The table is emptied between runs, outside the timing.

    .venv/bin/python bench/bench_enqueue.py [--quick] [--messages N]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import uuid4

sys.path.insert(0, str(Path(__file__).parent))

import psycopg
import sqlalchemy as sa
from _common import PG_URL, Measure, machine, parser, run_rounds, throughput_table
from _models import Outbound, sa_outbound
from _queue_common import count, create_table, drop_table, empty
from sqlalchemy.dialects.postgresql import insert as sa_insert

from tempest_typed import create_engine, insert

CHUNK = 1000
COLUMNS = ("id", "consumer", "idempotency_key", "status", "attempts", "next_attempt_at",
           "updated_at")
HEAD = ('INSERT INTO "bench_outbound" ("id", "consumer", "idempotency_key", "status", '
        '"attempts", "next_attempt_at", "updated_at") VALUES ')
TAIL = (' ON CONFLICT ("consumer", "idempotency_key") WHERE "idempotency_key" IS NOT NULL '
        'DO NOTHING RETURNING "id"')
ROW = "(%s, %s, %s, %s, %s, %s, %s)"
ONE_SQL = HEAD + ROW + TAIL


def chunks(items: list[Any]) -> list[list[Any]]:
    return [items[i:i + CHUNK] for i in range(0, len(items), CHUNK)]


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--messages", type=int, default=None)
    args = p.parse_args()
    n = args.messages or (4000 if args.quick else 20000)
    rounds = args.rounds or (2 if args.quick else 5)
    create_table()

    now = datetime.now(UTC)
    dicts = [{"id": uuid4(), "consumer": "bench", "idempotency_key": f"key-{i}",
              "status": "queued", "attempts": 0, "next_attempt_at": now, "updated_at": None}
             for i in range(n)]
    tuples = [tuple(d[c] for c in COLUMNS) for d in dicts]
    multi_sql = HEAD + ", ".join([ROW] * CHUNK) + TAIL

    raw = psycopg.connect(PG_URL, autocommit=True)
    engine = create_engine(PG_URL, pool_size=1)
    session = engine.session()
    sa_engine = sa.create_engine(PG_URL.replace("postgresql://", "postgresql+psycopg://"),
                                 pool_size=1)
    sa_conn = sa_engine.connect()
    t = sa_outbound

    def timed(fn: Callable[[], int]) -> Callable[[], float]:
        def run() -> float:
            empty()
            started = time.perf_counter()
            new = fn()
            elapsed = time.perf_counter() - started
            assert new == n == count(), (new, n)
            return elapsed
        return run

    # -- one statement per message ----------------------------------------------------------
    def raw_one() -> int:
        new = 0
        for part in chunks(tuples):
            with raw.transaction():
                for row in part:
                    new += len(raw.execute(ONE_SQL, row).fetchall())
        return new

    def tempest_one() -> int:
        new = 0
        for part in chunks(dicts):
            with session.transaction():
                for message in part:
                    new += len(session.execute(
                        insert(Outbound).values(message)
                        .on_conflict_do_nothing(["consumer", "idempotency_key"],
                                                where={"idempotency_key": {"is_null": False}})
                        .returning("id")
                    ).all())
        return new

    def alchemy_one() -> int:
        new = 0
        for part in chunks(dicts):
            with sa_conn.begin():
                for message in part:
                    new += len(sa_conn.execute(
                        sa_insert(t).values(message)
                        .on_conflict_do_nothing(index_elements=["consumer", "idempotency_key"],
                                                index_where=t.c.idempotency_key.is_not(None))
                        .returning(t.c.id)
                    ).all())
        return new

    # -- executemany --------------------------------------------------------------------------
    def raw_many() -> int:
        new = 0
        for part in chunks(tuples):
            with raw.transaction(), raw.cursor() as cur:
                cur.executemany(ONE_SQL, part, returning=True)
                while True:
                    new += len(cur.fetchall())
                    if not cur.nextset():
                        break
        return new

    def alchemy_many() -> int:
        new = 0
        for part in chunks(dicts):
            with sa_conn.begin():
                new += len(sa_conn.execute(
                    sa_insert(t)
                    .on_conflict_do_nothing(index_elements=["consumer", "idempotency_key"],
                                            index_where=t.c.idempotency_key.is_not(None))
                    .returning(t.c.id), part).all())
        return new

    # -- multi-row VALUES ---------------------------------------------------------------------
    def raw_multi() -> int:
        new = 0
        for part in chunks(tuples):
            params = [v for row in part for v in row]
            sql = multi_sql if len(part) == CHUNK else HEAD + ", ".join([ROW] * len(part)) + TAIL
            with raw.transaction():
                new += len(raw.execute(sql, params).fetchall())
        return new

    def tempest_multi() -> int:
        new = 0
        for part in chunks(dicts):
            with session.transaction():
                new += len(session.execute(
                    insert(Outbound).values(part)
                    .on_conflict_do_nothing(["consumer", "idempotency_key"],
                                            where={"idempotency_key": {"is_null": False}})
                    .returning("id")
                ).all())
        return new

    def alchemy_multi() -> int:
        new = 0
        for part in chunks(dicts):
            with sa_conn.begin():
                new += len(sa_conn.execute(
                    sa_insert(t).values(part)
                    .on_conflict_do_nothing(index_elements=["consumer", "idempotency_key"],
                                            index_where=t.c.idempotency_key.is_not(None))
                    .returning(t.c.id)).all())
        return new

    # The builders write the same SQL as the hand-written statements.
    one = (insert(Outbound).values(dicts[0])
           .on_conflict_do_nothing(["consumer", "idempotency_key"],
                                   where={"idempotency_key": {"is_null": False}})
           .returning("id"))
    assert one.compile(engine.dialect).sql == ONE_SQL, one.compile(engine.dialect).sql

    def m(name: str) -> Measure:
        return Measure(name, n, "message")

    one_m = [m("raw psycopg"), m("tempest_typed"), m("SQLAlchemy Core")]
    batch_m = [m("raw executemany"), m("raw multi-VALUES"), m("tempest values()"),
               m("SQLAlchemy many"), m("SQLAlchemy multi")]
    began = time.perf_counter()
    run_rounds([(one_m[0], timed(raw_one)), (one_m[1], timed(tempest_one)),
                (one_m[2], timed(alchemy_one)),
                (batch_m[0], timed(raw_many)), (batch_m[1], timed(raw_multi)),
                (batch_m[2], timed(tempest_multi)), (batch_m[3], timed(alchemy_many)),
                (batch_m[4], timed(alchemy_multi))], rounds)
    sa_conn.close()
    sa_engine.dispose()
    session.close()
    engine.close()
    raw.close()
    drop_table()
    print(throughput_table(
        f"Workload 3: enqueue {n:,} messages, PostgreSQL, ON CONFLICT ... DO NOTHING RETURNING, "
        f"transactions of {CHUNK:,} ({machine()}; {rounds} rounds per side after a warm-up, "
        "interleaved)",
        [("one statement per message", one_m, "raw psycopg"),
         ("batches of 1,000", batch_m, "raw executemany")]))
    print(f"\ntook {time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    main()
