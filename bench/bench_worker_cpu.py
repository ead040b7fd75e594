"""The worker's client cost: CPU time and context switches a message, one worker, one process.

One `Queue.run(handler, batch=B)` (or a loop of `Queue.process(handler, B)`) works N messages
of a backlog filled by COPY and `VACUUM ANALYZE`d beforehand; the handler counts and stops the
worker at N. Printed: the process's CPU time (user + system, every thread) and its voluntary
context switches, a message and a batch. CPU time is what four workers on two cores take from
the database server; it moves less with the machine's load than a throughput does, and a
context switch is a batch handed from one thread to another (or a wait on the socket).

To compare two versions of the library, run the script once with `PYTHONPATH` pointing at a
checkout of the other one.

    .venv/bin/python bench/bench_worker_cpu.py [--mode run|process] [--messages N] [--batch B]
"""

from __future__ import annotations

import resource
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import uuid4

sys.path.insert(0, str(Path(__file__).parent))

import psycopg
from _common import PG_URL, machine, parser

from tempest_typed import create_engine
from tempest_typed.queue import Queue, message_model

TABLE = "bench_worker_cpu"


def fill(n: int) -> None:
    """n queued messages, due one after another, then statistics."""
    start = datetime.now(UTC) - timedelta(hours=1)
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        with conn.cursor().copy(
            f'COPY "{TABLE}" ("id", "consumer", "status", "attempts", "max_attempts", '
            '"next_attempt_at", "payload") FROM STDIN'
        ) as copy:
            for i in range(n):
                copy.write_row((uuid4(), "bench", "queued", 0, 5,
                                start + timedelta(microseconds=i), "{}"))
        conn.execute(f'VACUUM ANALYZE "{TABLE}"')


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--mode", choices=["run", "process"], default="run")
    p.add_argument("--messages", type=int, default=20_000)
    p.add_argument("--batch", type=int, default=10)
    args = p.parse_args()
    n = 2_000 if args.quick else args.messages
    engine = create_engine(PG_URL, pool_size=2)
    model = message_model(TABLE)
    queue = Queue(engine, "bench", model=model)
    engine.drop_all(model)
    engine.create_all(model)
    try:
        fill(n + 10 * args.batch)  # the last claim finds a full batch too
        done = 0

        def handler(lease: Any) -> None:
            nonlocal done
            done += 1
            if done == n:
                queue.stop()

        before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        if args.mode == "run":
            queue.run(handler, batch=args.batch, poll_interval=0.05)
        else:
            while done < n:
                queue.process(handler, args.batch)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_SELF)
    finally:
        engine.drop_all(model)
        engine.close()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    switches = after.ru_nvcsw - before.ru_nvcsw
    print(f"Worker client cost, Queue.{args.mode}, batch {args.batch}, {done:,} messages "
          f"({machine()})")
    print(f"  CPU {cpu / done * 1e6:.1f} us a message, wall {wall / done * 1e6:.1f} us a "
          f"message, {switches / (done / args.batch):.1f} voluntary context switches a batch")


if __name__ == "__main__":
    main()
