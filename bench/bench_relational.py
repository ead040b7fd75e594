"""Workload 6: joins and aggregates, next to SQLAlchemy Core and the raw driver.

- build + compile: a three-table join with an aggregate (users x orders x order items, the
  paid orders' item count and sum per user, HAVING on the sum, ORDER BY the sum's label),
  written fresh each time as user code writes it, then compiled to SQL text and parameters.
  SQLAlchemy Core builds the same statement and compiles it twice over: uncached
  (`stmt.compile(dialect=...)`, a new compiler every time) and through its statement cache
  (`_compile_w_cache`, the path `Connection.execute` takes). The floor is the hand-written SQL:
  a constant string and a tuple of values.
- 10,000 joined rows into two models per row, on PostgreSQL: users x orders, every order with
  its user. tempest_typed executes `join(User, "user").inner_join(Order, "order", ...)` and
  returns rows of a User and an Order. The floor is psycopg running the same SQL text and
  splitting each fetched tuple by hand into two dataclass instances (`slots=True`, positional
  arguments). tempest_typed pauses the cyclic garbage collector while it makes the objects of
  a result of 1,000 rows or more; a second floor does the same around the hand-written split,
  so that the table shows what that pause is worth. SQLAlchemy Core runs its statement on the
  same psycopg driver and the same hand-written split. The tables are
  ANALYZEd before the clock starts, and every side has a warm-up round. Each side is timed as
  wall-clock time (server work and this shared machine's noise included) and as this
  process's CPU time (what the client side adds).

Every side of both workloads sends the same statement: the script asserts that tempest_typed
compiles the hand-written SQL, and that the three sides return the same rows.

    .venv/bin/python bench/bench_relational.py [--quick]

PostgreSQL is reached at TEMPEST_PG_URL (or BENCH_PG_URL).
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).parent))

import psycopg
import sqlalchemy as sa
from _common import PG_URL, Measure, machine, parser, per_op_table, run_rounds
from _models import sa_claim, tempest_claim
from sqlalchemy.dialects import postgresql as sa_pg

from tempest_typed import Model, column, create_engine, join, select, sql
from tempest_typed.dialects import get_dialect


class User(Model, table="bench_rel_users"):
    id: int = column(primary_key=True)
    email: str
    country: str
    credit_limit: Decimal = Decimal(0)


class Order(Model, table="bench_rel_orders"):
    id: int = column(primary_key=True)
    user_id: int = column(references="bench_rel_users.id")
    total: Decimal
    status: Literal["new", "paid", "refunded"]
    created_at: datetime


class Item(Model, table="bench_rel_items"):
    id: int = column(primary_key=True)
    order_id: int = column(references="bench_rel_orders.id")
    sku: str
    cents: int


sa_metadata = sa.MetaData()
sa_users = sa.Table(
    "bench_rel_users", sa_metadata,
    sa.Column("id", sa.BigInteger, primary_key=True),
    sa.Column("email", sa.Text, nullable=False),
    sa.Column("country", sa.Text, nullable=False),
    sa.Column("credit_limit", sa.Numeric, nullable=False),
)
sa_orders = sa.Table(
    "bench_rel_orders", sa_metadata,
    sa.Column("id", sa.BigInteger, primary_key=True),
    sa.Column("user_id", sa.BigInteger, nullable=False),
    sa.Column("total", sa.Numeric, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)
sa_items = sa.Table(
    "bench_rel_items", sa_metadata,
    sa.Column("id", sa.BigInteger, primary_key=True),
    sa.Column("order_id", sa.BigInteger, nullable=False),
    sa.Column("sku", sa.Text, nullable=False),
    sa.Column("cents", sa.BigInteger, nullable=False),
)

# -- workload a: build + compile ----------------------------------------------------------------

REPORT_SQL = (
    'SELECT "user"."id", "user"."email", COUNT("item"."id") AS "items", '
    'SUM("item"."cents") AS "spent" FROM "bench_rel_users" AS "user" '
    'INNER JOIN "bench_rel_orders" AS "order" ON "user"."id" = "order"."user_id" '
    'INNER JOIN "bench_rel_items" AS "item" ON "order"."id" = "item"."order_id" '
    'WHERE "order"."status" = %s GROUP BY "user"."id", "user"."email" '
    'HAVING SUM("item"."cents") > %s ORDER BY SUM("item"."cents") DESC NULLS LAST'
)
REPORT_PARAMS = ("paid", 1000)


def tempest_report(status: str, minimum: int) -> Any:
    """Paid orders' items per user: count and sum, the big spenders first."""
    return (
        join(User, "user")
        .inner_join(Order, "order", {"user.id": "order.user_id"})
        .inner_join(Item, "item", {"order.id": "item.order_id"})
        .where({"order.status": status})
        .aggregate(["user.id", "user.email"],
                   {"items": sql.count("item.id"), "spent": sql.sum("item.cents")})
        .having({"spent": {"gt": minimum}})
        .order_by("spent", "desc")
    )


def sa_report(status: str, minimum: int) -> Any:
    """The same report in SQLAlchemy Core."""
    u, o, i = sa_users.alias("user"), sa_orders.alias("order"), sa_items.alias("item")
    spent = sa.func.sum(i.c.cents)
    return (
        sa.select(u.c.id, u.c.email, sa.func.count(i.c.id).label("items"),
                  spent.label("spent"))
        .select_from(u.join(o, u.c.id == o.c.user_id).join(i, o.c.id == i.c.order_id))
        .where(o.c.status == status)
        .group_by(u.c.id, u.c.email)
        .having(spent > minimum)
        .order_by(spent.desc().nulls_last())
    )


def build_workload(n: int, rounds: int) -> list[tuple[str, list[Measure], str]]:
    pg = get_dialect("postgresql")
    sa_dialect = sa_pg.psycopg.dialect()  # type: ignore[attr-defined]
    sa_cache: dict[Any, Any] = {}

    def floor() -> None:
        for _ in range(n):
            _ = (REPORT_SQL, REPORT_PARAMS)

    def tempest() -> None:
        for _ in range(n):
            tempest_report("paid", 1000).compile(pg)

    def alchemy_uncached() -> None:
        for _ in range(n):
            compiled = sa_report("paid", 1000).compile(dialect=sa_dialect)
            compiled.construct_params(escape_names=False)

    def alchemy_cached() -> None:
        for _ in range(n):
            stmt = sa_report("paid", 1000)
            compiled, extracted, _, _ = stmt._compile_w_cache(
                sa_dialect, compiled_cache=sa_cache, column_keys=[])
            compiled.construct_params(extracted_parameters=extracted, escape_names=False)

    # The seed's claim, measured in the same rounds: how fast the machine ran against the
    # figures of workload 1.
    def claim_tempest() -> None:
        for _ in range(n):
            tempest_claim(10).compile(pg)

    def claim_alchemy_uncached() -> None:
        for _ in range(n):
            sa_claim(10).compile(dialect=sa_dialect).construct_params(escape_names=False)

    compiled = tempest_report("paid", 1000).compile(pg)
    assert (compiled.sql, compiled.params) == (REPORT_SQL, REPORT_PARAMS), compiled.sql
    measures = [Measure("raw SQL", n, "statement"), Measure("tempest_typed", n, "statement"),
                Measure("SQLAlchemy uncached", n, "statement"),
                Measure("SQLAlchemy cached", n, "statement")]
    claim = [Measure("tempest_typed", n, "statement"),
             Measure("SQLAlchemy uncached", n, "statement")]
    run_rounds([*zip(measures, (floor, tempest, alchemy_uncached, alchemy_cached), strict=True),
                *zip(claim, (claim_tempest, claim_alchemy_uncached), strict=True)], rounds)
    return [("join+aggregate: build + compile", measures, "SQLAlchemy uncached"),
            ("  the same, vs SA's cache", measures, "SQLAlchemy cached"),
            ("seed claim (calibration)", claim, "SQLAlchemy uncached")]


# -- workload c: a window + CTE report, build + compile ------------------------------------------


def tempest_latest(status: str) -> Any:
    """Each user's latest order of a status, with its running total: a window function in a
    named select, joined to the users."""
    ranked = (select(Order, ["id", "user_id", "total"])
              .where({"status": status})
              .add_columns({
                  "newest": sql.row_number().over(partition_by=["user_id"],
                                                  order_by=[("created_at", "desc")]),
                  "so_far": sql.sum("total").over(partition_by=["user_id"],
                                                  order_by=["created_at"]),
              }))
    latest = sql.cte("latest", ranked)
    return (join(User, "user").inner_join(latest, "last", {"user.id": "last.user_id"})
            .where({"last.newest": 1}).order_by("user.id"))


def sa_latest(status: str) -> Any:
    """The same report in SQLAlchemy Core."""
    o, u = sa_orders, sa_users.alias("user")
    ranked = (sa.select(o.c.id, o.c.user_id, o.c.total,
                        sa.func.row_number().over(partition_by=o.c.user_id,
                                                  order_by=o.c.created_at.desc())
                        .label("newest"),
                        sa.func.sum(o.c.total).over(partition_by=o.c.user_id,
                                                    order_by=o.c.created_at).label("so_far"))
              .where(o.c.status == status).cte("latest"))
    last = ranked.alias("last")
    return (sa.select(u, last).select_from(u.join(last, u.c.id == last.c.user_id))
            .where(last.c.newest == 1).order_by(u.c.id))


def window_workload(n: int, rounds: int) -> list[tuple[str, list[Measure], str]]:
    pg = get_dialect("postgresql")
    sa_dialect = sa_pg.psycopg.dialect()  # type: ignore[attr-defined]
    sa_cache: dict[Any, Any] = {}

    def tempest() -> None:
        for _ in range(n):
            tempest_latest("paid").compile(pg)

    def alchemy_uncached() -> None:
        for _ in range(n):
            sa_latest("paid").compile(dialect=sa_dialect).construct_params(escape_names=False)

    def alchemy_cached() -> None:
        for _ in range(n):
            compiled, extracted, _, _ = sa_latest("paid")._compile_w_cache(
                sa_dialect, compiled_cache=sa_cache, column_keys=[])
            compiled.construct_params(extracted_parameters=extracted, escape_names=False)

    measures = [Measure("tempest_typed", n, "statement"),
                Measure("SQLAlchemy uncached", n, "statement"),
                Measure("SQLAlchemy cached", n, "statement")]
    run_rounds(list(zip(measures, (tempest, alchemy_uncached, alchemy_cached), strict=True)),
               rounds)
    return [("window + CTE: build + compile", measures, "SQLAlchemy uncached"),
            ("  the same, vs SA's cache", measures, "SQLAlchemy cached")]


def check_latest() -> None:
    """tempest_typed and SQLAlchemy find the same rows for the window + CTE report."""
    engine = create_engine(PG_URL, pool_size=1)
    engine.drop_all(User, Order, Item)
    engine.create_all(User, Order, Item)
    sa_engine = sa.create_engine(PG_URL.replace("postgresql://", "postgresql+psycopg://"))
    try:
        fill(50, 400, 10)
        ours = [(r.user.id, r.last.id, r.last.so_far)
                for r in engine.execute(tempest_latest("paid")).all()]
        with sa_engine.connect() as conn:
            theirs = [(r[0], r[4], r[8]) for r in conn.execute(sa_latest("paid")).all()]
        assert ours == theirs and ours, (ours[:3], theirs[:3])
    finally:
        sa_engine.dispose()
        engine.drop_all(User, Order, Item)
        engine.close()


# -- workload b: 10,000 joined rows into two models ---------------------------------------------

JOIN_SQL = (
    'SELECT "user"."id", "user"."email", "user"."country", "user"."credit_limit", '
    '"order"."id", "order"."user_id", "order"."total", "order"."status", '
    '"order"."created_at" FROM "bench_rel_users" AS "user" '
    'INNER JOIN "bench_rel_orders" AS "order" ON "user"."id" = "order"."user_id"'
)


@dataclass(slots=True)
class UserRow:
    """What a user writes by hand to get a typed user out of a joined tuple."""

    id: int
    email: str
    country: str
    credit_limit: Decimal


@dataclass(slots=True)
class OrderRow:
    """The order half of the joined tuple."""

    id: int
    user_id: int
    total: Decimal
    status: str
    created_at: datetime


def split(rows: list[tuple[Any, ...]]) -> list[tuple[UserRow, OrderRow]]:
    """The hand-written split of each fetched tuple into two dataclass instances."""
    return [(UserRow(r[0], r[1], r[2], r[3]), OrderRow(r[4], r[5], r[6], r[7], r[8]))
            for r in rows]


def fill(n_users: int, n_orders: int, n_items: int) -> None:
    """Create and fill the three tables (COPY), then ANALYZE them."""
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    statuses = ("new", "paid", "refunded")
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        with conn.cursor().copy('COPY "bench_rel_users" ("id", "email", "country", '
                                '"credit_limit") FROM STDIN') as copy:
            for i in range(1, n_users + 1):
                copy.write_row((i, f"user{i}@example.com", ("PT", "ES", "FR")[i % 3],
                                Decimal(i % 500)))
        with conn.cursor().copy('COPY "bench_rel_orders" ("id", "user_id", "total", '
                                '"status", "created_at") FROM STDIN') as copy:
            for i in range(1, n_orders + 1):
                copy.write_row((i, (i * 7) % n_users + 1, Decimal(i % 997) / 4,
                                statuses[i % 3], t0 + timedelta(minutes=i)))
        with conn.cursor().copy('COPY "bench_rel_items" ("id", "order_id", "sku", "cents") '
                                'FROM STDIN') as copy:
            for i in range(1, n_items + 1):
                copy.write_row((i, (i * 3) % n_orders + 1, f"sku{i % 50}", (i * 37) % 5000))
        for table in ("bench_rel_users", "bench_rel_orders", "bench_rel_items"):
            conn.execute(f'VACUUM ANALYZE "{table}"')


def join_workload(n_orders: int, repeats: int,
                  rounds: int) -> list[tuple[str, list[Measure], str]]:
    engine = create_engine(PG_URL, pool_size=1)
    engine.drop_all(User, Order, Item)
    engine.create_all(User, Order, Item)
    try:
        fill(n_orders // 5, n_orders, n_orders * 2)
        return _join_sides(engine, n_orders, repeats, rounds)
    finally:
        engine.drop_all(User, Order, Item)
        engine.close()


def _join_sides(engine: Any, n_orders: int, repeats: int,
                rounds: int) -> list[tuple[str, list[Measure], str]]:
    raw_conn = psycopg.connect(PG_URL, autocommit=True)
    session = engine.session()
    sa_engine = sa.create_engine(PG_URL.replace("postgresql://", "postgresql+psycopg://"),
                                 isolation_level="AUTOCOMMIT", pool_size=1)
    sa_conn = sa_engine.connect()
    t_join = join(User, "user").inner_join(Order, "order", {"user.id": "order.user_id"})
    u, o = sa_users.alias("user"), sa_orders.alias("order")
    s_join = sa.select(u, o).select_from(u.join(o, u.c.id == o.c.user_id))
    assert t_join.compile(engine.dialect).sql == JOIN_SQL

    def raw() -> list[tuple[UserRow, OrderRow]]:
        return split(raw_conn.execute(JOIN_SQL).fetchall())

    def raw_gc_paused() -> list[tuple[UserRow, OrderRow]]:
        # What tempest_typed does from 1,000 rows on: no cyclic GC pass while the objects
        # of one result are made (they hold no cycles).
        rows = raw_conn.execute(JOIN_SQL).fetchall()
        gc.disable()
        try:
            return split(rows)
        finally:
            gc.enable()

    def tempest() -> list[Any]:
        return session.execute(t_join).all()

    def alchemy() -> list[tuple[UserRow, OrderRow]]:
        return split(sa_conn.execute(s_join).all())  # type: ignore[arg-type]

    # The three sides fetch the same rows (compared once, outside the clock).
    by_raw = sorted((a.id, b.id, b.total, b.created_at) for a, b in raw())
    by_tempest = sorted((r.user.id, r.order.id, r.order.total, r.order.created_at)
                        for r in tempest())
    by_alchemy = sorted((a.id, b.id, b.total, b.created_at) for a, b in alchemy())
    assert len(by_raw) == n_orders and by_raw == by_tempest == by_alchemy

    def repeated(fn: Callable[[], object]) -> Callable[[], None]:
        def run() -> None:
            for _ in range(repeats):
                fn()
        return run

    sides = ("raw psycopg + split", "raw + split, no GC", "tempest_typed", "SQLAlchemy + split")
    fns = [repeated(raw), repeated(raw_gc_paused), repeated(tempest), repeated(alchemy)]
    wall = [Measure(name, n_orders * repeats, "row") for name in sides]
    cpu = [Measure(name, n_orders * repeats, "row") for name in sides]
    timed: list[tuple[Measure, Callable[[], float | None]]] = []
    timed += zip(wall, fns, strict=True)
    timed += zip(cpu, [_cpu(fn) for fn in fns], strict=True)
    run_rounds(timed, rounds)
    sa_conn.close()
    sa_engine.dispose()
    session.close()
    raw_conn.close()
    label = f"join {n_orders:,} rows, 2 models/row"
    return [(f"{label}: wall", wall, "raw psycopg + split"),
            (f"{label}: client CPU", cpu, "raw psycopg + split")]


def _cpu(fn: Callable[[], None]) -> Callable[[], float]:
    """Run fn and return the CPU time this process spent, leaving out the server's work."""
    def run() -> float:
        started = time.process_time()
        fn()
        return time.process_time() - started
    return run


def check_report(n: int) -> None:
    """The report's rows are the same through tempest_typed and SQLAlchemy (on a small fill)."""
    engine = create_engine(PG_URL, pool_size=1)
    engine.drop_all(User, Order, Item)
    engine.create_all(User, Order, Item)
    try:
        fill(n // 5, n, n * 2)
        ours = [tuple(r) for r in engine.execute(tempest_report("paid", 1000)).all()]
        sa_engine = sa.create_engine(PG_URL.replace("postgresql://", "postgresql+psycopg://"))
        with sa_engine.connect() as conn:
            theirs = [tuple(r) for r in conn.execute(sa_report("paid", 1000)).all()]
        sa_engine.dispose()
        assert ours and ours == theirs, (ours[:3], theirs[:3])
    finally:
        engine.drop_all(User, Order, Item)
        engine.close()


def main() -> None:
    args = parser(__doc__ or "").parse_args()
    rounds = args.rounds or (3 if args.quick else 9)
    n_build = 200 if args.quick else 1000
    n_rows = 2000 if args.quick else 10_000
    repeats = 2 if args.quick else 5
    started = time.perf_counter()
    check_report(1000)
    groups = build_workload(n_build, rounds)
    print(per_op_table(
        f"Workload 6a: join + aggregate, build + compile ({machine()}; {rounds} rounds of "
        f"{n_build} builds per side, medians over rounds)", groups))
    print()
    check_latest()
    groups = window_workload(n_build, rounds)
    print(per_op_table(
        f"Workload 6c: a window + CTE report, build + compile ({machine()}; {rounds} rounds of "
        f"{n_build} builds per side, medians over rounds)", groups))
    print()
    groups = join_workload(n_rows, repeats, rounds)
    print(per_op_table(
        f"Workload 6b: {n_rows:,} joined rows into two models each, PostgreSQL ({machine()}; "
        f"{rounds} rounds of {repeats} queries per side, medians over rounds)", groups))
    print(f"\ntook {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
