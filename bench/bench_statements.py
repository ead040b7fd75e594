"""Workload 1: what a statement costs before and around the database.

- build + compile: the seed's single-statement claim written fresh each time, as user code
  writes it, then compiled to SQL text and parameters in placeholder order. SQLAlchemy Core
  builds the same statement and compiles it through its statement cache (the path
  `Connection.execute` takes: cache key, cache lookup, parameter extraction). The floor is the
  hand-written SQL: a constant string and a tuple of values.
- prebuilt, executed: one statement built once and executed again and again on PostgreSQL
  through psycopg (a primary-key lookup of a whole row, and a one-row update). The floor is
  psycopg running the same SQL text (`conn.execute`, as its documentation writes it);
  SQLAlchemy Core runs on the same psycopg driver, in autocommit like the other two. Each is
  timed twice: wall-clock time, which includes the server's work and this shared machine's
  noise, and this process's CPU time, which is what the library itself adds.

(bench_build.py, beside this file, measures what the compiled-shape cache alone saves.)

    .venv/bin/python bench/bench_statements.py [--quick]
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
from _common import PG_URL, Measure, machine, parser, per_op_table, run_rounds
from _models import Outbound, sa_claim, sa_outbound, tempest_claim
from sqlalchemy.dialects import postgresql as sa_pg

from tempest_typed import create_engine, select, sql, update
from tempest_typed.dialects import get_dialect

CLAIM_SQL = (
    'UPDATE "bench_outbound" SET "status" = %s, "attempts" = attempts + 1, '
    '"updated_at" = now() WHERE "id" IN (SELECT "id" FROM "bench_outbound" WHERE '
    '"status" = %s ORDER BY "next_attempt_at" ASC LIMIT 10 FOR UPDATE SKIP LOCKED) '
    'RETURNING "id", "consumer", "idempotency_key", "status", "attempts", '
    '"next_attempt_at", "updated_at"'
)
LOOKUP_SQL = (
    'SELECT "id", "consumer", "idempotency_key", "status", "attempts", "next_attempt_at", '
    '"updated_at" FROM "bench_outbound" WHERE "id" = %s'
)
ACK_SQL = 'UPDATE "bench_outbound" SET "status" = %s, "updated_at" = now() WHERE "id" = %s'


def build_workload(n: int, rounds: int) -> list[tuple[str, list[Measure], str]]:
    pg = get_dialect("postgresql")
    sa_dialect = sa_pg.psycopg.dialect()  # type: ignore[attr-defined]
    sa_cache: dict[Any, Any] = {}

    def floor() -> None:
        for _ in range(n):
            _ = (CLAIM_SQL, ("sending", "queued"))

    def tempest() -> None:
        for _ in range(n):
            tempest_claim(10).compile(pg)

    def alchemy() -> None:
        for _ in range(n):
            stmt = sa_claim(10)
            compiled, extracted, _, _ = stmt._compile_w_cache(
                sa_dialect, compiled_cache=sa_cache, column_keys=[])
            compiled.construct_params(extracted_parameters=extracted, escape_names=False)

    def tempest_prebuilt() -> None:
        stmt = tempest_claim(10)
        for _ in range(n):
            stmt.compile(pg)

    def alchemy_prebuilt() -> None:
        stmt = sa_claim(10)
        for _ in range(n):
            compiled, extracted, _, _ = stmt._compile_w_cache(
                sa_dialect, compiled_cache=sa_cache, column_keys=[])
            compiled.construct_params(extracted_parameters=extracted, escape_names=False)

    # Every side produces the same statement.
    assert tempest_claim(10).compile(pg).sql == CLAIM_SQL
    fresh = [Measure("raw SQL", n, "statement"), Measure("tempest_typed", n, "statement"),
             Measure("SQLAlchemy Core", n, "statement")]
    pre = [Measure("tempest_typed", n, "statement"), Measure("SQLAlchemy Core", n, "statement")]
    run_rounds([(fresh[0], floor), (fresh[1], tempest), (fresh[2], alchemy),
                (pre[0], tempest_prebuilt), (pre[1], alchemy_prebuilt)], rounds)
    return [("claim: build + compile", fresh, "SQLAlchemy Core"),
            ("claim: compile a prebuilt one", pre, "SQLAlchemy Core")]


def execute_workload(n: int, rounds: int) -> list[tuple[str, list[Measure], str]]:
    engine = create_engine(PG_URL, pool_size=1)
    engine.drop_all(Outbound)
    engine.create_all(Outbound)
    now = datetime.now(UTC)
    ids = [uuid4() for _ in range(100)]
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.cursor().executemany(
            'INSERT INTO "bench_outbound" ("id", "consumer", "status", "attempts", '
            '"next_attempt_at") VALUES (%s, %s, %s, %s, %s)',
            [(i, "bench", "queued", 0, now) for i in ids],
        )
    target = ids[0]

    raw_conn = psycopg.connect(PG_URL, autocommit=True)
    session = engine.session()
    sa_engine = sa.create_engine(PG_URL.replace("postgresql://", "postgresql+psycopg://"),
                                 isolation_level="AUTOCOMMIT", pool_size=1)
    sa_conn = sa_engine.connect()

    t_lookup = select(Outbound).where({"id": target})
    s_lookup = sa.select(sa_outbound).where(sa_outbound.c.id == target)
    t_ack = update(Outbound).set({"status": "sent", "updated_at": sql.now()}).where({"id": target})
    s_ack = (sa.update(sa_outbound).values(status="sent", updated_at=sa.func.now())
             .where(sa_outbound.c.id == target))
    assert t_lookup.compile(engine.dialect).sql == LOOKUP_SQL
    assert t_ack.compile(engine.dialect).sql == ACK_SQL

    def raw_lookup() -> None:
        for _ in range(n):
            raw_conn.execute(LOOKUP_SQL, (target,)).fetchall()

    def tempest_lookup() -> None:
        for _ in range(n):
            session.execute(t_lookup).all()

    def alchemy_lookup() -> None:
        for _ in range(n):
            sa_conn.execute(s_lookup).all()

    def raw_ack() -> None:
        for _ in range(n):
            raw_conn.execute(ACK_SQL, ("sent", target)).rowcount  # noqa: B018

    def tempest_ack() -> None:
        for _ in range(n):
            session.execute(t_ack).rows_affected()

    def alchemy_ack() -> None:
        for _ in range(n):
            sa_conn.execute(s_ack).rowcount  # noqa: B018

    sides = ("raw psycopg", "tempest_typed", "SQLAlchemy Core")
    groups: list[tuple[str, list[Measure], str]] = []
    timed: list[tuple[Measure, Callable[[], float | None]]] = []
    for label, fns in (("select by id", (raw_lookup, tempest_lookup, alchemy_lookup)),
                       ("update by id", (raw_ack, tempest_ack, alchemy_ack))):
        wall = [Measure(name, n, "statement") for name in sides]
        cpu = [Measure(name, n, "statement") for name in sides]
        groups.append((f"prebuilt {label}: wall", wall, "raw psycopg"))
        groups.append((f"prebuilt {label}: client CPU", cpu, "raw psycopg"))
        for w, fn in zip(wall, fns, strict=True):
            timed.append((w, fn))
        for c, fn in zip(cpu, fns, strict=True):
            timed.append((c, _cpu(fn)))
    run_rounds(timed, rounds)
    sa_conn.close()
    sa_engine.dispose()
    session.close()
    raw_conn.close()
    engine.drop_all(Outbound)
    engine.close()
    return groups


def _cpu(fn: Callable[[], None]) -> Callable[[], float]:
    """Run fn and return the CPU time this process spent, leaving out the server's work."""
    def run() -> float:
        started = time.process_time()
        fn()
        return time.process_time() - started
    return run


def main() -> None:
    args = parser(__doc__ or "").parse_args()
    rounds = args.rounds or (3 if args.quick else 9)
    n_build = 500 if args.quick else 3000
    n_exec = 300 if args.quick else 2000
    started = time.perf_counter()
    groups = build_workload(n_build, rounds)
    groups += execute_workload(n_exec, rounds)
    print(per_op_table(
        f"Workload 1: statement cost ({machine()}; {rounds} rounds of {n_build} builds / "
        f"{n_exec} executions per side, medians over rounds)", groups))
    print(f"\ntook {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
