"""The models every typecheck case imports (one module, so mypy caches it once)."""

from datetime import date, datetime
from decimal import Decimal
from typing import Literal
from uuid import UUID, uuid4

from tempest_typed import Index, Model, column, sql

Status = Literal["queued", "sending", "sent", "failed"]


class Outbound(Model, table="outbound_messages"):
    id: UUID = column(primary_key=True, default_factory=uuid4)
    consumer: str
    idempotency_key: str | None = None
    status: Status = "queued"
    attempts: int = 0
    next_attempt_at: datetime
    updated_at: datetime | None = None
    created_at: datetime = column(server_default=sql.now())

    __indexes__ = (
        Index("outbound_idempotency_unique", ["consumer", "idempotency_key"],
              unique=True, where={"idempotency_key": {"is_null": False}}),
        Index("outbound_claim", ["status", "next_attempt_at"]),
    )


class Account(Model, naming="snake_case"):
    id: int = column(primary_key=True)
    email: str = column(name="email_address", max_length=200)
    active: bool = True
    balance: Decimal = Decimal(0)
    born: date | None = None
    tags: list[str] = column(default_factory=list)
    owner_id: UUID | None = None


OrderStatus = Literal["new", "paid", "refunded"]


class User(Model, table="users"):
    id: int = column(primary_key=True)
    email: str
    country: str
    credit_limit: Decimal = Decimal(0)
    manager_id: int | None = column(default=None, references="users.id")
    settings: dict[str, str] = column(default_factory=dict)
    avatar: bytes | None = None


class Order(Model, table="orders"):
    id: int = column(primary_key=True)
    user_id: int = column(references="users.id")
    total: Decimal
    cents: int
    status: OrderStatus
    paid: bool = False
    created_at: datetime
    updated_at: datetime | None = None
    due: date | None = None
