"""Joins, aggregates, column references and subqueries, executed on the three databases.

One small billing data set: four users (one without orders, one managed by another) and five
orders. Every test states the exact rows it expects, with their Python types.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Literal

import pytest

from tempest_typed import (
    DialectError,
    Engine,
    Model,
    ValidationError,
    column,
    insert,
    join,
    select,
    sql,
    update,
)

from .conftest import Fresh

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


class User(Model, table="eng_rel_users"):
    id: int = column(primary_key=True)
    email: str
    country: str
    credit: int = 0
    manager_id: int | None = column(default=None, references="eng_rel_users.id")


class Order(Model, table="eng_rel_orders"):
    id: int = column(primary_key=True)
    user_id: int = column(references="eng_rel_users.id")
    cents: int
    price: float
    status: Literal["new", "paid", "refunded"]
    created_at: datetime
    updated_at: datetime | None = None


class Invoice(Model, table="eng_rel_invoices"):
    """A Decimal amount, which SQLite cannot sum exactly."""

    id: int = column(primary_key=True)
    user_id: int
    amount: Decimal


USERS = [
    User(id=1, email="Ana@example.com", country="PT", credit=100),
    User(id=2, email="bob@example.com", country="PT", credit=50),
    User(id=3, email="cid_50%@example.com", country="ES", credit=0),
    User(id=4, email="dee@example.com", country="PT", credit=10, manager_id=1),
]
ORDERS = [
    Order(id=1, user_id=1, cents=3000, price=30.5, status="paid", created_at=T0),
    Order(id=2, user_id=1, cents=8000, price=80.0, status="paid",
          created_at=T0 + timedelta(days=1), updated_at=T0 + timedelta(days=2)),
    Order(id=3, user_id=2, cents=7000, price=70.0, status="new",
          created_at=T0 + timedelta(days=2)),
    Order(id=4, user_id=2, cents=2000, price=20.0, status="paid",
          created_at=T0 + timedelta(days=3), updated_at=T0 + timedelta(days=1)),
    Order(id=5, user_id=3, cents=1000, price=10.0, status="refunded",
          created_at=T0 + timedelta(days=4)),
]


@pytest.fixture
def db(fresh: Fresh) -> Iterator[Engine]:
    """The parametrized engine with the billing tables filled."""
    engine = fresh(User, Order)
    engine.execute(insert(User).values(USERS))
    engine.execute(insert(Order).values(ORDERS))
    yield engine


def ids(rows: object) -> list[int]:
    return [row.id for row in rows]  # type: ignore[attr-defined]


def test_inner_join_rows_are_models_keyed_by_alias(db: Engine) -> None:
    rows = db.execute(
        join(User, "user")
        .inner_join(Order, "order", {"user.id": "order.user_id"})
        .where({"order.status": "paid", "user.country": "PT"})
        .order_by("order.created_at", "desc")
        .limit(20)
    ).all()
    assert [(r.user.id, r.order.id) for r in rows] == [(2, 4), (1, 2), (1, 1)]
    assert all(isinstance(r.user, User) and isinstance(r.order, Order) for r in rows)
    assert rows[1]["order"].created_at == T0 + timedelta(days=1)
    assert rows[1].order.updated_at == T0 + timedelta(days=2)
    assert rows[2].order.updated_at is None
    assert rows[0].user == USERS[1]


def test_left_join_side_without_a_match_is_none(db: Engine) -> None:
    rows = db.execute(
        join(User, "user").left_join(Order, "order", {"user.id": "order.user_id"})
        .order_by("user.id").order_by("order.id")
    ).all()
    assert [(r.user.id, r.order.id if r.order else None) for r in rows] == [
        (1, 1), (1, 2), (2, 3), (2, 4), (3, 5), (4, None)]
    assert rows[-1].order is None


def test_left_join_anti_join_finds_users_without_orders(db: Engine) -> None:
    rows = db.execute(
        join(User, "user").left_join(Order, "order", {"user.id": "order.user_id"})
        .where({"order.id": None})
    ).all()
    assert [r.user.email for r in rows] == ["dee@example.com"]


def test_self_join_with_two_aliases(db: Engine) -> None:
    rows = db.execute(
        join(User, "u").inner_join(User, "manager", {"u.manager_id": "manager.id"})
    ).all()
    assert [(r.u.id, r.manager.id) for r in rows] == [(4, 1)]


def test_three_table_join_with_left_side_in_the_middle(db: Engine) -> None:
    rows = db.execute(
        join(User, "u")
        .left_join(User, "manager", {"u.manager_id": "manager.id"})
        .inner_join(Order, "o", {"u.id": "o.user_id"})
        .where({"o.status": "paid"})
        .order_by("o.id")
    ).all()
    assert [(r.u.id, r.manager, r.o.id) for r in rows] == [(1, None, 1), (1, None, 2),
                                                          (2, None, 4)]


def test_aggregate_per_user_with_having_and_order(db: Engine) -> None:
    rows = db.execute(
        select(Order)
        .where({"status": {"in": ["paid", "new"]}})
        .aggregate(["user_id"], {"orders": sql.count(), "spent": sql.sum("cents"),
                                 "mean": sql.avg("price"), "first": sql.min("created_at"),
                                 "biggest": sql.max("cents")})
        .having({"orders": {"gte": 2}})
        .order_by("spent", "desc")
    ).all()
    assert [tuple(r) for r in rows] == [
        (1, 2, 11000, 55.25, T0, 8000),
        (2, 2, 9000, 45.0, T0 + timedelta(days=2), 7000),
    ]
    first = rows[0]
    assert (first.user_id, first.orders, first.spent) == (1, 2, 11000)
    assert type(first.orders) is int and type(first.spent) is int
    assert type(first.mean) is float and type(first.biggest) is int
    assert first.first.tzinfo is not None


def test_aggregate_over_a_join_groups_by_qualified_columns(db: Engine) -> None:
    rows = db.execute(
        join(User, "user")
        .left_join(Order, "order", {"user.id": "order.user_id"})
        .aggregate(["user.id", "user.email"],
                   {"n": sql.count("order.id"), "last": sql.max("order.created_at")})
        .order_by("user.id")
    ).all()
    assert [(r.id, r.email, r.n, r.last) for r in rows] == [
        (1, "Ana@example.com", 2, T0 + timedelta(days=1)),
        (2, "bob@example.com", 2, T0 + timedelta(days=3)),
        (3, "cid_50%@example.com", 1, T0 + timedelta(days=4)),
        (4, "dee@example.com", 0, None),
    ]


def test_aggregate_without_groups_is_one_row(db: Engine) -> None:
    row = db.execute(
        select(Order).where({"status": "paid"})
        .aggregate([], {"n": sql.count(), "total": sql.sum("cents"),
                        "users": sql.count_distinct("user_id")})
    ).one()
    assert tuple(row) == (3, 13000, 2)
    empty = db.execute(
        select(Order).where({"status": "paid", "cents": {"gt": 10**6}})
        .aggregate([], {"n": sql.count(), "total": sql.sum("cents"), "mean": sql.avg("cents")})
    ).one()
    assert tuple(empty) == (0, None, None)


def test_pagination_with_a_total(db: Engine) -> None:
    base = select(Order).where({"status": {"ne": "refunded"}})
    page = db.execute(base.order_by("created_at").limit(2).offset(2)).all()
    total = db.execute(base.aggregate([], {"n": sql.count()})).scalar()
    assert ids(page) == [3, 4] and total == 4 and type(total) is int


def test_distinct(db: Engine) -> None:
    rows = db.execute(select(Order, ["user_id"]).distinct().order_by("user_id")).all()
    assert [r.user_id for r in rows] == [1, 2, 3]


def test_column_reference_in_where_and_set(db: Engine) -> None:
    later = db.execute(select(Order).where({"updated_at": {"gt": sql.col("created_at")}})).all()
    assert ids(later) == [2]
    db.execute(update(Order).set({"updated_at": sql.col("created_at")}).where({"id": 5}))
    row = db.execute(select(Order).where({"id": 5})).one()
    assert row.updated_at == row.created_at == T0 + timedelta(days=4)


def test_exists_and_not_exists_correlate_with_the_outer_table(db: Engine) -> None:
    paid = db.execute(
        select(User).where(sql.exists(
            select(Order).where({"user_id": sql.col("eng_rel_users.id"), "status": "paid"})))
        .order_by("id")
    ).all()
    assert ids(paid) == [1, 2]
    no_paid = db.execute(
        select(User).where(sql.not_exists(
            select(Order).where({"user_id": sql.col("eng_rel_users.id"), "status": "paid"})))
        .order_by("id")
    ).all()
    assert ids(no_paid) == [3, 4]


def test_exists_of_a_join_alias(db: Engine) -> None:
    rows = db.execute(
        join(User, "u").where(sql.exists(
            select(Order).where({"user_id": sql.col("u.id"), "cents": {"gt": 5000}})))
        .order_by("u.id")
    ).all()
    assert [r.u.id for r in rows] == [1, 2]


def test_scalar_subquery_compares_with_the_biggest_order(db: Engine) -> None:
    biggest = (select(Order, ["cents"]).where({"user_id": sql.col("eng_rel_users.id")})
               .order_by("cents", "desc").limit(1).as_subquery("cents"))
    rows = db.execute(
        select(User).where({"credit": {"lt": sql.scalar(biggest)}}).order_by("id")
    ).all()
    # credits in cents' units: 100 < 8000, 50 < 7000, 0 < 1000; dee has no order (NULL).
    assert ids(rows) == [1, 2, 3]


def test_latest_order_per_user(db: Engine) -> None:
    latest = (select(Order, ["created_at"]).where({"user_id": sql.col("o.user_id")})
              .order_by("created_at", "desc").limit(1).as_subquery("created_at"))
    rows = db.execute(
        join(Order, "o").where({"o.created_at": sql.scalar(latest)}).order_by("o.user_id")
    ).all()
    assert [(r.o.user_id, r.o.id) for r in rows] == [(1, 2), (2, 4), (3, 5)]


def test_in_subquery_of_an_aggregate(db: Engine) -> None:
    busy = (select(Order).aggregate(["user_id"], {"n": sql.count()})
            .having({"n": {"gte": 2}}).as_subquery("user_id"))
    rows = db.execute(select(User).where({"id": {"in": busy}}).order_by("id")).all()
    assert ids(rows) == [1, 2]


@pytest.mark.parametrize(("op", "text", "expected"), [
    ("contains", "_50%", [3]),
    ("contains", "%", [3]),
    ("contains", "_", [3]),
    ("icontains", "ANA@", [1]),
    ("startswith", "cid_", [3]),
    ("startswith", "c_d", []),
    ("endswith", "@example.com", [1, 2, 3, 4]),
    ("contains", "\\", []),
])
def test_escaping_string_operators_match_literal_text(db: Engine, op: str, text: str,
                                                      expected: list[int]) -> None:
    rows = db.execute(select(User).where({"email": {op: text}}).order_by("id")).all()
    assert ids(rows) == expected


def test_like_still_takes_wildcards(db: Engine) -> None:
    rows = db.execute(select(User).where({"email": {"like": "c_d%"}})).all()
    assert ids(rows) == [3]


def test_lock_only_the_named_alias(db: Engine) -> None:
    stmt = (join(User, "user").inner_join(Order, "order", {"user.id": "order.user_id"})
            .where({"order.id": 1}).for_update(of=["order"]))
    if db.dialect.name in ("sqlite", "mariadb"):
        with pytest.raises(DialectError):
            stmt.compile(db.dialect)
        return
    with db.transaction() as tx:
        rows = tx.execute(stmt).all()
    assert [(r.user.id, r.order.id) for r in rows] == [(1, 1)]


def test_lock_with_an_aggregate_is_a_dialect_error_in_any_order(db: Engine) -> None:
    first = select(Order).for_update().aggregate([], {"n": sql.count()})
    after = select(Order).aggregate([], {"n": sql.count()}).for_update()
    for stmt in (first, after, select(Order, ["user_id"]).distinct().for_share()):
        with pytest.raises(DialectError, match="lock the rows in a separate select"):
            stmt.compile(db.dialect)


def test_decimal_aggregates(fresh: Fresh) -> None:
    engine = fresh(Invoice)
    engine.execute(insert(Invoice).values([
        {"id": 1, "user_id": 1, "amount": Decimal("10.10")},
        {"id": 2, "user_id": 1, "amount": Decimal("0.20")},
        {"id": 3, "user_id": 2, "amount": Decimal("5")},
    ]))
    stmt = (select(Invoice).aggregate(["user_id"], {"total": sql.sum("amount"),
                                                    "mean": sql.avg("amount")})
            .order_by("user_id"))
    if engine.dialect.name == "sqlite":
        with pytest.raises(DialectError, match="SQLite stores Decimal as text"):
            engine.execute(stmt)
        return
    rows = engine.execute(stmt).all()
    assert [r.user_id for r in rows] == [1, 2]
    assert [r.total for r in rows] == [Decimal("10.30"), Decimal("5")]
    assert all(type(r.total) is Decimal and type(r.mean) is Decimal for r in rows)
    assert rows[0].mean == Decimal("5.15")


def test_unknown_alias_and_bare_name_in_a_join_are_validation_errors() -> None:
    q = join(User, "user").inner_join(Order, "order", {"user.id": "order.user_id"})
    with pytest.raises(ValidationError, match=r"no alias 'ordr'.*did you mean 'order'"):
        q.where({"ordr.status": "paid"})
    with pytest.raises(ValidationError, match=r"not qualified.*aliases: user, order"):
        q.where({"status": "paid"})
    with pytest.raises(ValidationError, match=r"Order has no column 'stat'"):
        q.order_by("order.stat")
