"""Workload 7: the asyncio queue (`AsyncQueue`) on PostgreSQL: the claim + ack loop against
the blocking `Queue` on threads and the raw async driver, and enqueue-to-handler latency with
LISTEN/NOTIFY against polling.

Table 1, the claim + ack loop, every side in this one process, in steady state:

1. Preparation, outside the clock, the same for every side: a fresh table made by
   `Queue.create_table()` (the indexes and the NOTIFY triggers), a backlog of messages due in
   order written by one `INSERT ... SELECT` (the rows `enqueue_many()` writes), then
   `VACUUM ANALYZE` of the table.
2. Warm-up: the workers start; once every worker has acked a message, WARMUP seconds more
   are not counted.
3. The window: the messages acked during the WINDOW seconds that follow, divided by the
   window's length. The backlog never runs dry before the window ends (the script checks it).
4. The workers stop, the table is dropped (`Queue.drop_table()`, which also removes the
   trigger functions).

The sides, 4 workers each, claiming batches of 10:

- floor: raw psycopg, `psycopg.AsyncConnection` in autocommit, 4 asyncio tasks with a
  connection each, running the SQL text that the queue sends on PostgreSQL, written out below
  (the script checks it against what the library logs): the sweep read of exhausted expired
  leases that every `claim()` runs first, the one-statement claim, then the fenced acks.
- `AsyncQueue`: one `create_async_engine` AsyncEngine (pool of 4), 4 asyncio tasks looping
  `leases = await q.claim(10)`, then `await q.ack(lease)` for each.
- `Queue` threads: one `create_engine` Engine (pool of 4), 4 threads doing the same with
  `Queue`.

"ack each" sends one fenced UPDATE per message (what `ack()` does); "grouped ack" sends one
UPDATE per claim for the whole batch (what the worker loop does: `_ack_all_op`, one statement
per lease token; the claim + grouped-ack sides call that internal operation through `_run`, as
the loop does). The grouped group also runs the worker loops themselves, with a no-op handler
counted when it runs: 4 `AsyncQueue.run(noop, batch=10)` tasks on one AsyncEngine, and 4
threads each in `Queue.run(noop, batch=10)` on one Engine; both sweep once a second
(`sweep_interval`), not before every claim as the other sides do.

Table 2, enqueue-to-handler latency: one `AsyncQueue.run(handler, poll_interval=1.0)` worker
on its own AsyncEngine, on a table made by `await q.create_table()` (so with the NOTIFY
trigger), with `listen=True` (the default on PostgreSQL: an idle worker waits on LISTEN) and
with `listen=False` (it polls every second). A producer on a second AsyncEngine in the same
event loop enqueues one message at a time, 20 to 100 ms apart (the same random intervals for
both sides), each payload carrying the `time.monotonic()` taken just before `enqueue()`; the
handler records `time.monotonic()` minus that stamp. A few messages before the counted ones
warm the connections up; each round uses a fresh table, dropped at its end; rounds alternate
the two sides.

Rounds are interleaved (every side once per round); the first round of table 1 is a warm-up.
Every commit waits for its WAL flush (PostgreSQL's default), which bounds the "ack each"
loop on a slow disk; `--no-sync-commit` runs every side's sessions with
`synchronous_commit=off`, so that the client's cost shows. `--only throughput|latency` runs
one table.

    BENCH_PG_URL=postgresql://... .venv/bin/python bench/bench_async_queue.py [--quick]
        [--no-sync-commit] [--only throughput|latency] [--rounds N]
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import statistics
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import uuid4

sys.path.insert(0, str(Path(__file__).parent))

import psycopg
from _common import PG_URL, Measure, machine, parser, throughput_table

from tempest_typed import create_async_engine, create_engine
from tempest_typed.queue import AsyncQueue, Lease, Queue, message_model

WORKERS = 4
BATCH = 10
WARMUP = 2.0
WINDOW = 5.0
TABLE = "bench_aq"
CONSUMER = "bench"
LEASE_SECONDS = 30.0
#: the server, for every side (--no-sync-commit adds synchronous_commit=off to it)
URL = PG_URL

# -- the SQL the queue sends on PostgreSQL, hand-written (checked by check_sql()) ------------

SWEEP_SQL = (
    f'SELECT "id" FROM "{TABLE}" WHERE "consumer" = %s AND "status" = %s AND '
    '"next_attempt_at" <= now() AND "attempts" >= max_attempts'
)
#: the queue's claim: the due rows locked and leased in one UPDATE ... FROM, each returned
#: with the due time it was picked by (the leases are put in that order)
CLAIM_SQL = (
    f'UPDATE "{TABLE}" SET "status" = %s, "lease_token" = %s, "next_attempt_at" = '
    "(now() + CAST(%s AS double precision) * interval '1 second'), \"updated_at\" = now(), "
    f'"attempts" = attempts + 1 FROM (SELECT "id", "next_attempt_at" FROM "{TABLE}" WHERE '
    '"consumer" = %s AND "next_attempt_at" <= now() AND "status" IN (%s, %s) AND '
    f'"attempts" < max_attempts ORDER BY "next_attempt_at" ASC NULLS FIRST LIMIT {BATCH} '
    f'FOR UPDATE SKIP LOCKED) AS "picked" WHERE "{TABLE}"."id" = "picked"."id" RETURNING '
    + ", ".join(f'"{TABLE}"."{c}"' for c in ("id", "lease_token", "payload",
                                             "idempotency_key", "attempts", "max_attempts",
                                             "next_attempt_at"))
    + ', "picked"."next_attempt_at" AS "picked_next_attempt_at"'
)
ACK_SQL = (
    f'UPDATE "{TABLE}" SET "status" = %s, "next_attempt_at" = %s, "lease_token" = %s, '
    '"updated_at" = now() WHERE "id" = %s AND "lease_token" = %s AND "status" IN (%s, %s)'
)


def ack_all_sql(n: int) -> str:
    """The worker loop's grouped ack of n leases of one claim (one lease token)."""
    marks = ", ".join(["%s"] * n)
    return (
        f'UPDATE "{TABLE}" SET "status" = %s, "next_attempt_at" = %s, "lease_token" = %s, '
        f'"updated_at" = now() WHERE "id" IN ({marks}) AND "lease_token" = %s AND '
        '"status" IN (%s, %s)'
    )


SWEEP_PARAMS = (CONSUMER, "sending")


def claim_params(token: Any) -> tuple[object, ...]:
    return ("sending", token, LEASE_SECONDS, CONSUMER, "queued", "sending")


ACK_TAIL = ("sending", "failed")


# -- preparation ------------------------------------------------------------------------------

def _model() -> Any:
    return message_model(TABLE)


def prepare(backlog: int) -> None:
    """A fresh table with its indexes and triggers, a backlog due in order, statistics."""
    engine = create_engine(URL, pool_size=1)
    try:
        queue = Queue(engine, CONSUMER, model=_model())
        queue.drop_table()
        queue.create_table()
    finally:
        engine.close()
    with psycopg.connect(URL, autocommit=True) as conn:
        conn.execute(f"""INSERT INTO "{TABLE}" (id, consumer, payload, status, attempts,
                 max_attempts, next_attempt_at, created_at, updated_at)
             SELECT gen_random_uuid(), '{CONSUMER}', jsonb_build_object('n', i), 'queued', 0,
                 5, now() - interval '1 hour' + i * interval '1 microsecond', now(), now()
             FROM generate_series(1, {backlog}) AS i""")
        conn.execute(f'VACUUM ANALYZE "{TABLE}"')


def queued_left() -> int:
    with psycopg.connect(URL, autocommit=True) as conn:
        row = conn.execute(f'SELECT count(*) FROM "{TABLE}" WHERE status = %s',
                           ("queued",)).fetchone()
    assert row is not None
    return int(row[0])


def drop_table() -> None:
    """Drop the table and the trigger functions (Queue.drop_table())."""
    engine = create_engine(URL, pool_size=1)
    try:
        Queue(engine, CONSUMER, model=_model()).drop_table()
    finally:
        engine.close()


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.sql: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if isinstance(record.args, tuple) and record.args:
            self.sql.append(str(record.args[0]))


def check_sql() -> None:
    """The floor's SQL is the text the queue sends: claim, ack and grouped ack, logged."""
    prepare(2 * BATCH)

    async def probe() -> list[str]:
        engine = create_async_engine(URL, pool_size=1)
        queue = AsyncQueue(engine, CONSUMER, model=_model())
        await engine.execute_sql("SELECT 1")
        log = logging.getLogger("tempest_typed.sql")
        capture, level = _Capture(), log.level
        log.addHandler(capture)
        log.setLevel(logging.INFO)
        try:
            leases = await queue.claim(BATCH)
            await queue.ack(leases[0])
            await queue._run(lambda: queue._ack_all_op(leases[1:]))
        finally:
            log.removeHandler(capture)
            log.setLevel(level)
            await engine.dispose()
        return capture.sql

    try:
        got = asyncio.run(probe())
    finally:
        drop_table()
    want = [SWEEP_SQL, CLAIM_SQL, ACK_SQL, ack_all_sql(BATCH - 1)]
    if got != want:
        raise SystemExit("the hand-written SQL is not what the queue sends:\n"
                         + "\n".join(f"  sent:    {g}\n  written: {w}"
                                     for g, w in zip(got, want, strict=False) if g != w))

# -- the sides of table 1 ---------------------------------------------------------------------

#: a side's workers: started on entering, stopped on leaving; they add to counts[worker]
AsyncSide = Callable[[list[int]], contextlib.AbstractAsyncContextManager[None]]
ThreadSide = Callable[[list[int]], contextlib.AbstractContextManager[None]]


@contextlib.asynccontextmanager
async def _tasks(counts: list[int], loop: Callable[[int, list[bool]], Any]) -> AsyncIterator[None]:
    stop = [False]
    tasks = [asyncio.create_task(loop(i, stop)) for i in range(WORKERS)]
    try:
        yield
    finally:
        stop[0] = True
        await asyncio.gather(*tasks)


def floor_side(grouped: bool) -> AsyncSide:
    @contextlib.asynccontextmanager
    async def side(counts: list[int]) -> AsyncIterator[None]:
        conns = [await psycopg.AsyncConnection.connect(URL, autocommit=True)
                 for _ in range(WORKERS)]

        async def loop(i: int, stop: list[bool]) -> None:
            conn = conns[i]
            while not stop[0]:
                await (await conn.execute(SWEEP_SQL, SWEEP_PARAMS)).fetchall()
                token = uuid4()
                rows = await (await conn.execute(CLAIM_SQL, claim_params(token))).fetchall()
                ids = [row[0] for row in rows]
                if grouped:
                    if ids:
                        cur = await conn.execute(ack_all_sql(len(ids)),
                                                 ("sent", None, None, *ids, token, *ACK_TAIL))
                        counts[i] += cur.rowcount
                    continue
                for row_id in ids:
                    cur = await conn.execute(ACK_SQL, ("sent", None, None, row_id, token,
                                                       *ACK_TAIL))
                    counts[i] += cur.rowcount == 1

        try:
            async with _tasks(counts, loop):
                yield
        finally:
            for conn in conns:
                await conn.close()

    return side


def async_queue_side(grouped: bool) -> AsyncSide:
    @contextlib.asynccontextmanager
    async def side(counts: list[int]) -> AsyncIterator[None]:
        engine = create_async_engine(URL, pool_size=WORKERS)
        queue = AsyncQueue(engine, CONSUMER, model=_model())

        async def loop(i: int, stop: list[bool]) -> None:
            while not stop[0]:
                leases = await queue.claim(BATCH)
                if grouped:
                    if leases:
                        counts[i] += await queue._run(lambda held=leases: queue._ack_all_op(held))
                    continue
                for lease in leases:
                    counts[i] += await queue.ack(lease)

        try:
            async with _tasks(counts, loop):
                yield
        finally:
            await engine.dispose()

    return side


@contextlib.asynccontextmanager
async def async_run_side(counts: list[int]) -> AsyncIterator[None]:
    engine = create_async_engine(URL, pool_size=WORKERS + 1)
    queues = [AsyncQueue(engine, CONSUMER, model=_model()) for _ in range(WORKERS)]

    def handler(i: int) -> Callable[[Lease], Any]:
        async def noop(lease: Lease) -> None:
            counts[i] += 1
        return noop

    tasks = [asyncio.create_task(q.run(handler(i), batch=BATCH, poll_interval=0.05))
             for i, q in enumerate(queues)]
    try:
        yield
    finally:
        for q in queues:
            q.stop()
        await asyncio.gather(*tasks)
        await engine.dispose()


@contextlib.contextmanager
def _threads(counts: list[int], loop: Callable[[int, threading.Event], None],
             stop_all: Callable[[], None] | None = None) -> Iterator[None]:
    stop = threading.Event()
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            loop(i, stop)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(WORKERS)]
    for t in threads:
        t.start()
    try:
        yield
    finally:
        stop.set()
        if stop_all is not None:
            stop_all()
        for t in threads:
            t.join()
    if errors:
        raise errors[0]


def queue_threads_side(grouped: bool) -> ThreadSide:
    @contextlib.contextmanager
    def side(counts: list[int]) -> Iterator[None]:
        engine = create_engine(URL, pool_size=WORKERS)
        queue = Queue(engine, CONSUMER, model=_model())

        def loop(i: int, stop: threading.Event) -> None:
            while not stop.is_set():
                leases = queue.claim(BATCH)
                if grouped:
                    if leases:
                        counts[i] += queue._run(lambda held=leases: queue._ack_all_op(held))
                    continue
                for lease in leases:
                    counts[i] += queue.ack(lease)

        try:
            with _threads(counts, loop):
                yield
        finally:
            engine.close()

    return side


@contextlib.contextmanager
def queue_run_side(counts: list[int]) -> Iterator[None]:
    engine = create_engine(URL, pool_size=2 * WORKERS)
    queues = [Queue(engine, CONSUMER, model=_model()) for _ in range(WORKERS)]

    def loop(i: int, stop: threading.Event) -> None:
        def noop(lease: Lease) -> None:
            counts[i] += 1
        queues[i].run(noop, batch=BATCH, poll_interval=0.05, install_signal_handlers=False)

    def stop_all() -> None:
        for q in queues:
            q.stop()

    try:
        with _threads(counts, loop, stop_all):
            yield
    finally:
        engine.close()


@dataclass
class Side:
    name: str
    #: an AsyncSide when is_async, else a ThreadSide
    workers: Callable[[list[int]], Any]
    is_async: bool
    measure: Measure = field(init=False)


def _started(counts: list[int], began: float) -> bool:
    if all(counts):
        return True
    if time.perf_counter() - began > 60:
        raise SystemExit(f"a worker acked nothing in 60 s: {counts}")
    return False


async def _async_window(side: Side, scale: float) -> float:
    counts = [0] * WORKERS
    async with side.workers(counts):
        began = time.perf_counter()
        while not _started(counts, began):
            await asyncio.sleep(0.05)
        await asyncio.sleep(WARMUP * scale)
        first, started = sum(counts), time.perf_counter()
        await asyncio.sleep(WINDOW * scale)
        last, ended = sum(counts), time.perf_counter()
    return (last - first) / (ended - started)


def _thread_window(side: Side, scale: float) -> float:
    counts = [0] * WORKERS
    with side.workers(counts):
        began = time.perf_counter()
        while not _started(counts, began):
            time.sleep(0.05)
        time.sleep(WARMUP * scale)
        first, started = sum(counts), time.perf_counter()
        time.sleep(WINDOW * scale)
        last, ended = sum(counts), time.perf_counter()
    return (last - first) / (ended - started)


def run_once(side: Side, backlog: int, scale: float) -> float:
    """Prepare a fresh table, run the side's workers, return the window's acks a second."""
    prepare(backlog)
    try:
        rate = (asyncio.run(_async_window(side, scale)) if side.is_async
                else _thread_window(side, scale))
        if queued_left() == 0:
            raise SystemExit(f"{side.name}: the backlog of {backlog} ran dry; raise it")
    finally:
        drop_table()
    return rate


GROUPS: list[tuple[str, int, list[Side]]] = [
    ("claim 10, ack each", 60_000, [
        Side("raw psycopg async", floor_side(False), True),
        Side("AsyncQueue 4 tasks", async_queue_side(False), True),
        Side("Queue 4 threads", queue_threads_side(False), False),
    ]),
    ("claim 10, grouped ack", 150_000, [
        Side("raw psycopg async", floor_side(True), True),
        Side("AsyncQueue 4 tasks", async_queue_side(True), True),
        Side("Queue 4 threads", queue_threads_side(True), False),
        Side("AsyncQueue.run x4", async_run_side, True),
        Side("Queue.run x4 threads", queue_run_side, False),
    ]),
]


SYNC_NOTE = {False: "", True: " (synchronous_commit=off)"}


def throughput(rounds: int, scale: float) -> str:
    for _, _, sides in GROUPS:
        for side in sides:
            side.measure = Measure(side.name, 1, "message")
    for r in range(rounds + 1):  # the first round is a warm-up
        for label, backlog, sides in GROUPS:
            for side in sides:
                rate = run_once(side, int(backlog * scale), scale)
                print(f"  round {r}{' (warm-up)' if not r else ''}: {label:<22} "
                      f"{side.name:<22} {rate:>9,.0f} messages/s", flush=True)
                if r:
                    side.measure.samples.append(1.0 / rate)
    return throughput_table(
        f"Workload 7a: claim + ack loop, PostgreSQL{SYNC_NOTE[URL != PG_URL]}, {WORKERS} "
        f"workers in one process, "
        f"{WINDOW * scale:g} s window after {WARMUP * scale:g} s warm-up ({machine()}; "
        f"{rounds} rounds per side after a warm-up round, interleaved)",
        [(label, [s.measure for s in sides], sides[0].name) for label, _, sides in GROUPS])


# -- table 2: enqueue-to-handler latency ------------------------------------------------------

async def latency_round(listen: bool, gaps: list[float],
                        warm: int) -> tuple[list[float], list[float]]:
    """One worker and one producer on a fresh table: each counted message's latency, and
    each counted enqueue()'s own time (seconds)."""
    model = _model()
    worker_engine = create_async_engine(URL, pool_size=2)
    producer_engine = create_async_engine(URL, pool_size=1)
    worker = AsyncQueue(worker_engine, CONSUMER, model=model)
    producer = AsyncQueue(producer_engine, CONSUMER, model=model)
    latencies: list[float] = []
    enqueues: list[float] = []
    seen = 0
    expected = warm + len(gaps)
    all_in = asyncio.Event()

    async def handler(lease: Lease) -> None:
        nonlocal seen
        arrived = time.monotonic()
        if lease.payload["counted"]:
            latencies.append(arrived - lease.payload["sent"])
        seen += 1
        if seen == expected:
            all_in.set()

    task: asyncio.Task[Any] | None = None
    try:
        await worker.drop_table()
        await worker.create_table()
        task = asyncio.create_task(worker.run(handler, poll_interval=1.0, listen=listen))
        for _ in range(warm):  # connections open, the worker gone idle (listening or polling)
            await producer.enqueue({"sent": time.monotonic(), "counted": False})
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.5)
        for gap in gaps:
            await asyncio.sleep(gap)
            sent = time.monotonic()
            await producer.enqueue({"sent": sent, "counted": True})
            enqueues.append(time.monotonic() - sent)
        async with asyncio.timeout(30):
            await all_in.wait()
    finally:
        if task is not None:
            worker.stop()
            await task
        try:
            await worker.drop_table()
        finally:
            await worker_engine.dispose()
            await producer_engine.dispose()
    return latencies, enqueues


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f} ms"


def latency(rounds: int, per_round: int) -> str:
    sides = {"LISTEN/NOTIFY": True, "polling (1 s)": False}
    got: dict[str, list[float]] = {name: [] for name in sides}
    enq: dict[str, list[float]] = {name: [] for name in sides}
    rng = random.Random(7)
    for r in range(rounds):
        gaps = [rng.uniform(0.020, 0.100) for _ in range(per_round)]
        for name, listen in sides.items():
            lat, took = asyncio.run(latency_round(listen, gaps, warm=5))
            got[name] += lat
            enq[name] += took
            print(f"  latency round {r}: {name:<14} p50 {_ms(statistics.median(lat))}",
                  flush=True)
    head = (f"{'side':<16} {'messages':>9} {'p50':>11} {'p90':>11} {'p99':>11} {'max':>11} "
            f"{'p50 ratio':>10} {'enqueue() p50':>14}")
    base = statistics.median(got["LISTEN/NOTIFY"])
    lines = [
        f"Workload 7b: enqueue-to-handler latency, PostgreSQL, one AsyncQueue.run() worker "
        f"(poll_interval=1.0), one message at a time 20-100 ms apart ({machine()}; "
        f"{rounds} rounds of {per_round} per side, interleaved)", "", head, "-" * len(head)]
    for name, lat in got.items():
        cuts = statistics.quantiles(lat, n=100, method="inclusive")
        p50 = statistics.median(lat)
        lines.append(f"{name:<16} {len(lat):>9} {_ms(p50):>11} {_ms(cuts[89]):>11} "
                     f"{_ms(cuts[98]):>11} {_ms(max(lat)):>11} {p50 / base:>9.1f}x "
                     f"{_ms(statistics.median(enq[name])):>14}")
    lines += ["", "latency = handler start - the monotonic stamp taken before enqueue() (so it "
              "includes the enqueue's own commit, its p50 in the last column); p50 ratio = "
              "this side's p50 / LISTEN/NOTIFY's (lower is faster)"]
    return "\n".join(lines)


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--only", choices=["throughput", "latency"])
    p.add_argument("--no-sync-commit", action="store_true",
                   help="every side's sessions with synchronous_commit=off (no WAL flush "
                        "wait per commit), to see the client's cost rather than the disk's")
    args = p.parse_args()
    if args.no_sync_commit:
        global URL
        URL = f"{PG_URL}{'&' if '?' in PG_URL else '?'}options=-csynchronous_commit%3Doff"

    scale = 0.4 if args.quick else 1.0
    rounds = args.rounds or (1 if args.quick else 3)
    began = time.perf_counter()
    tables = []
    try:
        check_sql()
        if args.only != "latency":
            tables.append(throughput(rounds, scale))
        if args.only != "throughput":
            tables.append(latency(rounds, (50 if args.quick else 200) // rounds))
    finally:
        drop_table()  # whatever a failure left behind
    for table in tables:
        print()
        print(table)
    print(f"\ntook {time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    main()
