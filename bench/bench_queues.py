"""Workload 5: the queue module end to end, beside pgqueuer and procrastinate.

Each library queues N jobs (before the clock starts, with its own batch enqueue), then 4 worker
processes drain the queue, each job a no-op, and stop when it is empty. The clock runs from the
moment all 4 workers are ready to the moment the last one stops. Each library runs the way its
documentation runs a worker:

- tempest_typed.queue: `Queue.process(handler, 10)` in a loop (claim a batch of 10 under a
  lease, run the handler, ack each message with its lease token), on psycopg.
- pgqueuer: `QueueManager.run(batch_size=10, mode=drain)` on a psycopg async connection.
- procrastinate: `App.run_worker(wait=False, concurrency=1)` on its psycopg connector, which
  takes one job at a time.

Each library uses its own tables: tempest_typed's `bench_tq`, pgqueuer's schema objects
(installed at the start of each run and uninstalled at its end), procrastinate's in the schema
`bench_procrastinate` (dropped at the end).

    .venv/bin/pip install 'tempest-typed[bench]'   # pgqueuer and procrastinate
    .venv/bin/python bench/bench_queues.py [--quick] [--messages N]
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing as mp
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import psycopg
from _common import PG_URL, Measure, machine, parser, throughput_table

WORKERS = 4
BATCH = 10
TQ_TABLE = "bench_tq"


# -- tempest_typed.queue ----------------------------------------------------------------------

def tempest_setup(n: int) -> None:
    from tempest_typed import create_engine
    from tempest_typed.queue import Message, Queue, message_model

    engine = create_engine(PG_URL, pool_size=1)
    model = message_model(TQ_TABLE)
    engine.drop_all(model)
    queue = Queue(engine, "bench", model=model)
    queue.create_table()
    for start in range(0, n, 5000):
        queue.enqueue_many([Message({"n": i}) for i in range(start, min(n, start + 5000))])
    engine.execute_sql(f'VACUUM ANALYZE "{TQ_TABLE}"')
    engine.close()


def tempest_worker() -> Callable[[], int]:
    from tempest_typed import create_engine
    from tempest_typed.queue import Queue, message_model

    engine = create_engine(PG_URL, pool_size=2)
    queue = Queue(engine, "bench", model=message_model(TQ_TABLE))

    def noop(lease: Any) -> None:
        pass

    def drain() -> int:
        done = 0
        while True:
            got = queue.process(noop, BATCH)
            if not got:
                return done
            done += got

    return drain


def tempest_done() -> int:
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        row = conn.execute(f"SELECT count(*) FROM \"{TQ_TABLE}\" WHERE status = 'sent'").fetchone()
        conn.execute(f'DROP TABLE IF EXISTS "{TQ_TABLE}"')
    return int(row[0]) if row else 0


# -- pgqueuer ---------------------------------------------------------------------------------

async def _pgq_queries() -> tuple[Any, Any]:
    from pgqueuer import Queries

    conn = await psycopg.AsyncConnection.connect(PG_URL, autocommit=True)
    return conn, Queries.from_psycopg_connection(conn)


def pgqueuer_setup(n: int) -> None:
    async def run() -> None:
        conn, queries = await _pgq_queries()
        if await queries.schema_is_installed():
            await queries.uninstall()
        await queries.install()
        for start in range(0, n, 5000):
            size = min(n, start + 5000) - start
            await queries.enqueue(["noop"] * size, [None] * size, [0] * size)
        await conn.close()

    asyncio.run(run())


def pgqueuer_worker() -> Callable[[], int]:
    def drain() -> int:
        from pgqueuer import QueueManager
        from pgqueuer.domain.types import QueueExecutionMode

        done = 0

        async def run() -> None:
            nonlocal done
            conn, queries = await _pgq_queries()
            qm = QueueManager(queries)

            @qm.entrypoint("noop")
            async def noop(job: Any) -> None:
                nonlocal done
                done += 1

            await qm.run(batch_size=BATCH, mode=QueueExecutionMode.drain)
            await conn.close()

        asyncio.run(run())
        return done

    return drain


def pgqueuer_done() -> int:
    async def run() -> int:
        conn, queries = await _pgq_queries()
        cur = await conn.execute("SELECT count(*) FROM pgqueuer")
        row = await cur.fetchone()
        left = int(row[0]) if row else -1
        await queries.uninstall()
        await conn.close()
        return left

    left = asyncio.run(run())
    return -1 if left else 0  # every job processed leaves the pgqueuer table empty


# -- procrastinate ----------------------------------------------------------------------------

PROCRASTINATE_SCHEMA = "bench_procrastinate"


def _procrastinate_app() -> Any:
    import procrastinate

    # Its own schema (first on the search path), so that dropping it removes every object.
    conninfo = f"{PG_URL}?options=-csearch_path%3D{PROCRASTINATE_SCHEMA}"
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=conninfo))

    @app.task(name="noop")
    def noop() -> None:
        pass

    return app


def procrastinate_setup(n: int) -> None:
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {PROCRASTINATE_SCHEMA} CASCADE")
        conn.execute(f"CREATE SCHEMA {PROCRASTINATE_SCHEMA}")
    app = _procrastinate_app()
    with app.open():
        app.schema_manager.apply_schema()
        task = app.tasks["noop"]
        for start in range(0, n, 5000):
            task.batch_defer(*[{} for _ in range(start, min(n, start + 5000))])


def procrastinate_worker() -> Callable[[], int]:
    def drain() -> int:
        app = _procrastinate_app()
        app.run_worker(wait=False, concurrency=1, listen_notify=False,
                       install_signal_handlers=False)
        return 0

    return drain


def procrastinate_done() -> int:
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        row = conn.execute(
            f"SELECT count(*) FROM {PROCRASTINATE_SCHEMA}.procrastinate_jobs "
            "WHERE status = 'succeeded'").fetchone()
        conn.execute(f"DROP SCHEMA IF EXISTS {PROCRASTINATE_SCHEMA} CASCADE")
    return int(row[0]) if row else 0


LIBRARIES: dict[str, tuple[Callable[[int], None], Callable[[], Callable[[], int]],
                           Callable[[], int]]] = {
    "tempest_typed.queue": (tempest_setup, tempest_worker, tempest_done),
    "pgqueuer": (pgqueuer_setup, pgqueuer_worker, pgqueuer_done),
    "procrastinate": (procrastinate_setup, procrastinate_worker, procrastinate_done),
}


def _child(name: str, barrier: Any, out: Any) -> None:
    drain = LIBRARIES[name][1]()
    barrier.wait()
    out.put(drain())


def run_once(name: str, n: int) -> float:
    """Queue n jobs, drain them with the workers, return the seconds the drain took."""
    setup, _, done = LIBRARIES[name]
    setup(n)
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(WORKERS + 1)
    out = ctx.Queue()
    procs = [ctx.Process(target=_child, args=(name, barrier, out)) for _ in range(WORKERS)]
    for p in procs:
        p.start()
    barrier.wait()
    started = time.perf_counter()
    for _ in procs:
        out.get()
    elapsed = time.perf_counter() - started
    for p in procs:
        p.join()
    finished = done()
    assert finished in (n, 0), (name, finished, n)  # 0: the library counts no processed jobs
    return elapsed


def main() -> None:
    # procrastinate warns that its App lives in a __main__ module: true, and harmless here.
    logging.getLogger("procrastinate").setLevel(logging.ERROR)
    p = parser(__doc__ or "")
    p.add_argument("--messages", type=int, default=None)
    p.add_argument("--only", choices=list(LIBRARIES), action="append")
    args = p.parse_args()
    n = args.messages or (2000 if args.quick else 10000)
    rounds = args.rounds or (1 if args.quick else 3)
    names = args.only or list(LIBRARIES)
    measures = {name: Measure(name, n, "job") for name in names}
    began = time.perf_counter()
    for r in range(rounds + 1):  # the first round is a warm-up
        for name in names:
            seconds = run_once(name, n)
            if r:
                measures[name].samples.append(seconds)
    print(throughput_table(
        f"Workload 5: job queues end to end, PostgreSQL, {WORKERS} worker processes, {n:,} "
        f"no-op jobs ({machine()}; {rounds} rounds per library after a warm-up, interleaved)",
        [("drain the queue", list(measures.values()), names[0])]))
    print(f"\ntook {time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    main()
