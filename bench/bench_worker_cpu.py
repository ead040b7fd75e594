"""The worker's client cost: CPU time and context switches a message, one worker, one process.

One `Queue.run(handler, batch=B)` (or a loop of `Queue.process(handler, B)`) works N messages
of a backlog filled by COPY and `VACUUM ANALYZE`d beforehand; the handler counts and stops the
worker at N. Printed: the process's CPU time (user + system, every thread) and its voluntary
context switches, a message and a batch. CPU time is what four workers on two cores take from
the database server; it moves less with the machine's load than a throughput does, and a
context switch is a batch handed from one thread to another (or a wait on the socket). When
the server runs on this machine, its CPU time a message too (every postgres process, read
from /proc while the clock runs): what the statements cost the server.

To compare two versions of the library, run the script once with `PYTHONPATH` pointing at a
checkout of the other one.

    .venv/bin/python bench/bench_worker_cpu.py [--mode run|process|raw] [--messages N] [--batch B]

`--mode raw` is the floor: the seed's claim and batch ack written by hand on psycopg (the
SQL of bench_queues.py's raw side), on the same table.
"""

from __future__ import annotations

import os
import resource
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import uuid4

sys.path.insert(0, str(Path(__file__).parent))

import psycopg
from _common import PG_URL, machine, parser
from bench_queues import ack_sql, claim_sql

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


class ServerCPU:
    """The CPU time of the database server's processes while it runs (user + system), read
    from /proc every 20 ms by a thread: a backend's ticks are kept at their last reading, so a
    connection closed meanwhile still counts. Only for a server on this machine (None else).
    The thread's own CPU time (`own_cpu`) is taken out of the worker's.
    """

    own_cpu = 0.0

    def __init__(self) -> None:
        self._base = self._read()
        self._seen = dict(self._base)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    @staticmethod
    def _read() -> dict[tuple[str, str], int]:
        ticks = {}
        for pid in os.listdir("/proc"):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if not f.read().startswith(b"postgres"):
                        continue
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rpartition(")")[2].split()
            except OSError:
                continue
            # (pid, start time) names one process; utime + stime
            ticks[(pid, fields[19])] = int(fields[11]) + int(fields[12])
        return ticks

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            for key, ticks in self._read().items():
                self._seen[key] = max(self._seen.get(key, 0), ticks)
        #: this thread's own CPU time, which the worker's is not to count
        self.own_cpu = time.thread_time()

    def seconds(self) -> float | None:
        """The server's CPU seconds since the start; None when no server process was seen."""
        self._stop.set()
        self._thread.join()
        if not self._seen:
            return None
        ticks = sum(t - self._base.get(k, 0) for k, t in self._seen.items())
        return ticks / os.sysconf("SC_CLK_TCK")


def raw(n: int, batch: int) -> int:
    """The floor: the seed's claim and fenced batch ack, hand-written, on psycopg."""
    claim, ack = claim_sql(batch, "%s", TABLE), ack_sql("%s", "%s", TABLE)
    done = 0
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        while done < n:
            token = uuid4()
            rows = conn.execute(claim, (token,)).fetchall()
            done += len(rows)  # the no-op handler
            conn.execute(ack, ([r[0] for r in rows], token))
    return done


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--mode", choices=["run", "process", "raw"], default="run")
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

        server = ServerCPU()
        before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        if args.mode == "run":
            queue.run(handler, batch=args.batch, poll_interval=0.05)
        elif args.mode == "raw":
            done = raw(n, args.batch)
        else:
            while done < n:
                queue.process(handler, args.batch)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_SELF)
        server_seconds = server.seconds()
    finally:
        engine.drop_all(model)
        engine.close()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime) - server.own_cpu
    switches = after.ru_nvcsw - before.ru_nvcsw
    side = "raw psycopg" if args.mode == "raw" else f"Queue.{args.mode}"
    print(f"Worker client cost, {side}, batch {args.batch}, {done:,} messages "
          f"({machine()})")
    print(f"  CPU {cpu / done * 1e6:.1f} us a message, wall {wall / done * 1e6:.1f} us a "
          f"message, {switches / (done / args.batch):.1f} voluntary context switches a batch")
    if server_seconds is not None:
        print(f"  server CPU {server_seconds / done * 1e6:.1f} us a message (every postgres "
              "process of this machine)")


if __name__ == "__main__":
    main()
