"""Compiled SQL of joins, aggregates, column references and subqueries, per dialect, and the
errors of what cannot be built or expressed."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Literal

import pytest

from tempest_typed import (
    DialectError,
    Model,
    ValidationError,
    column,
    delete,
    join,
    select,
    sql,
    update,
)


class User(Model, table="users"):
    id: int = column(primary_key=True)
    email: str
    country: str
    credit_limit: Decimal = Decimal(0)
    manager_id: int | None = column(default=None, references="users.id")
    doc: dict[str, object] | None = None


class Order(Model, table="orders"):
    id: int = column(primary_key=True)
    user_id: int = column(references="users.id")
    total: Decimal
    cents: int
    status: Literal["new", "paid", "refunded"]
    created_at: datetime
    updated_at: datetime | None = None
    paid: bool = False


USER_COLS = '"user"."id", "user"."email", "user"."country", "user"."credit_limit", "user"."manager_id", "user"."doc"'
ORDER_COLS = ('"order"."id", "order"."user_id", "order"."total", "order"."cents", '
              '"order"."status", "order"."created_at", "order"."updated_at", "order"."paid"')


def paid_join() -> object:
    return (join(User, "user").inner_join(Order, "order", {"user.id": "order.user_id"})
            .where({"order.status": "paid", "user.country": "PT"})
            .order_by("order.created_at", "desc").limit(20))


def test_inner_join_postgresql() -> None:
    assert paid_join().compile("postgresql") == (  # type: ignore[attr-defined]
        f'SELECT {USER_COLS}, {ORDER_COLS} FROM "users" AS "user" INNER JOIN "orders" AS '
        '"order" ON "user"."id" = "order"."user_id" WHERE "order"."status" = %s AND '
        '"user"."country" = %s ORDER BY "order"."created_at" DESC LIMIT 20',
        ("paid", "PT"))


def test_inner_join_sqlite_and_mysql_quote_their_way() -> None:
    sqlite = paid_join().compile("sqlite")  # type: ignore[attr-defined]
    assert sqlite.sql.endswith('ORDER BY "order"."created_at" DESC LIMIT 20')
    mysql = paid_join().compile("mysql")  # type: ignore[attr-defined]
    assert "FROM `users` AS `user` INNER JOIN `orders` AS `order` ON `user`.`id` = " \
           "`order`.`user_id`" in mysql.sql


def test_left_join_anti_join_and_nullable_order() -> None:
    q = (join(User, "user").left_join(Order, "order", {"user.id": "order.user_id"})
         .where({"order.id": None}).order_by("order.cents"))
    text = q.compile("postgresql").sql
    assert ' LEFT JOIN "orders" AS "order" ON ' in text
    # a left-joined column can be NULL: PostgreSQL is told the portable NULL order
    assert text.endswith('WHERE "order"."id" IS NULL ORDER BY "order"."cents" ASC NULLS FIRST')


def test_multi_column_on_is_an_and() -> None:
    q = join(User, "u").inner_join(User, "m", {"u.manager_id": "m.id", "u.country": "m.country"})
    assert q.compile("sqlite").sql.endswith(
        'FROM "users" AS "u" INNER JOIN "users" AS "m" ON "u"."manager_id" = "m"."id" AND '
        '"u"."country" = "m"."country"')


def test_aggregate_having_order_by_label() -> None:
    q = (select(Order).where({"status": "paid"})
         .aggregate(["user_id"], {"orders": sql.count(), "spent": sql.sum("cents"),
                                  "kinds": sql.count_distinct("status")})
         .having({"orders": {"gt": 2}}).order_by("spent", "desc"))
    assert q.compile("postgresql") == (
        'SELECT "user_id", COUNT(*) AS "orders", SUM("cents") AS "spent", '
        'COUNT(DISTINCT "status") AS "kinds" FROM "orders" WHERE "status" = %s '
        'GROUP BY "user_id" HAVING COUNT(*) > %s ORDER BY SUM("cents") DESC NULLS LAST',
        ("paid", 2))
    assert q.compile("mysql").sql.endswith(
        "GROUP BY `user_id` HAVING COUNT(*) > %s ORDER BY SUM(`cents`) DESC")


def test_aggregate_without_groups_has_no_group_by() -> None:
    q = select(Order).aggregate([], {"n": sql.count()})
    assert q.compile("sqlite") == ('SELECT COUNT(*) AS "n" FROM "orders"', ())


def test_distinct() -> None:
    assert select(Order, ["user_id"]).distinct().compile("postgresql").sql == \
        'SELECT DISTINCT "user_id" FROM "orders"'


def test_column_references() -> None:
    q = select(Order, ["id"]).where({"updated_at": {"gt": sql.col("created_at")}})
    assert q.compile("postgresql").sql == \
        'SELECT "id" FROM "orders" WHERE "updated_at" > "created_at"'
    u = update(Order).set({"updated_at": sql.col("created_at")}).where({"id": 7})
    assert u.compile("mysql") == (
        "UPDATE `orders` SET `updated_at` = `created_at` WHERE `id` = %s", (7,))


def test_exists_correlates_by_table_name_and_offsets_values() -> None:
    inner = select(Order, ["id"]).where({"user_id": sql.col("users.id"), "status": "paid"})
    q = select(User, ["id"]).where({"country": "PT"}, sql.exists(inner)).limit(5)
    assert q.compile("postgresql") == (
        'SELECT "id" FROM "users" WHERE "country" = %s AND EXISTS (SELECT "id" FROM "orders" '
        'WHERE "user_id" = "users"."id" AND "status" = %s) LIMIT 5', ("PT", "paid"))
    assert "NOT EXISTS (" in select(User).where(sql.not_exists(inner)).compile("sqlite").sql


def test_scalar_subquery_as_a_value() -> None:
    biggest = (select(Order, ["total"]).where({"user_id": sql.col("users.id")})
               .order_by("total", "desc").limit(1).as_subquery("total"))
    q = select(User, ["id"]).where({"credit_limit": {"lt": sql.scalar(biggest)}})
    assert q.compile("mariadb").sql == (
        "SELECT `id` FROM `users` WHERE `credit_limit` < (SELECT `total` FROM `orders` "
        "WHERE `user_id` = `users`.`id` ORDER BY `total` DESC LIMIT 1)")


def test_escaping_operators_bind_escaped_patterns() -> None:
    q = select(User, ["id"]).where({"email": {"contains": "50%_\\"}})
    assert q.compile("postgresql") == (
        'SELECT "id" FROM "users" WHERE "email" LIKE %s', ("%50\\%\\_\\\\%",))
    assert q.compile("sqlite").sql.endswith("LIKE ? ESCAPE '\\'")
    assert select(User).where({"email": {"startswith": "a_"}}).compile("mysql").params == (
        "a\\_%",)
    assert select(User).where({"email": {"endswith": "x"}}).compile("mysql").params == ("%x",)
    assert "ILIKE" in select(User).where({"email": {"icontains": "A"}}).compile(
        "postgresql").sql


# -- what the dialects cannot express ---------------------------------------------------------


def test_lock_with_aggregate_or_distinct_in_any_order() -> None:
    for stmt in (select(Order).for_update().aggregate([], {"n": sql.count()}),
                 select(Order).aggregate(["user_id"], {"n": sql.count()}).for_share(),
                 select(Order, ["id"]).for_update().distinct()):
        for dialect in ("postgresql", "mysql", "mariadb"):
            with pytest.raises(DialectError, match="lock the rows in a separate select"):
                stmt.compile(dialect)


def test_mariadb_has_no_of_for_some_aliases() -> None:
    q = (join(User, "user").inner_join(Order, "order", {"user.id": "order.user_id"})
         .for_update(of=["order"]))
    assert q.compile("postgresql").sql.endswith('FOR UPDATE OF "order"')
    assert q.compile("mysql").sql.endswith("FOR UPDATE OF `order`")
    with pytest.raises(DialectError, match="MariaDB has no OF"):
        q.compile("mariadb")
    every = q.for_update(of=["user", "order"])
    assert every.compile("mariadb").sql.endswith("FOR UPDATE")


def test_postgresql_cannot_lock_the_nullable_side() -> None:
    q = join(User, "user").left_join(Order, "order", {"user.id": "order.user_id"})
    with pytest.raises(DialectError, match=r"nullable side of a LEFT JOIN.*of=\['user'\]"):
        q.for_update().compile("postgresql")
    assert q.for_update(of=["user"]).compile("postgresql").sql.endswith('FOR UPDATE OF "user"')


def test_sqlite_decimal_aggregates_name_the_way_out() -> None:
    q = select(Order).aggregate(["user_id"], {"s": sql.sum("total")})
    with pytest.raises(DialectError, match="SQLite stores Decimal as text"):
        q.compile("sqlite")
    assert "SUM(\"total\")" in q.compile("postgresql").sql


def test_mysql_subquery_on_the_updated_table() -> None:
    q = delete(Order).where(sql.exists(select(Order).where({"status": "new"})))
    with pytest.raises(DialectError, match="error 1093"):
        q.compile("mysql")


# -- what cannot be built ---------------------------------------------------------------------


def test_join_names_are_checked_at_build_time() -> None:
    q = join(User, "user").inner_join(Order, "order", {"user.id": "order.user_id"})
    with pytest.raises(ValidationError, match=r"no alias 'ordr'.*did you mean 'order'"):
        q.where({"ordr.status": "paid"})
    with pytest.raises(ValidationError, match=r"'status' in where\(\) is not qualified"):
        q.where({"status": "paid"})
    with pytest.raises(ValidationError, match=r"Order has no column 'stat'.*did you mean"):
        q.order_by("order.stat")
    with pytest.raises(ValidationError, match="alias 'user' is already used"):
        q.inner_join(User, "user", {"order.user_id": "user.id"})
    with pytest.raises(ValidationError, match="maps to a column of the new table 'm'"):
        q.inner_join(User, "m", {"user.manager_id": "user.id"})


def test_on_pairs_and_column_comparisons_are_of_one_family() -> None:
    with pytest.raises(ValidationError, match="compared columns must be of one family"):
        join(User, "u").inner_join(Order, "o", {"u.email": "o.user_id"})
    with pytest.raises(ValidationError, match="compared columns must be of one family"):
        select(Order).where({"cents": {"gt": sql.col("created_at")}})
    with pytest.raises(ValidationError, match="compared columns must be of one family"):
        select(User).where({"email": sql.scalar(select(Order, ["cents"]).as_subquery("cents"))})
    # numbers compare with numbers: int and Decimal
    select(Order).where({"cents": {"gt": sql.col("total")}}).compile("postgresql")


def test_correlated_references_are_checked_where_they_land() -> None:
    inner = select(Order).where({"user_id": sql.col("users.idd")})
    with pytest.raises(ValidationError, match="User has no column 'idd'"):
        select(User).where(sql.exists(inner))
    wrong_type = select(Order).where({"user_id": sql.col("users.email")})
    with pytest.raises(ValidationError, match="compared columns must be of one family"):
        select(User).where(sql.exists(wrong_type))
    nowhere = select(User).where(sql.exists(select(Order).where({"user_id": sql.col("x.id")})))
    with pytest.raises(ValidationError, match=r"sql.col\('x.id'\) names no table or alias"):
        nowhere.compile("postgresql")


def test_aggregate_inputs_are_checked() -> None:
    with pytest.raises(ValidationError, match="sum takes numbers only"):
        select(Order).aggregate([], {"s": sql.sum("status")})
    with pytest.raises(ValidationError, match="min takes numbers, dates, times and strings"):
        select(Order).aggregate([], {"m": sql.min("paid")})
    with pytest.raises(ValidationError, match="label 'user_id' is also the field"):
        select(Order).aggregate(["user_id"], {"user_id": sql.count()})
    with pytest.raises(ValidationError, match="both name a row field 'id'"):
        (join(User, "u").inner_join(Order, "o", {"u.id": "o.user_id"})
         .aggregate(["u.id", "o.id"], {"n": sql.count()}))
    grouped = select(Order).aggregate(["user_id"], {"n": sql.count()})
    with pytest.raises(ValidationError, match="has no column 'status'"):
        grouped.order_by("status")
    with pytest.raises(ValidationError, match="has no column 'cents'"):
        grouped.having({"cents": 3})
    with pytest.raises(ValidationError, match="expects int"):
        grouped.having({"n": "many"})
    with pytest.raises(ValidationError, match="takes a list of group columns"):
        select(Order).aggregate("user_id", {"n": sql.count()})  # type: ignore[arg-type]


def test_exists_takes_a_select() -> None:
    with pytest.raises(ValidationError, match="takes a select, a join or an as_subquery"):
        sql.exists(update(Order).set({"cents": 1}).where({"id": 1}))  # type: ignore[arg-type]


def test_a_left_joined_column_accepts_none_an_inner_one_does_not() -> None:
    q = join(User, "user").left_join(Order, "order", {"user.id": "order.user_id"})
    q.where({"order.cents": None})
    with pytest.raises(ValidationError, match="not nullable"):
        q.where({"user.email": None})


def test_a_join_shape_is_cached_like_any_other() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    a = paid_join().where({"order.created_at": {"gt": at}})  # type: ignore[attr-defined]
    b = paid_join().where({"order.created_at": {"gt": at}})  # type: ignore[attr-defined]
    assert a._key() == b._key() and hash(a._key()) == hash(b._key())
