"""Workload 2: queue throughput on PostgreSQL, the seed's worker.

N messages are queued; 4 worker processes claim batches of 10 with the seed's single-statement
claim (UPDATE ... WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED) RETURNING) until the queue
is empty, and acknowledge what they claimed, either one message at a time (an UPDATE per id,
as the seed's drain() does) or the whole batch at once (one UPDATE ... WHERE id IN (...)).

Every side runs the same SQL text: the raw psycopg side runs it hand-written; tempest_typed
and SQLAlchemy Core build each statement in the loop, as user code writes it, and run it on
psycopg in autocommit. The workers are processes, not threads: with 2 cores, threads would
serialize the Python side of all workers on one GIL, and the benchmark would measure that
rather than the library. The timer runs from the moment all 4 workers are connected and ready
to the moment the last one finds the queue empty.

    .venv/bin/python bench/bench_queue.py [--quick] [--messages N]
"""

from __future__ import annotations

import multiprocessing as mp
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import PG_URL, Measure, machine, parser, throughput_table
from _models import Outbound, sa_claim, sa_outbound, tempest_claim
from _queue_common import count, create_table, drop_table, fill

WORKERS = 4
BATCH = 10

CLAIM_SQL = (
    'UPDATE "bench_outbound" SET "status" = %s, "attempts" = attempts + 1, '
    '"updated_at" = now() WHERE "id" IN (SELECT "id" FROM "bench_outbound" WHERE '
    f'"status" = %s ORDER BY "next_attempt_at" ASC LIMIT {BATCH} FOR UPDATE SKIP LOCKED) '
    'RETURNING "id", "consumer", "idempotency_key", "status", "attempts", '
    '"next_attempt_at", "updated_at"'
)
ACK_SQL = 'UPDATE "bench_outbound" SET "status" = %s, "updated_at" = now() WHERE "id" = %s'


def ack_batch_sql(n: int) -> str:
    """The batch ack for n ids, as the builders spell it."""
    marks = ", ".join(["%s"] * n)
    return f'UPDATE "bench_outbound" SET "status" = %s, "updated_at" = now() WHERE "id" IN ({marks})'


Worker = Callable[[bool], int]


def raw_worker() -> Worker:
    import psycopg

    conn = psycopg.connect(PG_URL, autocommit=True)

    def drain(batch_ack: bool) -> int:
        done = 0
        while True:
            rows = conn.execute(CLAIM_SQL, ("sending", "queued")).fetchall()
            if not rows:
                return done
            ids = [r[0] for r in rows]
            if batch_ack:
                conn.execute(ack_batch_sql(len(ids)), ("sent", *ids))
            else:
                for i in ids:
                    conn.execute(ACK_SQL, ("sent", i))
            done += len(ids)

    return drain


def tempest_worker() -> Worker:
    from tempest_typed import create_engine, sql, update

    engine = create_engine(PG_URL, pool_size=1)
    session = engine.session()

    def drain(batch_ack: bool) -> int:
        done = 0
        while True:
            claimed = session.execute(tempest_claim(BATCH)).all()
            if not claimed:
                return done
            ids = [m.id for m in claimed]
            if batch_ack:
                session.execute(
                    update(Outbound).set({"status": "sent", "updated_at": sql.now()})
                    .where({"id": {"in": ids}})
                ).rows_affected()
            else:
                for i in ids:
                    session.execute(
                        update(Outbound).set({"status": "sent", "updated_at": sql.now()})
                        .where({"id": i})
                    ).rows_affected()
            done += len(ids)

    return drain


def alchemy_worker() -> Worker:
    import sqlalchemy as sa

    engine = sa.create_engine(PG_URL.replace("postgresql://", "postgresql+psycopg://"),
                              isolation_level="AUTOCOMMIT", pool_size=1)
    conn = engine.connect()
    t = sa_outbound

    def drain(batch_ack: bool) -> int:
        done = 0
        while True:
            claimed = conn.execute(sa_claim(BATCH)).all()
            if not claimed:
                return done
            ids = [r.id for r in claimed]
            if batch_ack:
                conn.execute(sa.update(t).values(status="sent", updated_at=sa.func.now())
                             .where(t.c.id.in_(ids)))
            else:
                for i in ids:
                    conn.execute(sa.update(t).values(status="sent", updated_at=sa.func.now())
                                 .where(t.c.id == i))
            done += len(ids)

    return drain


SIDES: dict[str, Callable[[], Worker]] = {
    "raw psycopg": raw_worker,
    "tempest_typed": tempest_worker,
    "SQLAlchemy Core": alchemy_worker,
}


def _child(side: str, batch_ack: bool, barrier: Any, out: Any) -> None:
    drain = SIDES[side]()
    barrier.wait()
    out.put(drain(batch_ack))


def run_once(side: str, batch_ack: bool, messages: int) -> float:
    """Fill the queue, drain it with the workers, return the seconds the drain took."""
    fill(messages)
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(WORKERS + 1)
    out = ctx.Queue()
    procs = [ctx.Process(target=_child, args=(side, batch_ack, barrier, out))
             for _ in range(WORKERS)]
    for p in procs:
        p.start()
    barrier.wait()
    started = time.perf_counter()
    done = sum(out.get() for _ in procs)
    elapsed = time.perf_counter() - started
    for p in procs:
        p.join()
    sent = count("sent")
    assert done == messages == sent, (side, done, messages, sent)
    return elapsed


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--messages", type=int, default=None)
    args = p.parse_args()
    messages = args.messages or (4000 if args.quick else 20000)
    rounds = args.rounds or (2 if args.quick else 3)
    create_table()
    began = time.perf_counter()
    groups = []
    for batch_ack, label in ((False, "claim 10, ack one by one"), (True, "claim 10, ack the batch")):
        measures = {name: Measure(name, messages, "message") for name in SIDES}
        for r in range(rounds + 1):  # the first round warms the server and is not counted
            for name in SIDES:
                seconds = run_once(name, batch_ack, messages)
                if r:
                    measures[name].samples.append(seconds)
        groups.append((label, list(measures.values()), "raw psycopg"))
    drop_table()
    print(throughput_table(
        f"Workload 2: queue throughput, PostgreSQL, {WORKERS} worker processes, {messages:,} "
        f"messages ({machine()}; {rounds} rounds per side after a warm-up, interleaved)",
        groups))
    print(f"\ntook {time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    main()
