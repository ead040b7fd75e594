"""The seed recipe, "A durable queue", run for real: every snippet on PostgreSQL, the two-step
claim on MariaDB, the serialized claim on SQLite, each with several concurrent workers."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from uuid import UUID

import pytest

from tempest_typed import DialectError, Engine, create_engine, insert, select, sql, update

from .conftest import Outbound

ROWS = 2000
WORKERS = 4
BATCH = 10
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def open_engine(url: str) -> Iterator[Engine]:
    engine = create_engine(url, pool_size=WORKERS + 2)
    engine.drop_all(Outbound)
    engine.create_all(Outbound)
    try:
        yield engine
    finally:
        engine.drop_all(Outbound)
        engine.close()


@pytest.fixture
def pg(pg_url: str) -> Iterator[Engine]:
    yield from open_engine(pg_url)


@pytest.fixture
def maria(mysql_url: str) -> Iterator[Engine]:
    yield from open_engine(mysql_url)


@pytest.fixture
def lite(tmp_path: Path) -> Iterator[Engine]:
    yield from open_engine(f"sqlite:///{tmp_path / 'queue.db'}")


def enqueue(engine: Engine, n: int, consumer: str = "mail") -> list[UUID]:
    messages = [Outbound(consumer=consumer, next_attempt_at=T0 + timedelta(seconds=i))
                for i in range(n)]
    engine.execute(insert(Outbound).values(messages))
    return [m.id for m in messages]


# -- 1. Claim a batch ------------------------------------------------------------------------

def claim_batch(engine: Engine, size: int) -> list[UUID]:
    """The seed's two-step claim: lock a batch with SKIP LOCKED, then mark it in SQL."""
    with engine.transaction() as tx:
        rows = tx.execute(
            select(Outbound, ["id"])
            .where({"status": "queued"})
            .order_by("next_attempt_at")
            .limit(size)
            .for_update(skip_locked=True)
        ).all()
        ids = [row.id for row in rows]
        if not ids:
            return []
        tx.execute(
            update(Outbound)
            .set({"status": "sending", "attempts": sql.raw("attempts + 1"),
                  "updated_at": sql.now()})
            .where({"id": {"in": ids}})
        ).rows_affected()
        return ids


def claim_serialized(engine: Engine, size: int) -> list[UUID]:
    """SQLite's claim: no row locks, so the transaction itself (BEGIN IMMEDIATE) serializes."""
    with engine.transaction() as tx:
        ids = tx.execute(
            select(Outbound, ["id"]).where({"status": "queued"})
            .order_by("next_attempt_at").limit(size)
        ).scalars()
        if ids:
            tx.execute(update(Outbound).set({
                "status": "sending", "attempts": sql.raw("attempts + 1"),
                "updated_at": sql.now()}).where({"id": {"in": ids}}))
        return ids


def claim_in_one_statement(engine: Engine, size: int) -> list[UUID]:
    """The seed's single-statement claim: the locked subquery inside the UPDATE."""
    with engine.session() as session:
        claimed = session.execute(
            update(Outbound)
            .set({"status": "sending", "attempts": sql.raw("attempts + 1"),
                  "updated_at": sql.now()})
            .where({"id": {"in": select(Outbound)
                                 .where({"status": "queued"})
                                 .order_by("next_attempt_at")
                                 .limit(size)
                                 .for_update(skip_locked=True)
                                 .as_subquery("id")}})
            .returning()
        ).all()
        return [m.id for m in claimed]


def run_workers(engine: Engine, claim: Callable[[Engine, int], list[UUID]]) -> list[UUID]:
    """WORKERS threads claiming until the queue is empty; every id each one claimed."""
    claimed: list[UUID] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def worker() -> None:
        try:
            while ids := claim(engine, BATCH):
                with lock:
                    claimed.extend(ids)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    return claimed


def assert_each_claimed_once(engine: Engine, ids: list[UUID], claimed: list[UUID]) -> None:
    twice = [i for i, n in Counter(claimed).items() if n > 1]
    assert twice == []
    assert sorted(claimed) == sorted(ids)
    rows = engine.execute(select(Outbound, ["status", "attempts"])).all()
    assert Counter((r.status, r.attempts) for r in rows) == {("sending", 1): len(ids)}


def test_two_step_claim_on_postgresql_takes_disjoint_batches(pg: Engine) -> None:
    ids = enqueue(pg, ROWS)
    assert_each_claimed_once(pg, ids, run_workers(pg, claim_batch))


def test_single_statement_claim_on_postgresql_takes_disjoint_batches(pg: Engine) -> None:
    ids = enqueue(pg, ROWS)
    assert_each_claimed_once(pg, ids, run_workers(pg, claim_in_one_statement))


def test_two_step_claim_on_mariadb_takes_disjoint_batches(maria: Engine) -> None:
    ids = enqueue(maria, ROWS)
    assert_each_claimed_once(maria, ids, run_workers(maria, claim_batch))


def test_single_statement_claim_on_mariadb_names_the_two_step_claim(maria: Engine) -> None:
    with pytest.raises(DialectError, match="two-step claim"):
        claim_in_one_statement(maria, BATCH)


def test_serialized_claim_on_sqlite_takes_disjoint_batches(lite: Engine) -> None:
    ids = enqueue(lite, ROWS)
    assert_each_claimed_once(lite, ids, run_workers(lite, claim_serialized))


def test_the_lock_on_sqlite_is_an_error_not_a_pretence(lite: Engine) -> None:
    with pytest.raises(DialectError, match="serialize the claim"):
        claim_batch(lite, BATCH)


def test_a_claim_takes_the_oldest_first_and_only_queued_rows(pg: Engine) -> None:
    ids = enqueue(pg, 25)
    pg.execute(update(Outbound).set({"status": "failed"}).where({"id": ids[0]}))
    assert claim_batch(pg, 10) == ids[1:11]
    assert sorted(claim_in_one_statement(pg, 10)) == sorted(ids[11:21])
    assert sorted(claim_batch(pg, 10)) == sorted(ids[21:])


# -- 2. Idempotency ---------------------------------------------------------------------------

def idempotent_insert(engine: Engine, message: Outbound) -> list[Outbound]:
    return engine.execute(
        insert(Outbound)
        .values(message)
        .on_conflict_do_nothing(["consumer", "idempotency_key"],
                                where={"idempotency_key": {"is_null": False}})
        .returning()
    ).all()


@pytest.mark.parametrize("database", ["pg", "lite"])
def test_a_repeated_idempotency_key_inserts_nothing_and_returns_nothing(
        database: str, request: pytest.FixtureRequest) -> None:
    engine: Engine = request.getfixturevalue(database)
    first = Outbound(consumer="mail", idempotency_key="k1", next_attempt_at=T0)
    assert [m.id for m in idempotent_insert(engine, first)] == [first.id]
    repeat = Outbound(consumer="mail", idempotency_key="k1", next_attempt_at=T0)
    assert idempotent_insert(engine, repeat) == []
    # Another consumer may use the same key; rows without a key are never deduplicated.
    assert len(idempotent_insert(engine, Outbound(consumer="sms", idempotency_key="k1",
                                                  next_attempt_at=T0))) == 1
    for _ in range(2):
        assert len(idempotent_insert(engine, Outbound(consumer="mail", next_attempt_at=T0))) == 1
    assert engine.execute(select(Outbound, ["id"])).rows_affected() == 4


def test_concurrent_repeats_of_one_key_insert_it_once(pg: Engine) -> None:
    inserted: list[int] = []
    barrier = threading.Barrier(WORKERS)

    def send() -> None:
        barrier.wait()
        for _ in range(25):
            rows = idempotent_insert(pg, Outbound(consumer="mail", idempotency_key="same",
                                                  next_attempt_at=T0))
            inserted.append(len(rows))

    threads = [threading.Thread(target=send) for _ in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(inserted) == 1 and len(inserted) == WORKERS * 25


def test_mariadb_idempotent_insert_is_insert_ignore_without_a_target(maria: Engine) -> None:
    def send() -> list[Outbound]:
        return maria.execute(insert(Outbound).values(
            Outbound(consumer="mail", idempotency_key="k1", next_attempt_at=T0))
            .on_conflict_do_nothing().returning()).all()

    assert len(send()) == 1
    assert send() == []
    with pytest.raises(DialectError, match="no conflict target"):
        idempotent_insert(maria, Outbound(consumer="mail", idempotency_key="k1",
                                          next_attempt_at=T0))


@pytest.mark.parametrize("database", ["pg", "lite"])
def test_an_upsert_rewrites_only_rows_that_may_retry(database: str,
                                                     request: pytest.FixtureRequest) -> None:
    engine: Engine = request.getfixturevalue(database)
    retry_at = T0 + timedelta(hours=1)
    young = Outbound(consumer="mail", idempotency_key="young", status="failed", attempts=2,
                     next_attempt_at=T0)
    old = Outbound(consumer="mail", idempotency_key="old", status="failed", attempts=5,
                   next_attempt_at=T0)
    engine.execute(insert(Outbound).values([young, old]))

    def upsert(key: str) -> list[Outbound]:
        return engine.execute(
            insert(Outbound)
            .values(Outbound(consumer="mail", idempotency_key=key, next_attempt_at=T0))
            .on_conflict_do_update(["consumer", "idempotency_key"],
                                   {"status": "queued", "next_attempt_at": retry_at},
                                   index_where={"idempotency_key": {"is_null": False}},
                                   update_where={"attempts": {"lt": 5}})
            .returning()
        ).all()

    [rewritten] = upsert("young")
    assert (rewritten.id, rewritten.status, rewritten.next_attempt_at) == (
        young.id, "queued", retry_at)
    assert upsert("old") == []  # attempts >= 5: left as it is
    kept = engine.execute(select(Outbound).where({"id": old.id})).one()
    assert (kept.status, kept.next_attempt_at) == ("failed", T0)
    assert len(upsert("new")) == 1


# -- 3. Counters without a race ----------------------------------------------------------------

def test_the_counter_in_sql_loses_no_increment_under_concurrency(pg: Engine) -> None:
    [message_id] = enqueue(pg, 1)
    rounds = 50

    def bump() -> None:
        for _ in range(rounds):
            pg.execute(update(Outbound).set({
                "attempts": sql.raw("attempts + 1"),
                "next_attempt_at": sql.expr("now() + {} * interval '1 second'", 30),
                "updated_at": sql.now(),
            }).where({"id": message_id}))

    threads = [threading.Thread(target=bump) for _ in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    row = pg.execute(select(Outbound).where({"id": message_id})).one()
    assert row.attempts == WORKERS * rounds
    assert row.updated_at is not None
    db_now = pg.execute_sql("SELECT now()").scalar()
    assert row.updated_at <= db_now < row.next_attempt_at  # 30 s ahead, computed in SQL


# -- The complete worker ------------------------------------------------------------------------

class Delivery:
    """A delivery that fails the first attempt of every fourth message, counting attempts."""

    def __init__(self) -> None:
        self.attempts: Counter[UUID] = Counter()
        self.sent: list[UUID] = []
        self._lock = threading.Lock()

    def __call__(self, message_id: UUID) -> None:
        with self._lock:
            self.attempts[message_id] += 1
            if message_id.int % 4 == 0 and self.attempts[message_id] == 1:
                raise ConnectionError("the mail server hung up")
            self.sent.append(message_id)


def drain(engine: Engine, deliver: Callable[[UUID], None],
          claim: Callable[[Engine, int], list[UUID]]) -> int:
    """The seed's worker: claim a batch, deliver each, mark it sent or requeue it with backoff."""
    ids = claim(engine, BATCH)
    with engine.session() as session:
        for message_id in ids:
            try:
                deliver(message_id)
                session.execute(update(Outbound).set({"status": "sent", "updated_at": sql.now()})
                                .where({"id": message_id})).rows_affected()
            except ConnectionError:
                backoff_seconds = 0.001
                session.execute(update(Outbound).set({
                    "status": "queued",
                    "next_attempt_at": sql.now(plus=backoff_seconds),
                }).where({"id": message_id})).rows_affected()
    return len(ids)


@pytest.mark.parametrize(("database", "claim"), [
    ("pg", claim_batch), ("pg", claim_in_one_statement), ("maria", claim_batch),
    ("lite", claim_serialized)])
def test_the_complete_worker_sends_each_message_once_and_counts_every_attempt(
        database: str, claim: Callable[[Engine, int], list[UUID]],
        request: pytest.FixtureRequest) -> None:
    engine: Engine = request.getfixturevalue(database)
    ids = enqueue(engine, ROWS // 2)
    deliver = Delivery()
    errors: list[BaseException] = []
    unsent = select(Outbound, ["id"]).where({"status": {"ne": "sent"}}).limit(1)

    def worker() -> None:
        try:
            while drain(engine, deliver, claim) or engine.execute(unsent).first():
                pass
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(deliver.sent) == sorted(ids)  # each message sent exactly once
    retried = {i for i in ids if i.int % 4 == 0}
    assert {i for i, n in deliver.attempts.items() if n == 2} == retried
    rows = engine.execute(select(Outbound, ["id", "status", "attempts"])).all()
    assert {r.status for r in rows} == {"sent"}
    assert {r.id: r.attempts for r in rows} == dict(deliver.attempts)
