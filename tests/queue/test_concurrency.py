"""Proof under concurrency and crashes: worker processes on each database, every message
accounted for (tempest_typed.queue.demo.verify reconciles the table with the workers' logs),
with the workers on Queue and on AsyncQueue.

Without crashes: every message ends sent or failed, none is lost, none is delivered twice,
no two lease holders ever process a message at the same time, and each message's attempts
equal the claims the workers logged. With kill -9 at random points (after the claim commits,
mid-delivery, before the ack) and connections terminated by the server: every message still
ends sent or failed, every sent message was delivered, attempts never exceed the maximum,
and the leases whose ack or nack succeeded never overlapped.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tempest_typed import create_engine
from tempest_typed.queue import Queue, message_model
from tempest_typed.queue.demo import DemoConfig, Report, run_demo

from .conftest import table_name


def run(url: str, tmp_path: Path, **options: object) -> Report:
    """Run the demo on a table of this test process, dropped afterwards even on failure."""
    config = DemoConfig(url=url, table=table_name("proof"), progress=False, seed=4,
                        log_dir=str(tmp_path / "logs"), **options)  # type: ignore[arg-type]
    out = io.StringIO()
    try:
        report = run_demo(config, out=out)
    finally:
        print(out.getvalue())
        engine = create_engine(url, pool_size=1)
        try:
            Queue(engine, config.consumer, model=message_model(config.table)).drop_table()
        finally:
            engine.close()
    return report


def assert_every_message_accounted_for(report: Report) -> None:
    assert report.problems == []
    assert report.lost == 0
    assert report.delivered + report.dead_lettered == report.enqueued
    assert report.dead_lettered > 0 and report.retried > 0


def assert_exactly_once_without_crashes(report: Report) -> None:
    assert_every_message_accounted_for(report)
    assert report.delivered_twice == 0
    assert report.lost_leases == 0
    assert report.deliveries == report.delivered


CORRECTNESS = dict(fail_rate=0.3, duplicates=0.1, max_attempts=3, lease_seconds=60,
                   delivery_ms=0.5)
CRASHES = dict(fail_rate=0.2, duplicates=0.1, max_attempts=4, lease_seconds=1.0,
               delivery_ms=1.0, crash_rate=0.02, kill_rate=0.5)


@pytest.mark.postgres
@pytest.mark.slow
def test_postgresql_8_workers_12000_messages(pg_url: str, tmp_path: Path) -> None:
    report = run(pg_url, tmp_path, messages=12_000, workers=8, fail_rate=0.2, duplicates=0,
                 max_attempts=4, lease_seconds=120, delivery_ms=0)
    assert report.enqueued == 12_000
    assert_exactly_once_without_crashes(report)


#: messages of each run with crashes: some 40 worker deaths and as many disconnects at these
#: rates, in about two thirds of the time 3,000 took (the suite keeps under 15 minutes)
CRASHED = 2000

#: the workers' queue: Queue on the blocking engine, AsyncQueue on the asyncio engine
ENGINES = pytest.mark.parametrize("engine", ["sync", "async"])


@pytest.mark.postgres
def test_postgresql_async_workers_every_message_once(pg_url: str, tmp_path: Path) -> None:
    report = run(pg_url, tmp_path, messages=3000, workers=4, engine="async", **CORRECTNESS)
    assert report.deduplicated > 0
    assert_exactly_once_without_crashes(report)


@pytest.mark.mysql
@ENGINES
def test_mariadb_workers_every_message_once(mysql_url: str, tmp_path: Path,
                                            engine: str) -> None:
    report = run(mysql_url, tmp_path, messages=3000, workers=4, engine=engine, **CORRECTNESS)
    assert report.deduplicated > 0
    assert_exactly_once_without_crashes(report)


@ENGINES
def test_sqlite_file_worker_processes_every_message_once(sqlite_url: str, tmp_path: Path,
                                                         engine: str) -> None:
    report = run(sqlite_url, tmp_path, messages=2000, workers=4, engine=engine,
                 **CORRECTNESS)
    assert report.deduplicated > 0
    assert_exactly_once_without_crashes(report)


@pytest.mark.postgres
@pytest.mark.slow
@ENGINES
def test_postgresql_survives_kill_9_and_terminated_backends(pg_url: str, tmp_path: Path,
                                                            engine: str) -> None:
    report = run(pg_url, tmp_path, messages=CRASHED, workers=4, disconnect_rate=2.0,
                 engine=engine, **CRASHES)
    assert report.worker_deaths > 0 and report.disconnects > 0
    assert_every_message_accounted_for(report)


@pytest.mark.mysql
@pytest.mark.slow
@ENGINES
def test_mariadb_survives_kill_9_and_killed_connections(mysql_url: str, tmp_path: Path,
                                                        engine: str) -> None:
    report = run(mysql_url, tmp_path, messages=CRASHED, workers=4, disconnect_rate=2.0,
                 engine=engine, **CRASHES)
    assert report.worker_deaths > 0 and report.disconnects > 0
    assert_every_message_accounted_for(report)


@pytest.mark.slow
@ENGINES
def test_sqlite_survives_kill_9(sqlite_url: str, tmp_path: Path, engine: str) -> None:
    report = run(sqlite_url, tmp_path, messages=CRASHED, workers=4, engine=engine,
                 **CRASHES)
    assert report.worker_deaths > 0
    assert_every_message_accounted_for(report)


def test_the_proof_table_is_dropped_even_when_the_run_fails(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempest_typed.queue.demo as demo

    def broken(*args: object) -> None:
        raise RuntimeError("a worker went wrong")

    monkeypatch.setattr(demo, "_supervise", broken)
    with pytest.raises(RuntimeError):
        run(sqlite_url, tmp_path, messages=10, workers=1)
    engine = create_engine(sqlite_url)
    try:
        tables = engine.execute_sql("SELECT name FROM sqlite_master WHERE type = 'table'").all()
    finally:
        engine.close()
    assert table_name("proof") not in {name for (name,) in tables}
