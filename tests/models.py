"""The models the core tests share: the seed's outbound queue, and a few small tables that
exercise every column kind and every naming convention."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Literal
from uuid import UUID, uuid4

from tempest_typed import Index, Model, column, sql

Status = Literal["queued", "sending", "sent", "failed"]


class Outbound(Model, table="outbound_messages"):
    """The seed's queue table, as API.md writes it."""

    id: UUID = column(primary_key=True, default_factory=uuid4)
    consumer: str
    idempotency_key: str | None = None
    status: Status = "queued"
    attempts: int = 0
    next_attempt_at: datetime
    updated_at: datetime | None = None

    __indexes__ = (
        Index("outbound_idempotency_unique", ["consumer", "idempotency_key"],
              unique=True, where={"idempotency_key": {"is_null": False}}),
        Index("outbound_claim", ["status", "next_attempt_at"]),
    )


class Everything(Model, table="everything"):
    """One column of every kind, nullable and not, to test operators and DDL types."""

    id: int = column(primary_key=True)
    name: str
    label: str | None = None
    code: str = column(max_length=12, default="x")
    state: Literal["on", "off"] = "off"
    count: int = 0
    ratio: float = 0.0
    price: Decimal = Decimal("0")
    active: bool = True
    payload: bytes = b""
    at: datetime | None = None
    day: date | None = None
    ref: UUID | None = None
    doc: dict[str, object] | None = None
    created_at: datetime = column(server_default=sql.now())


class Account(Model, table="accounts"):
    """A second table, for subqueries over another model."""

    id: int = column(primary_key=True)
    owner: str
    balance: int = 0
    closed: bool = False


class Quoted(Model, table='odd "table" `name`'):
    """Identifiers that need quoting on every dialect."""

    id: int = column(primary_key=True)
    spaced: str = column(name="a column")
    ticked: int = column(name="back`tick", default=0)
    dquoted: int = column(name='dou"ble', default=0)


class Snake(Model, naming="snake_case"):
    """The seed's convention: attributes in camelCase, SQL in snake_case."""

    id: int = column(primary_key=True)
    nextAttemptAt: datetime
    updatedAt: datetime | None = None


class Keyed(Model, table="keyed"):
    """A text primary key the database cannot generate: required on insert."""

    code: str = column(primary_key=True)
    name: str
