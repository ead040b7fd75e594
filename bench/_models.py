"""The tables the benchmarks use, written three ways: a tempest_typed model, a SQLAlchemy Core
Table, and the DDL the raw driver runs. All three describe the same table, so every side runs
the same SQL against the same rows. Table names start with `bench_` to stay out of the way of
the tests' tables.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID, uuid4

import sqlalchemy as sa

from tempest_typed import Index, Model, column, select, sql, update

Status = Literal["queued", "sending", "sent", "failed"]

OUTBOUND_TABLE = "bench_outbound"


class Outbound(Model, table=OUTBOUND_TABLE):
    """The seed's queue table."""

    id: UUID = column(primary_key=True, default_factory=uuid4)
    consumer: str
    idempotency_key: str | None = None
    status: Status = "queued"
    attempts: int = 0
    next_attempt_at: datetime
    updated_at: datetime | None = None

    __indexes__ = (
        Index("bench_outbound_idempotency_unique", ["consumer", "idempotency_key"],
              unique=True, where={"idempotency_key": {"is_null": False}}),
        Index("bench_outbound_claim", ["status", "next_attempt_at"]),
    )


sa_metadata = sa.MetaData()

sa_outbound = sa.Table(
    OUTBOUND_TABLE, sa_metadata,
    sa.Column("id", sa.Uuid, primary_key=True),
    sa.Column("consumer", sa.Text, nullable=False),
    sa.Column("idempotency_key", sa.Text),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True)),
)


def tempest_claim(size: int) -> Any:
    """The seed's claim in one statement, as API.md writes it."""
    return (
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
    )


def sa_claim(size: int) -> Any:
    """The same claim in SQLAlchemy Core."""
    t = sa_outbound
    sub = (
        sa.select(t.c.id)
        .where(t.c.status == "queued")
        .order_by(t.c.next_attempt_at)
        .limit(size)
        .with_for_update(skip_locked=True)
        .scalar_subquery()
    )
    return (
        sa.update(t)
        .values(status="sending", attempts=sa.literal_column("attempts + 1"),
                updated_at=sa.func.now())
        .where(t.c.id.in_(sub))
        .returning(*t.c)
    )


class Person(Model, table="bench_people"):
    """The seed library's own SQLite benchmark table."""

    id: int = column(primary_key=True)
    name: str
    email: str
    age: int
    active: bool


sa_people = sa.Table(
    "bench_people", sa_metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("email", sa.Text, nullable=False),
    sa.Column("age", sa.Integer, nullable=False),
    sa.Column("active", sa.Boolean, nullable=False),
)
