"""The durable queue against a model of it: any sequence of operations keeps every message's
state, attempts and lease as the model says, on PostgreSQL and on an SQLite file.

The model is plain Python: per message its status, attempts, attempt limit, idempotency key,
current lease token, whether its lease has expired, and when it became due (a step number).
Leases either expire at once (a claim or extend of an hour whose expiry is then set to the
database's now(), as if the hour had passed) or outlive the test (an hour), so expiry is exact
without sleeping. A final attempt whose lease expired is dead-lettered by the next claim, and
keeps its token: a late ack of it still succeeds (the message was handled), a late nack
records its error. Backoff is 0 seconds, so a
retried message is due at once.

Invariants after every step: counts() equals the model's counts; the table holds exactly the
model's messages with their status, attempts and lease token (none lost, none invented);
attempts equal the claims of that message.

Which of several equally due messages a claim takes is the database's choice, so what
Hypothesis draws never depends on the state: no preconditions, and a lease is picked by an
index among those given so far rather than drawn from a Bundle.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from uuid import UUID

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from tempest_typed import Engine, create_engine, select, sql, update
from tempest_typed.queue import Lease, Message, Queue, message_model

from ..conftest import database_url

LONG = 3600.0  # a lease that outlives the test
MAX_ATTEMPTS = 3
_tables = itertools.count()
#: which of the leases given so far a rule uses (modulo their number, which is the database's
#: doing: a Bundle's size would make what Hypothesis draws depend on it)
_PICK = st.integers(0, 1000)


@dataclasses.dataclass
class Expected:
    """What the model expects of one message."""

    key: str | None
    max_attempts: int
    status: str = "queued"
    attempts: int = 0
    token: UUID | None = None
    expired: bool = False  # for "sending": the lease has run out
    due_step: int | None = 0  # the step at which it became due; None: not due (delayed)


class QueueMachine(RuleBasedStateMachine):
    """Operations on a Queue, checked step by step against `Expected` states."""

    engine: Engine

    def __init__(self) -> None:
        super().__init__()
        self.step = 0
        table = f"prop_queue_{os.getpid()}_{next(_tables)}"
        self.model = message_model(table)
        self.engine.drop_all(self.model)
        self.queue = Queue(self.engine, "prop", model=self.model, lease_seconds=LONG,
                           max_attempts=MAX_ATTEMPTS, backoff_seconds=0)
        self.queue.create_table()
        self.expected: dict[UUID, Expected] = {}
        #: every lease given so far, current or stale
        self.leases: list[Lease] = []

    def teardown(self) -> None:
        self.engine.drop_all(self.model)

    # -- helpers ----------------------------------------------------------------------------

    def _tick(self) -> int:
        self.step += 1
        return self.step

    def _lease(self, pick: int) -> Lease | None:
        return self.leases[pick % len(self.leases)] if self.leases else None

    def _current(self, lease: Lease, *, late: bool = True) -> bool:
        """The lease still fences its message (late: also once the sweep dead-lettered it)."""
        found = self.expected.get(lease.id)
        statuses = ("sending", "failed") if late else ("sending",)
        return (found is not None and found.status in statuses
                and found.token == lease.token)

    def _expire(self, leases: list[Lease]) -> None:
        """Let the leases' time run out: their expiry becomes now()."""
        if leases:
            self.engine.execute(update(self.model).set({"next_attempt_at": sql.now()})
                                .where({"id": {"in": [lease.id for lease in leases]}}))

    def _dead_letter_expired(self) -> None:
        """What each claim does first: an expired lease on the final attempt fails."""
        for msg in self.expected.values():
            if msg.status == "sending" and msg.expired and msg.attempts >= msg.max_attempts:
                msg.status, msg.expired, msg.due_step = "failed", False, None  # token kept

    def _claimable(self) -> list[UUID]:
        return [i for i, m in self.expected.items()
                if m.attempts < m.max_attempts and m.due_step is not None
                and (m.status == "queued" or (m.status == "sending" and m.expired))]

    # -- rules ------------------------------------------------------------------------------

    @rule(key=st.none() | st.sampled_from(("k1", "k2", "k3")),
          limit=st.none() | st.integers(1, MAX_ATTEMPTS + 1),
          delayed=st.booleans())
    def enqueue(self, key: str | None, limit: int | None, delayed: bool) -> None:
        step = self._tick()
        new_id = self.queue.enqueue({"step": step}, key=key, max_attempts=limit,
                                    delay=LONG if delayed else 0.0)
        repeated = key is not None and any(m.key == key for m in self.expected.values())
        if repeated:
            assert new_id is None, f"key {key!r} was enqueued twice"
            return
        assert new_id is not None
        self.expected[new_id] = Expected(key, limit or MAX_ATTEMPTS,
                                         due_step=None if delayed else step)

    @rule(keys=st.lists(st.none() | st.sampled_from(("k1", "k2", "k4")), min_size=1,
                        max_size=4))
    def enqueue_many(self, keys: list[str | None]) -> None:
        step = self._tick()
        ids = self.queue.enqueue_many([Message({"i": i}, key) for i, key in enumerate(keys)])
        taken = {m.key for m in self.expected.values() if m.key is not None}
        accepted: list[str | None] = []
        for key in keys:  # the first of repeated keys in a batch wins
            if key is None or key not in taken:
                accepted.append(key)
                if key is not None:
                    taken.add(key)
        assert len(ids) == len(accepted), (keys, ids)
        for new_id, key in zip(ids, accepted, strict=True):
            row = self.engine.execute(select(self.model).where({"id": new_id})).one()
            assert row.idempotency_key == key
            self.expected[new_id] = Expected(key, MAX_ATTEMPTS, due_step=step)

    @rule(limit=st.integers(1, 4), expire=st.booleans())
    def claim(self, limit: int, expire: bool) -> None:
        step = self._tick()
        self._dead_letter_expired()
        claimable = self._claimable()
        got = self.queue.claim(limit, lease_seconds=LONG)
        if expire:
            self._expire(got)
        ids = [lease.id for lease in got]
        assert len(ids) == len(set(ids)) == min(limit, len(claimable)), (ids, claimable)
        assert set(ids) <= set(claimable), "a claim took a message that was not claimable"
        if self.engine.dialect.name == "postgresql":
            # oldest due first (SQLite's clock ticks in milliseconds: ties are arbitrary there)
            due = {i: self.expected[i].due_step for i in claimable}
            latest_taken = max((due[i] or 0 for i in ids), default=-1)
            assert all((due[i] or 0) >= latest_taken for i in claimable if i not in ids)
        tokens = {lease.token for lease in got}
        assert len(tokens) <= 1, "a claim gives its batch one token"
        for lease in got:
            msg = self.expected[lease.id]
            msg.status, msg.token, msg.expired = "sending", lease.token, expire
            msg.attempts += 1
            msg.due_step = step if expire else None
            assert lease.attempts == msg.attempts, "attempts must count the claims"
            assert lease.max_attempts == msg.max_attempts
        self.leases.extend(got)

    @rule(pick=_PICK)
    def ack(self, pick: int) -> None:
        self._tick()
        lease = self._lease(pick)
        if lease is None:
            return
        current = self._current(lease)
        assert self.queue.ack(lease) is current
        if current:
            msg = self.expected[lease.id]
            msg.status, msg.token, msg.expired, msg.due_step = "sent", None, False, None

    @rule(pick=_PICK, retry=st.booleans())
    def nack(self, pick: int, retry: bool) -> None:
        step = self._tick()
        lease = self._lease(pick)
        if lease is None:
            return
        current = self._current(lease)
        outcome = self.queue.nack(lease, "boom", retry=retry)
        if not current:
            assert outcome is None, "a stale lease's nack changed a message"
            return
        msg = self.expected[lease.id]
        dead = not retry or msg.attempts >= msg.max_attempts or msg.status == "failed"
        assert outcome == ("failed" if dead else "queued")
        msg.token, msg.expired = None, False
        msg.status, msg.due_step = ("failed", None) if dead else ("queued", step)

    @rule(pick=_PICK, expire=st.booleans())
    def extend(self, pick: int, expire: bool) -> None:
        step = self._tick()
        lease = self._lease(pick)
        if lease is None:
            return
        current = self._current(lease, late=False)
        assert self.queue.extend(lease, LONG) is current
        if current and expire:
            self._expire([lease])
        if current:
            msg = self.expected[lease.id]
            msg.expired, msg.due_step = expire, step if expire else None

    @rule()
    def dead_letter_expired(self) -> None:
        self._tick()
        before = sum(m.status == "failed" for m in self.expected.values())
        count = self.queue.dead_letter_expired()
        self._dead_letter_expired()
        assert count == sum(m.status == "failed" for m in self.expected.values()) - before

    @rule(batch_size=st.integers(1, 3), everything=st.booleans())
    def purge_sent(self, batch_size: int, everything: bool) -> None:
        self._tick()
        if everything:
            time.sleep(0.002)  # SQLite's clock ticks in milliseconds: be past every created_at
        older_than = timedelta(0) if everything else timedelta(hours=1)
        purged = self.queue.purge_sent(older_than, batch_size=batch_size)
        sent = [i for i, m in self.expected.items() if m.status == "sent"]
        assert purged == (len(sent) if everything else 0)
        if everything:
            for i in sent:
                del self.expected[i]

    @rule(some=st.booleans())
    def requeue_failed(self, some: bool) -> None:
        step = self._tick()
        failed = [i for i, m in self.expected.items() if m.status == "failed"]
        chosen = failed[:1] if some else failed
        count = self.queue.requeue_failed(chosen if some else None)
        assert count == len(chosen)
        for i in chosen:
            msg = self.expected[i]
            msg.status, msg.attempts, msg.token, msg.due_step = "queued", 0, None, step

    # -- invariants -------------------------------------------------------------------------

    @invariant()
    def counts_match(self) -> None:
        want = {"queued": 0, "sending": 0, "sent": 0, "failed": 0}
        for msg in self.expected.values():
            want[msg.status] += 1
        assert self.queue.counts() == want

    @invariant()
    def every_message_is_as_expected(self) -> None:
        rows = self.engine.execute(select(self.model)).all()
        actual = {r.id: (r.status, r.attempts, r.lease_token, r.idempotency_key) for r in rows}
        want = {i: (m.status, m.attempts, m.token, m.key) for i, m in self.expected.items()}
        assert actual == want


def _settings() -> settings:
    """Bounded under the ci profile, longer under dev and deep."""
    profile = settings.get_current_profile_name()
    examples, steps = {"ci": (15, 20), "dev": (25, 30)}.get(profile, (300, 50))
    return settings(settings.default, max_examples=examples, stateful_step_count=steps)


@pytest.fixture(params=["postgresql", "sqlite"])
def queue_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """An engine on PostgreSQL or on an SQLite file."""
    engine = create_engine(database_url(request, request.param, tmp_path), pool_size=2)
    try:
        yield engine
    finally:
        engine.close()


def test_the_queue_behaves_as_its_model(queue_engine: Engine) -> None:
    machine = type("QueueOn" + queue_engine.dialect.name.title(), (QueueMachine,),
                   {"engine": queue_engine})
    run_state_machine_as_test(machine, settings=_settings())
