"""Workload 5: the queue module beside pgqueuer and procrastinate, in steady state.

Every side gets the same preparation, then 4 worker processes work a backlog that does not
run dry, and the rate is taken over a window in the middle of the run:

1. Preparation, outside the clock: the library's schema as its own installer makes it (the
   tables and the indexes its documentation ships: `Queue.create_table()`, pgqueuer's
   `install()`, procrastinate's `apply_schema()`), a backlog of jobs, then `VACUUM ANALYZE`
   of every table of that library, so that each planner has statistics.
2. The workers start (fork) and wait on a barrier with their connections open.
3. Warm-up: once every worker has run its first job, the workers run WARMUP seconds more,
   not counted.
4. The window: each worker counts the jobs its handler ran; the rate is the jobs counted
   during the WINDOW seconds that follow, divided by the window's length. The backlog is
   sized so that it is never empty before the window ends (the script checks it), so neither
   start-up nor a drain's end is in the figure.
5. The workers are killed (SIGKILL: how a library stops is not measured) and the library's
   objects dropped.

Each side runs the way its documentation runs a worker, jobs being no-ops:

- pgbench (the C client, the floor): the seed's one-statement claim (UPDATE ... WHERE id IN
  (SELECT ... ORDER BY next_attempt_at NULLS FIRST, as the due index is built, LIMIT B FOR UPDATE SKIP
  LOCKED) RETURNING the lease's
  columns) then the batch ack fenced by the lease token (UPDATE ... WHERE id = ANY(ids) AND
  lease_token = token), 4 clients, prepared statements, on the module's own table and
  indexes; its rate is the mean of its per-second progress reports after the warm-up, times B.
- raw psycopg: the same two statements, hand-written, one connection in autocommit per worker.

- tempest_typed.queue: `Queue.run(handler, batch=B)` (heartbeats, grouped acks, the clean-
  stop machinery, all on; default 30 s lease), on psycopg; B = 10 and 100.
- pgqueuer: `QueueManager.run(batch_size=B)`, continuous mode, on a psycopg async
  connection; B = 10 (its default) and 100.
- procrastinate: `App.run_worker(concurrency=1)` (its default) on its psycopg connector.

Rounds are interleaved (every side once per round); the first round is a warm-up round.

    .venv/bin/pip install -e '.[bench]'   # pgqueuer and procrastinate
    BENCH_PG_URL=postgresql://... .venv/bin/python bench/bench_queues.py [--quick]
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing as mp
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import psycopg
from _common import PG_URL, Measure, machine, parser, throughput_table

WORKERS = 4
WARMUP = 2.0
WINDOW = 5.0
TQ_TABLE = "bench_tq"
PROCRASTINATE_SCHEMA = "bench_procrastinate"


def _sql(*statements: str) -> None:
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)


def _vacuum_analyze(like: str, schema: str = "public") -> None:
    """VACUUM ANALYZE every table of a library (its name pattern, in its schema)."""
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        tables = conn.execute(
            "SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) FROM pg_tables "
            "WHERE schemaname = %s AND tablename LIKE %s", (schema, like)).fetchall()
        for (table,) in tables:
            conn.execute(f"VACUUM ANALYZE {table}")


# -- tempest_typed.queue ----------------------------------------------------------------------

def tempest_setup(n: int) -> None:
    from tempest_typed import create_engine
    from tempest_typed.queue import Queue, message_model

    engine = create_engine(PG_URL, pool_size=1)
    model = message_model(TQ_TABLE)
    engine.drop_all(model)
    Queue(engine, "bench", model=model).create_table()
    engine.close()
    # The backlog in one INSERT ... SELECT (the rows enqueue_many writes, due in order).
    _sql(f"""INSERT INTO "{TQ_TABLE}" (id, consumer, payload, status, attempts, max_attempts,
                 next_attempt_at, created_at, updated_at)
             SELECT gen_random_uuid(), 'bench', jsonb_build_object('n', i), 'queued', 0, 5,
                 now() - interval '1 hour' + i * interval '1 microsecond', now(), now()
             FROM generate_series(1, {n}) AS i""")
    _vacuum_analyze(TQ_TABLE)


def tempest_worker(batch: int) -> Callable[[Any], None]:
    def work(counter: Any) -> None:
        from tempest_typed import create_engine
        from tempest_typed.queue import Queue, message_model

        engine = create_engine(PG_URL, pool_size=2)
        queue = Queue(engine, "bench", model=message_model(TQ_TABLE))
        engine.execute_sql("SELECT 1")  # connected before the barrier

        def noop(lease: Any) -> None:
            counter.value += 1

        yield_ready()
        queue.run(noop, batch=batch, poll_interval=0.05)

    return work


def tempest_process_worker(batch: int) -> Callable[[Any], None]:
    """The loop a user writes around process() (one batch with heartbeats per call)."""
    def work(counter: Any) -> None:
        from tempest_typed import create_engine
        from tempest_typed.queue import Queue, message_model

        engine = create_engine(PG_URL, pool_size=2)
        queue = Queue(engine, "bench", model=message_model(TQ_TABLE))
        engine.execute_sql("SELECT 1")

        def noop(lease: Any) -> None:
            counter.value += 1

        yield_ready()
        while True:
            if not queue.process(noop, batch):
                time.sleep(0.05)

    return work


def tempest_teardown() -> None:
    _sql(f'DROP TABLE IF EXISTS "{TQ_TABLE}"')


# -- the floor: the seed's claim + batch ack, from pgbench and from raw psycopg -------------

_LEASE_COLUMNS = ("id, lease_token, payload, idempotency_key, attempts, max_attempts, "
                  "next_attempt_at")


def claim_sql(batch: int, token: str, table: str = TQ_TABLE) -> str:
    """The seed's claim of `batch` messages under the lease token `token` (SQL text)."""
    return (
        f'UPDATE "{table}" SET status = \'sending\', lease_token = {token}, '
        "attempts = attempts + 1, next_attempt_at = now() + interval '30 seconds', "
        f'updated_at = now() WHERE id IN (SELECT id FROM "{table}" WHERE consumer = '
        "'bench' AND next_attempt_at <= now() AND status IN ('queued', 'sending') AND "
        f"attempts < max_attempts ORDER BY next_attempt_at NULLS FIRST LIMIT {batch} FOR UPDATE "
        f"SKIP LOCKED) RETURNING {_LEASE_COLUMNS}")


def ack_sql(ids: str, token: str, table: str = TQ_TABLE) -> str:
    """The seed's batch ack of the ids `ids`, fenced by the lease token `token` (SQL text)."""
    return (f'UPDATE "{table}" SET status = \'sent\', next_attempt_at = NULL, '
            f"lease_token = NULL, updated_at = now() WHERE id = ANY({ids}) AND "
            f"lease_token = {token} AND status IN ('sending', 'failed')")


def pgbench_script(batch: int) -> str:
    """The seed's claim and the fenced batch ack, as a pgbench script."""
    token = "md5(:r::text || '-' || :client_id::text)::uuid"
    return (
        "\\set r random(1, 2000000000)\n"
        f"WITH c AS ({claim_sql(batch, token)}) SELECT array_agg(c.id) AS ids "
        "FROM c\n\\aset\n"
        f"{ack_sql(':ids::uuid[]', token)};\n")


def pgbench_run(batch: int) -> Callable[[Side, float], float]:
    def run(side: Side, scale: float) -> float:
        import subprocess
        import tempfile
        from urllib.parse import urlparse

        side.setup(int(side.backlog * scale))
        url = urlparse(PG_URL)
        warmup, window = WARMUP * scale, WINDOW * scale
        try:
            with tempfile.NamedTemporaryFile("w", suffix=".sql") as script:
                script.write(pgbench_script(batch))
                script.flush()
                out = subprocess.run(
                    ["pgbench", "-n", "-M", "prepared", "-c", str(WORKERS), "-j", str(WORKERS),
                     "-T", str(round(warmup + window + 1)), "-P", "1", "-f", script.name,
                     "-h", url.hostname or "127.0.0.1", "-p", str(url.port or 5432),
                     "-U", url.username or "postgres", (url.path or "/test").lstrip("/")],
                    capture_output=True, text=True, check=True)
        finally:
            side.teardown()
        # progress: 3.0 s, 2011.0 tps, lat 1.9 ms stddev 0.4, 0 failed
        rates = [float(line.split()[3]) for line in out.stderr.splitlines()
                 if line.startswith("progress:") and float(line.split()[1]) > warmup + 1]
        if not rates:
            raise SystemExit(f"pgbench printed no progress after the warm-up:\n{out.stderr}")
        return batch * sum(rates) / len(rates)

    return run


def raw_worker(batch: int) -> Callable[[Any], None]:
    def work(counter: Any) -> None:
        import uuid

        conn = psycopg.connect(PG_URL, autocommit=True)
        claim, ack = claim_sql(batch, "%s"), ack_sql("%s", "%s")
        yield_ready()
        while True:
            token = uuid.uuid4()
            rows = conn.execute(claim, (token,)).fetchall()
            if not rows:
                time.sleep(0.05)
                continue
            for _ in rows:  # the no-op handler
                counter.value += 1
            conn.execute(ack, ([r[0] for r in rows], token))

    return work


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
        for start in range(0, n, 10_000):
            size = min(n, start + 10_000) - start
            await queries.enqueue(["noop"] * size, [None] * size, [0] * size)
        await conn.close()

    asyncio.run(run())
    _vacuum_analyze("pgqueuer%")


def pgqueuer_worker(batch: int) -> Callable[[Any], None]:
    def work(counter: Any) -> None:
        from pgqueuer import QueueManager

        async def run() -> None:
            _conn, queries = await _pgq_queries()
            qm = QueueManager(queries)

            @qm.entrypoint("noop")
            async def noop(job: Any) -> None:
                counter.value += 1

            yield_ready()
            await qm.run(batch_size=batch)

        asyncio.run(run())

    return work


def pgqueuer_teardown() -> None:
    async def run() -> None:
        conn, queries = await _pgq_queries()
        await queries.uninstall()
        await conn.close()

    asyncio.run(run())


# -- procrastinate ----------------------------------------------------------------------------

_COUNTER: Any = None


def _procrastinate_app() -> Any:
    import procrastinate

    # Its own schema (first on the search path), so that dropping it removes every object.
    conninfo = f"{PG_URL}?options=-csearch_path%3D{PROCRASTINATE_SCHEMA}"
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=conninfo))

    @app.task(name="noop")
    def noop() -> None:
        if _COUNTER is not None:
            _COUNTER.value += 1

    return app


def procrastinate_setup(n: int) -> None:
    _sql(f"DROP SCHEMA IF EXISTS {PROCRASTINATE_SCHEMA} CASCADE",
         f"CREATE SCHEMA {PROCRASTINATE_SCHEMA}")
    app = _procrastinate_app()
    with app.open():
        app.schema_manager.apply_schema()
        task = app.tasks["noop"]
        for start in range(0, n, 5000):
            task.batch_defer(*[{} for _ in range(start, min(n, start + 5000))])
    _vacuum_analyze("%", PROCRASTINATE_SCHEMA)


def procrastinate_worker(batch: int) -> Callable[[Any], None]:
    def work(counter: Any) -> None:
        global _COUNTER
        _COUNTER = counter
        app = _procrastinate_app()
        yield_ready()
        app.run_worker(concurrency=1, install_signal_handlers=False)

    return work


def procrastinate_teardown() -> None:
    _sql(f"DROP SCHEMA IF EXISTS {PROCRASTINATE_SCHEMA} CASCADE")


# -- the run ----------------------------------------------------------------------------------

@dataclass
class Side:
    name: str
    setup: Callable[[int], None]
    worker: Callable[[Any], None]
    teardown: Callable[[], None]
    #: the backlog: enough for WARMUP + WINDOW at the fastest rate seen here, with margin
    backlog: int
    #: a side that runs its own client (pgbench) instead of worker processes
    run: Callable[[Side, float], float] | None = None


def _floor_sides(batch: int, backlog: int) -> list[Side]:
    return [
        Side(f"pgbench b={batch}", tempest_setup, raw_worker(batch), tempest_teardown, backlog,
             run=pgbench_run(batch)),
        Side(f"raw psycopg b={batch}", tempest_setup, raw_worker(batch), tempest_teardown,
             backlog),
    ]


SIDES = [
    *_floor_sides(10, 400_000),
    Side("tempest_typed b=10", tempest_setup, tempest_worker(10), tempest_teardown, 300_000),
    Side("tempest process b=10", tempest_setup, tempest_process_worker(10),
         tempest_teardown, 300_000),
    Side("pgqueuer b=10", pgqueuer_setup, pgqueuer_worker(10), pgqueuer_teardown, 150_000),
    *_floor_sides(100, 600_000),
    Side("tempest_typed b=100", tempest_setup, tempest_worker(100), tempest_teardown, 500_000),
    Side("tempest process b=100", tempest_setup, tempest_process_worker(100),
         tempest_teardown, 500_000),
    Side("pgqueuer b=100", pgqueuer_setup, pgqueuer_worker(100), pgqueuer_teardown, 300_000),
]

#: run with --only NAME
EXTRA_SIDES = [
    Side("procrastinate", procrastinate_setup, procrastinate_worker(1),
         procrastinate_teardown, 8_000),
]

_READY: Any = None


def yield_ready() -> None:
    """Called by a worker once it is connected: wait until every worker is."""
    _READY.wait()


def _child(work: Callable[[Any], None], ready: Any, counter: Any) -> None:
    global _READY
    _READY = ready
    logging.getLogger("procrastinate").setLevel(logging.ERROR)
    logging.getLogger("pgqueuer").setLevel(logging.ERROR)
    work(counter)


def run_once(side: Side, scale: float) -> float:
    """Prepare the side, run its workers, return the steady-state rate in jobs a second."""
    if side.run is not None:
        return side.run(side, scale)
    backlog = int(side.backlog * scale)
    side.setup(backlog)
    ctx = mp.get_context("fork")
    ready = ctx.Barrier(WORKERS + 1)
    counters = [ctx.Value("q", 0, lock=False) for _ in range(WORKERS)]
    procs = [ctx.Process(target=_child, args=(side.worker, ready, c), daemon=True)
             for c in counters]
    try:
        for p in procs:
            p.start()
        ready.wait(timeout=120)
        for _ in range(600):  # up to 60 s: until every worker has run a job (start-up done)
            if all(c.value for c in counters):
                break
            time.sleep(0.1)
        time.sleep(WARMUP * scale)
        first, started = sum(c.value for c in counters), time.perf_counter()
        time.sleep(WINDOW * scale)
        last, ended = sum(c.value for c in counters), time.perf_counter()
    finally:
        for p in procs:
            if p.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(p.pid, signal.SIGKILL)
        for p in procs:
            p.join()
        side.teardown()
    if last >= backlog:
        raise SystemExit(f"{side.name}: the backlog of {backlog} ran dry; raise Side.backlog")
    if first == 0:
        raise SystemExit(f"{side.name}: no job ran during the warm-up")
    return (last - first) / (ended - started)


def _groups(measures: list[Measure]) -> list[tuple[str, list[Measure], str]]:
    """One group per batch size, each against its pgbench floor when it ran."""
    groups = []
    for batch in ("b=10", "b=100", ""):
        these = [m for m in measures if m.name.endswith(batch) and
                 (batch or not m.name.endswith(("b=10", "b=100")))]
        if these:
            floor = next((m.name for m in these if m.name.startswith("pgbench")), these[0].name)
            groups.append((f"work a backlog {batch}".strip(), these, floor))
    return groups


def main() -> None:
    logging.getLogger("procrastinate").setLevel(logging.ERROR)
    p = parser(__doc__ or "")
    p.add_argument("--only", choices=[s.name for s in SIDES + EXTRA_SIDES], action="append")
    args = p.parse_args()
    scale = 0.4 if args.quick else 1.0
    rounds = args.rounds or (1 if args.quick else 2)
    sides = [s for s in SIDES + EXTRA_SIDES
             if (s.name in args.only if args.only else s in SIDES)]
    # Measure keeps seconds per round: store 1 job per (1 / rate) seconds.
    measures = {s.name: Measure(s.name, 1, "job") for s in sides}
    began = time.perf_counter()
    for r in range(rounds + 1):  # the first round is a warm-up
        for side in sides:
            rate = run_once(side, scale)
            print(f"  round {r}{' (warm-up)' if not r else ''}: {side.name:<22} "
                  f"{rate:>9,.0f} jobs/s", flush=True)
            if r:
                measures[side.name].samples.append(1.0 / rate)
    print(throughput_table(
        f"Workload 5: job queues in steady state, PostgreSQL, {WORKERS} worker processes, "
        f"no-op jobs, {WINDOW * scale:g} s window after {WARMUP * scale:g} s warm-up "
        f"({machine()}; {rounds} rounds per side after a warm-up round, interleaved)",
        _groups(list(measures.values()))))
    print(f"\ntook {time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    main()
