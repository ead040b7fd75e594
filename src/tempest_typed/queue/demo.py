"""The queue's main job: enqueue, deliver with worker processes, and account for every message.

The demo is also the harness of the queue's proofs (tests/queue): workers are real processes;
each appends what it does to its own log file with one unbuffered write per line, so a line
written before a kill -9 survives it. A "delivered" line is the delivery's side effect. After
the run, `verify` reads the table and the logs and accounts for every message: lost ones
(not sent or failed, or sent without a delivery), ones delivered twice, lease holders that
overlapped, and attempt counts that disagree with the claims.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import multiprocessing
import os
import random
import signal
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any, TextIO
from uuid import UUID

from ..engine import Engine, create_engine
from ..engine.aio import AsyncEngine, create_async_engine
from ..errors import TempestError
from ..row import Row
from ..statements import Select, select
from .aio import AsyncQueue
from .core import QueueCore
from .messages import Lease, Message
from .model import QueueMessage, message_model
from .queue import Queue

__all__ = ["DemoConfig", "Report", "run_demo", "verify"]

#: where a worker may kill itself (kill -9) when its crash rate says so
CRASH_POINTS = ("claimed", "delivering", "delivered")


@dataclasses.dataclass
class DemoConfig:
    """What the demo runs: where, how many messages and workers, and how things fail."""

    url: str | None = None
    messages: int = 2000
    workers: int = 4
    fail_rate: float = 0.2
    duplicates: float = 0.1
    max_attempts: int = 4
    lease_seconds: float = 5.0
    backoff_seconds: float = 0.05
    max_backoff_seconds: float = 1.0
    batch: int = 10
    delivery_ms: float = 1.0
    #: per claimed message: the chance that its worker kills itself at a random crash point
    crash_rate: float = 0.0
    #: kill -9 of a random worker by the supervisor, per second
    kill_rate: float = 0.0
    #: server-side termination of a random worker's connection, per second
    disconnect_rate: float = 0.0
    table: str = "queue_demo"
    consumer: str = "demo"
    seed: int | None = None
    log_dir: str | None = None
    progress: bool = True
    #: the workers' queue: "sync" (Queue on the blocking engine) or "async" (AsyncQueue)
    engine: str = "sync"


@dataclasses.dataclass
class Report:
    """The outcome of a run: the summary's figures and any broken guarantee."""

    requested: int = 0
    enqueued: int = 0
    deduplicated: int = 0
    delivered: int = 0
    dead_lettered: int = 0
    retried: int = 0
    lost: int = 0
    delivered_twice: int = 0
    deliveries: int = 0
    claims: int = 0
    lost_leases: int = 0
    worker_deaths: int = 0
    disconnects: int = 0
    elapsed: float = 0.0
    #: broken guarantees, each one line; empty when every message is accounted for
    problems: list[str] = dataclasses.field(default_factory=list)

    @property
    def throughput(self) -> float:
        """Messages delivered (sent) per second."""
        return self.delivered / self.elapsed if self.elapsed > 0 else 0.0


# -- the worker process ----------------------------------------------------------------------


def _queue(engine: Engine, config: DemoConfig) -> Queue:
    return Queue(engine, config.consumer, model=message_model(config.table),
                 lease_seconds=config.lease_seconds, max_attempts=config.max_attempts,
                 backoff_seconds=config.backoff_seconds,
                 max_backoff_seconds=config.max_backoff_seconds)


def _connection_id(engine: Engine) -> int:
    query = engine.dialect.connection_id_sql
    return 0 if query is None else int(engine.execute_sql(query).scalar())


def worker_main(config: DemoConfig, url: str, log_path: str, seed: int) -> None:
    """One worker process: claim, deliver (maybe failing or crashing), ack or nack, log it."""
    fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    worker = _Worker(config, log_path, fd, random.Random(seed))
    try:
        if config.engine == "async":
            asyncio.run(_async_worker(worker, url))
        else:
            _sync_worker(worker, url)
    finally:
        os.close(fd)


class _Worker:
    """What a worker process does besides talking to the queue: its plan, its log, its crash."""

    def __init__(self, config: DemoConfig, log_path: str, fd: int, rng: random.Random) -> None:
        self.config = config
        self.log_path = log_path
        self.fd = fd
        self.rng = rng
        self.pause = config.delivery_ms / 1000.0
        self.report_connection = config.disconnect_rate > 0

    def log(self, *fields: object) -> None:
        os.write(self.fd, ("\t".join(str(f) for f in fields) + "\n").encode())

    def connection(self, connection_id: int) -> None:
        Path(self.log_path + ".conn").write_text(str(connection_id))

    def claim_failed(self, exc: TempestError) -> None:
        self.log("error", "claim", type(exc).__name__, str(exc).replace("\n", " ")[:300])

    def claimed(self, leases: list[Lease]) -> None:
        claimed_at = time.monotonic()
        for lease in leases:
            self.log("claim", lease.id, lease.attempts, lease.token, claimed_at)

    def plan(self) -> tuple[str | None, bool]:
        """(where to crash or None, whether the delivery fails)."""
        planned = (self.rng.choice(CRASH_POINTS) if self.rng.random() < self.config.crash_rate
                   else None)
        return planned, self.rng.random() < self.config.fail_rate

    def point(self, point: str, planned: str | None) -> None:
        if planned == point:
            os.kill(os.getpid(), signal.SIGKILL)

    def delivered(self, lease: Lease, fails: bool, planned: str | None) -> None:
        if not fails:
            self.log("delivered", lease.id, lease.attempts, lease.token, time.monotonic())
        self.point("delivered", planned)
        self.log("end", lease.id, lease.attempts, lease.token, time.monotonic())

    def outcome(self, lease: Lease, outcome: str) -> None:
        self.log("outcome", lease.id, lease.attempts, lease.token, outcome)


def _worker_steps(worker: _Worker) -> Generator[tuple[str, Any], Any, None]:
    """The worker's loop, once for both queues: yields what to ask the queue ("claim",
    "ack", "nack", "pending", "connection") or to "sleep", and is sent the answer (a
    TempestError instance when the queue raised one)."""
    while True:
        if worker.report_connection:
            connection_id = yield "connection", None
            if not isinstance(connection_id, TempestError):
                worker.connection(connection_id)
        leases = yield "claim", worker.config.batch
        if isinstance(leases, TempestError):
            worker.claim_failed(leases)
            yield "sleep", 0.05
            continue
        if not leases:
            pending = yield "pending", None
            if pending is False:
                return
            if pending is True:
                yield "sleep", 0.02
            continue
        worker.claimed(leases)
        for lease in leases:
            planned, fails = worker.plan()
            worker.point("claimed", planned)
            yield "sleep", worker.pause / 2
            worker.point("delivering", planned)
            yield "sleep", worker.pause / 2
            worker.delivered(lease, fails, planned)
            answer = yield ("nack" if fails else "ack"), lease
            outcome: str
            if isinstance(answer, TempestError):
                outcome = "error:" + str(answer).replace("\n", " ")[:300]
            elif fails:
                outcome = answer or "lost"
            else:
                outcome = "sent" if answer else "lost"
            worker.outcome(lease, outcome)


_FAILURE = "simulated delivery failure"


def _sync_worker(worker: _Worker, url: str) -> None:
    engine = create_engine(url, pool_size=1)
    queue = _queue(engine, worker.config)
    steps = _worker_steps(worker)
    answer: Any = None
    try:
        while True:
            what, arg = steps.send(answer)
            answer = None
            try:
                if what == "sleep":
                    time.sleep(arg)
                elif what == "connection":
                    answer = _connection_id(engine)
                elif what == "claim":
                    answer = queue.claim(arg)
                elif what == "pending":
                    answer = _pending(queue)
                elif what == "ack":
                    answer = queue.ack(arg)
                else:
                    answer = queue.nack(arg, _FAILURE)
            except TempestError as exc:
                answer = exc
    except StopIteration:
        pass
    finally:
        engine.close()


async def _async_worker(worker: _Worker, url: str) -> None:
    """The same worker on AsyncQueue and the asyncio engine."""
    config = worker.config
    engine = create_async_engine(url, pool_size=1)
    queue = AsyncQueue(engine, config.consumer, model=message_model(config.table),
                       lease_seconds=config.lease_seconds, max_attempts=config.max_attempts,
                       backoff_seconds=config.backoff_seconds,
                       max_backoff_seconds=config.max_backoff_seconds)
    steps = _worker_steps(worker)
    answer: Any = None
    try:
        while True:
            what, arg = steps.send(answer)
            answer = None
            try:
                if what == "sleep":
                    await asyncio.sleep(arg)
                elif what == "connection":
                    answer = await _async_connection_id(engine)
                elif what == "claim":
                    answer = await queue.claim(arg)
                elif what == "pending":
                    found = await engine.execute(_pending_statement(queue))
                    answer = found.first() is not None
                elif what == "ack":
                    answer = await queue.ack(arg)
                else:
                    answer = await queue.nack(arg, _FAILURE)
            except TempestError as exc:
                answer = exc
    except StopIteration:
        pass
    finally:
        await engine.dispose()


async def _async_connection_id(engine: AsyncEngine) -> int:
    query = engine.dialect.connection_id_sql
    return 0 if query is None else int((await engine.execute_sql(query)).scalar())


# -- the supervisor --------------------------------------------------------------------------


def _enqueue(queue: Queue, config: DemoConfig, rng: random.Random) -> tuple[int, int]:
    keys: list[str] = []
    batch: list[Message] = []
    enqueued = 0
    for i in range(config.messages):
        if keys and rng.random() < config.duplicates:
            key = rng.choice(keys)  # a producer retrying an earlier send
        else:
            key = f"order-{i}"
            keys.append(key)
        batch.append(Message({"n": i, "key": key}, key=key))
        if len(batch) == 1000:
            enqueued += len(queue.enqueue_many(batch))
            batch = []
    if batch:
        enqueued += len(queue.enqueue_many(batch))
    return enqueued, config.messages - enqueued


def _terminate(engine: Engine, connection_id: int) -> bool:
    query = engine.dialect.terminate_connection_sql
    if query is None:
        return False
    try:
        result = engine.execute_sql(query, (int(connection_id),))
    except TempestError:  # the connection was already gone
        return False
    try:
        return bool(result.scalar())  # whether it ended one, where the statement says
    except TempestError:  # a statement that returns no rows (KILL) ended it, or raised
        return True


@contextlib.contextmanager
def _log_directory(config: DemoConfig) -> Iterator[Path]:
    if config.log_dir is not None:
        path = Path(config.log_dir)
        path.mkdir(parents=True, exist_ok=True)
        yield path
    else:
        with tempfile.TemporaryDirectory(prefix="tempest-queue-") as tmp:
            yield Path(tmp)


def run_demo(config: DemoConfig, out: TextIO | None = None) -> Report:
    """Run the demo end to end and return its verified report."""
    out = out if out is not None else sys.stdout
    rng = random.Random(config.seed)
    with contextlib.ExitStack() as stack:
        url = config.url
        if url is None:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="tempest-queue-db-"))
            url = f"sqlite:///{Path(tmp) / 'queue.db'}"
        logs = stack.enter_context(_log_directory(config))
        engine = stack.enter_context(create_engine(url, pool_size=2))
        queue = _queue(engine, config)
        engine.drop_all(queue.model)
        queue.create_table()
        print(f"durable queue demo on {engine.dialect.name} ({_safe_url(url)})", file=out)
        started = time.monotonic()
        enqueued, deduplicated = _enqueue(queue, config, rng)
        print(f"enqueued {enqueued} of {config.messages} messages ({deduplicated} repeated "
              f"an idempotency key); {config.workers} worker processes, "
              f"{config.fail_rate:.0%} of deliveries fail, at most {config.max_attempts} "
              f"attempts, lease {config.lease_seconds:g}s", file=out)
        report = Report(requested=config.messages, enqueued=enqueued, deduplicated=deduplicated)
        _supervise(config, url, engine, queue, logs, rng, report, out)
        report.elapsed = time.monotonic() - started
        verify(queue, logs, report, exact=_exact(config))
        _summary(report, config, out)
        return report


def _exact(config: DemoConfig) -> bool:
    """Whether nothing in the run can break a lease: then attempts equal claims exactly."""
    return config.crash_rate == 0 and config.kill_rate == 0 and config.disconnect_rate == 0


def _safe_url(url: str) -> str:
    head, sep, tail = url.partition("@")
    if sep and ":" in head.split("//", 1)[-1]:
        scheme, _, _ = head.partition("//")
        user = head.split("//", 1)[1].split(":", 1)[0]
        return f"{scheme}//{user}:***@{tail}"
    return url


def _supervise(config: DemoConfig, url: str, engine: Engine, queue: Queue, logs: Path,
               rng: random.Random, report: Report, out: TextIO) -> None:
    context = multiprocessing.get_context("spawn")  # no inherited pool, threads or sockets
    workers: dict[int, tuple[Any, str]] = {}
    spawned = 0

    def spawn() -> None:
        nonlocal spawned
        log_path = str(logs / f"worker-{spawned:04d}.log")
        process = context.Process(target=worker_main,
                                  args=(config, url, log_path, rng.randrange(2**31)),
                                  daemon=True)
        process.start()
        workers[spawned] = (process, log_path)
        spawned += 1

    for _ in range(config.workers):
        spawn()
    tick = 0.2
    last_progress = 0.0
    tty = getattr(out, "isatty", lambda: False)()
    try:
        while workers:
            time.sleep(tick)
            for number, (process, _path) in list(workers.items()):
                if process.exitcode is None:
                    continue
                del workers[number]
                if process.exitcode != 0:
                    report.worker_deaths += 1
                    if not _finished(queue):
                        spawn()
            live = [w for w in workers.values() if w[0].exitcode is None]
            if live and config.kill_rate and rng.random() < config.kill_rate * tick:
                process = rng.choice(live)[0]
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGKILL)
            if live and config.disconnect_rate and rng.random() < config.disconnect_rate * tick:
                conn_file = Path(rng.choice(live)[1] + ".conn")
                with contextlib.suppress(OSError, ValueError):
                    if _terminate(engine, int(conn_file.read_text())):
                        report.disconnects += 1
            now = time.monotonic()
            if config.progress and now - last_progress >= (0.5 if tty else 2.0):
                last_progress = now
                with contextlib.suppress(TempestError):
                    counts = queue.counts()
                    line = (f"  queued {counts['queued']:>6}  sending {counts['sending']:>4}  "
                            f"sent {counts['sent']:>6}  failed {counts['failed']:>5}  "
                            f"workers {len(live)}")
                    print("\r" + line if tty else line, end="" if tty else "\n", file=out,
                          flush=True)
    finally:
        for process, _path in workers.values():
            if process.exitcode is None:
                process.kill()
                process.join()
    if config.progress and tty:
        print(file=out)


def _pending_statement(queue: QueueCore[Any]) -> Select[QueueMessage, Row]:
    """Some message neither sent nor failed (one index probe, not a count)."""
    return (select(queue.model, ["id"])
            .where({"consumer": queue.consumer, "status": {"in": ["queued", "sending"]}})
            .limit(1))


def _pending(queue: Queue) -> bool:
    """True while some message is neither sent nor failed."""
    return queue.engine.execute(_pending_statement(queue)).first() is not None


def _finished(queue: Queue) -> bool:
    try:
        return not _pending(queue)
    except TempestError:
        return False


# -- accounting ------------------------------------------------------------------------------


def _read_logs(logs: Path) -> Iterator[list[str]]:
    for path in sorted(logs.glob("worker-*.log")):
        for line in path.read_text().splitlines():
            fields = line.split("\t")
            if fields and fields[0]:
                yield fields


def verify(queue: Queue, logs: Path, report: Report, *, exact: bool) -> Report:
    """Account for every message from the table and the workers' logs; fill `report`."""
    rows = queue.engine.execute(
        select(queue.model, ["id", "status", "attempts", "max_attempts", "last_error"])
        .where({"consumer": queue.consumer})
    ).all()
    claims: Counter[UUID] = Counter()
    delivered: Counter[UUID] = Counter()
    # (start, end, attempt) of each lease whose fenced ack/nack succeeded, per message
    spans: dict[tuple[UUID, UUID], list[float]] = {}
    held: dict[UUID, list[tuple[float, float, int]]] = defaultdict(list)
    for fields in _read_logs(logs):
        kind = fields[0]
        if kind == "error":
            continue
        message, token = UUID(fields[1]), UUID(fields[3])
        if kind == "claim":
            claims[message] += 1
            report.claims += 1
            spans[(message, token)] = [float(fields[4])]
        elif kind == "delivered":
            delivered[message] += 1
            report.deliveries += 1
        elif kind == "end":
            spans.setdefault((message, token), [float("-inf")]).append(float(fields[4]))
        elif kind == "outcome":
            outcome = fields[4]
            if outcome == "lost":
                report.lost_leases += 1
            elif not outcome.startswith("error"):
                span = spans.get((message, token), [])
                if len(span) == 2:
                    held[message].append((span[0], span[1], int(fields[2])))
    problems = report.problems
    by_status: Counter[str] = Counter()
    for row in rows:
        by_status[row.status] += 1
        if row.attempts > 1:
            report.retried += 1
        if row.status not in ("sent", "failed"):
            report.lost += 1
            problems.append(f"{row.id} ended {row.status!r}, not sent or failed")
        elif row.status == "sent" and delivered[row.id] == 0:
            report.lost += 1
            problems.append(f"{row.id} is marked sent but was never delivered")
        if delivered[row.id] > 1:
            report.delivered_twice += 1
        if row.status == "failed" and row.attempts != row.max_attempts:
            problems.append(f"{row.id} failed after {row.attempts} of {row.max_attempts} attempts")
        if exact and row.attempts != claims[row.id]:
            problems.append(f"{row.id} counts {row.attempts} attempts but was claimed "
                            f"{claims[row.id]} times")
        if not exact and not claims[row.id] <= row.attempts <= row.max_attempts:
            problems.append(f"{row.id} counts {row.attempts} attempts, claimed "
                            f"{claims[row.id]} times, max {row.max_attempts}")
    for message, spans_held in held.items():
        spans_held.sort()
        for (_, end1, a1), (start2, _, a2) in itertools.pairwise(spans_held):
            if start2 < end1 or a2 <= a1:
                problems.append(f"{message}: attempts {a1} and {a2} were processed at the "
                                "same time by two lease holders")
    if len(rows) != report.enqueued and report.enqueued:
        problems.append(f"{len(rows)} messages in the table, {report.enqueued} enqueued")
    if exact and (report.lost_leases or report.delivered_twice):
        problems.append(f"without crashes, {report.lost_leases} leases were lost and "
                        f"{report.delivered_twice} messages delivered twice")
    report.delivered = by_status["sent"]
    report.dead_lettered = by_status["failed"]
    return report


def _summary(report: Report, config: DemoConfig, out: TextIO) -> None:
    lines = [
        ("delivered", report.delivered, "messages sent (acked)"),
        ("deduplicated", report.deduplicated, "repeated idempotency keys, skipped at enqueue"),
        ("retried", report.retried, "messages that needed more than one attempt"),
        ("dead-lettered", report.dead_lettered,
         f"failed {config.max_attempts} attempts, status 'failed'"),
        ("lost", report.lost, "must be 0"),
        ("delivered twice", report.delivered_twice,
         "at-least-once: a crash between delivery and ack redelivers"),
    ]
    if report.worker_deaths or report.disconnects:
        lines.append(("worker crashes", report.worker_deaths, "kill -9, workers respawned"))
        lines.append(("disconnects", report.disconnects, "connections terminated by the server"))
    print("summary", file=out)
    for name, value, note in lines:
        print(f"  {name:<16}{value:>8}   {note}", file=out)
    print(f"  {'throughput':<16}{report.throughput:>8.0f}   messages/s "
          f"({report.delivered} in {report.elapsed:.1f} s)", file=out)
    for problem in report.problems[:20]:
        print(f"  PROBLEM: {problem}", file=out)
    if len(report.problems) > 20:
        print(f"  ... and {len(report.problems) - 20} more problems", file=out)
