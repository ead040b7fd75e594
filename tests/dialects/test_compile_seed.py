"""Golden SQL and parameters for every statement of the seed recipe, on every dialect.

Where a database cannot express a statement, compile() raises DialectError naming the way
out; those cases are asserted here next to the dialects that can.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import pytest

from tempest_typed import DialectError, Statement, delete, insert, select, sql, update

from ..models import Outbound

ID1 = UUID(int=1)
ID2 = UUID(int=2)
RETRY_AT = datetime(2024, 1, 1, 12, 0, tzinfo=UTC)
BACKOFF = 30
ALL_COLUMNS = ('"id", "consumer", "idempotency_key", "status", "attempts", "next_attempt_at", '
               '"updated_at"')
ALL_COLUMNS_MY = ALL_COLUMNS.replace('"', "`")


def message() -> Outbound:
    return Outbound(id=ID1, consumer="billing", idempotency_key="k-1", next_attempt_at=RETRY_AT)


ROW_PARAMS = (ID1, "billing", "k-1", "queued", 0, RETRY_AT, None)

# -- 1. Claim a batch, two steps: select ... for update skip locked, then update in ids ------


def claim_select() -> Statement[Any]:
    return (select(Outbound, ["id"]).where({"status": "queued"}).order_by("next_attempt_at")
            .limit(10).for_update(skip_locked=True))


def claim_update() -> Statement[Any]:
    return update(Outbound).set({
        "status": "sending",
        "attempts": sql.raw("attempts + 1"),
        "updated_at": sql.now(),
    }).where({"id": {"in": [ID1, ID2]}})


@pytest.mark.parametrize(("dialect", "expected"), [
    ("postgresql", 'SELECT "id" FROM "outbound_messages" WHERE "status" = %s '
                   'ORDER BY "next_attempt_at" ASC LIMIT 10 FOR UPDATE SKIP LOCKED'),
    ("mysql", "SELECT `id` FROM `outbound_messages` WHERE `status` = %s "
              "ORDER BY `next_attempt_at` ASC LIMIT 10 FOR UPDATE SKIP LOCKED"),
    ("mariadb", "SELECT `id` FROM `outbound_messages` WHERE `status` = %s "
                "ORDER BY `next_attempt_at` ASC LIMIT 10 FOR UPDATE SKIP LOCKED"),
])
def test_claim_select(dialect: str, expected: str) -> None:
    assert claim_select().compile(dialect) == (expected, ("queued",))


def test_claim_select_on_sqlite_says_to_serialize_in_a_transaction() -> None:
    with pytest.raises(DialectError, match="SQLite has no row-level locks") as err:
        claim_select().compile("sqlite")
    assert "transaction" in str(err.value)
    assert "drop for_update() for SQLite" in str(err.value)


def test_claim_select_without_the_lock_on_sqlite() -> None:
    stmt = (select(Outbound, ["id"]).where({"status": "queued"}).order_by("next_attempt_at")
            .limit(10))
    assert stmt.compile("sqlite") == (
        'SELECT "id" FROM "outbound_messages" WHERE "status" = ? '
        'ORDER BY "next_attempt_at" ASC LIMIT 10', ("queued",))


@pytest.mark.parametrize(("dialect", "expected"), [
    ("postgresql", 'UPDATE "outbound_messages" SET "status" = %s, "attempts" = attempts + 1, '
                   '"updated_at" = now() WHERE "id" IN (%s, %s)'),
    ("sqlite", 'UPDATE "outbound_messages" SET "status" = ?, "attempts" = attempts + 1, '
               "\"updated_at\" = (strftime('%Y-%m-%d %H:%M:%f', 'now') || '000') "
               'WHERE "id" IN (?, ?)'),
    ("mysql", "UPDATE `outbound_messages` SET `status` = %s, `attempts` = attempts + 1, "
              "`updated_at` = UTC_TIMESTAMP(6) WHERE `id` IN (%s, %s)"),
    ("mariadb", "UPDATE `outbound_messages` SET `status` = %s, `attempts` = attempts + 1, "
                "`updated_at` = UTC_TIMESTAMP(6) WHERE `id` IN (%s, %s)"),
])
def test_claim_update(dialect: str, expected: str) -> None:
    assert claim_update().compile(dialect) == (expected, ("sending", ID1, ID2))


# -- 1b. The single-statement claim: update ... where id in (select ... for update) ----------


def single_claim() -> Statement[Any]:
    return update(Outbound).set({
        "status": "sending",
        "attempts": sql.raw("attempts + 1"),
        "updated_at": sql.now(),
    }).where({
        "id": {
            "in": select(Outbound).where({"status": "queued"}).order_by("next_attempt_at")
            .limit(10).for_update(skip_locked=True).as_subquery("id"),
        },
    }).returning()


def test_single_claim_on_postgresql() -> None:
    assert single_claim().compile("postgresql") == (
        'UPDATE "outbound_messages" SET "status" = %s, "attempts" = attempts + 1, '
        '"updated_at" = now() WHERE "id" IN (SELECT "id" FROM "outbound_messages" '
        'WHERE "status" = %s ORDER BY "next_attempt_at" ASC LIMIT 10 FOR UPDATE SKIP LOCKED) '
        f"RETURNING {ALL_COLUMNS}",
        ("sending", "queued"),
    )


def test_single_claim_on_sqlite_has_no_lock() -> None:
    with pytest.raises(DialectError, match="SQLite has no row-level locks"):
        single_claim().compile("sqlite")


@pytest.mark.parametrize("dialect", ["mysql", "mariadb"])
def test_single_claim_on_mysql_points_to_the_two_step_claim(dialect: str) -> None:
    with pytest.raises(DialectError) as err:
        single_claim().compile(dialect)
    text = str(err.value)
    assert "LIMIT in IN (SELECT ...)" in text
    assert "two-step claim" in text
    assert "for_update(skip_locked=True)" in text


# -- 2. Idempotency: on conflict on the partial unique index ---------------------------------


def idempotent_insert() -> Statement[Any]:
    return insert(Outbound).values(message()).on_conflict_do_nothing(
        ["consumer", "idempotency_key"], where={"idempotency_key": {"is_null": False}},
    ).returning()


@pytest.mark.parametrize(("dialect", "ph"), [("postgresql", "%s"), ("sqlite", "?")])
def test_idempotent_insert(dialect: str, ph: str) -> None:
    marks = ", ".join([ph] * 7)
    assert idempotent_insert().compile(dialect) == (
        f'INSERT INTO "outbound_messages" ({ALL_COLUMNS}) VALUES ({marks}) '
        'ON CONFLICT ("consumer", "idempotency_key") WHERE "idempotency_key" IS NOT NULL '
        f"DO NOTHING RETURNING {ALL_COLUMNS}",
        ROW_PARAMS,
    )


@pytest.mark.parametrize("dialect", ["mysql", "mariadb"])
def test_idempotent_insert_on_mysql_has_no_conflict_target(dialect: str) -> None:
    stmt = insert(Outbound).values(message()).on_conflict_do_nothing(
        ["consumer", "idempotency_key"], where={"idempotency_key": {"is_null": False}})
    with pytest.raises(DialectError) as err:
        stmt.compile(dialect)
    assert "INSERT IGNORE, which has no conflict target" in str(err.value)
    assert "ON DUPLICATE KEY UPDATE" not in str(err.value)
    assert "on_conflict_do_nothing()" in str(err.value)


@pytest.mark.parametrize("dialect", ["mysql", "mariadb"])
def test_idempotent_insert_on_mysql_the_way_out(dialect: str) -> None:
    # INSERT IGNORE skips a row that hits any unique key, as ON CONFLICT DO NOTHING does.
    stmt = insert(Outbound).values(message()).on_conflict_do_nothing()
    assert stmt.compile(dialect) == (
        f"INSERT IGNORE INTO `outbound_messages` ({ALL_COLUMNS_MY}) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s)",
        ROW_PARAMS,
    )


def test_idempotent_insert_returning_on_mariadb() -> None:
    stmt = insert(Outbound).values(message()).on_conflict_do_nothing().returning("id")
    compiled = stmt.compile("mariadb").sql
    assert compiled.startswith("INSERT IGNORE INTO `outbound_messages`")
    assert compiled.endswith(" VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING `id`")


def test_idempotent_insert_returning_on_mysql() -> None:
    with pytest.raises(DialectError, match="mysql has no RETURNING"):
        insert(Outbound).values(message()).on_conflict_do_nothing().returning().compile("mysql")


# -- 2b. The upsert with both predicates -----------------------------------------------------


def upsert() -> Statement[Any]:
    return insert(Outbound).values(message()).on_conflict_do_update(
        ["consumer", "idempotency_key"],
        {"status": "queued", "next_attempt_at": RETRY_AT},
        index_where={"idempotency_key": {"is_null": False}},
        update_where={"attempts": {"lt": 5}},
    )


@pytest.mark.parametrize(("dialect", "ph"), [("postgresql", "%s"), ("sqlite", "?")])
def test_upsert(dialect: str, ph: str) -> None:
    marks = ", ".join([ph] * 7)
    assert upsert().compile(dialect) == (
        f'INSERT INTO "outbound_messages" ({ALL_COLUMNS}) VALUES ({marks}) '
        'ON CONFLICT ("consumer", "idempotency_key") WHERE "idempotency_key" IS NOT NULL '
        f'DO UPDATE SET "status" = {ph}, "next_attempt_at" = {ph} '
        f'WHERE "outbound_messages"."attempts" < {ph}',
        (*ROW_PARAMS, "queued", RETRY_AT, 5),
    )


@pytest.mark.parametrize("dialect", ["mysql", "mariadb"])
def test_upsert_on_mysql_refuses_target_and_predicates(dialect: str) -> None:
    with pytest.raises(DialectError) as err:
        upsert().compile(dialect)
    assert "no conflict target and no predicate" in str(err.value)
    assert "on_conflict_do_update(None, set)" in str(err.value)


@pytest.mark.parametrize("dialect", ["mysql", "mariadb"])
def test_upsert_on_mysql_the_way_out(dialect: str) -> None:
    stmt = insert(Outbound).values(message()).on_conflict_do_update(
        None, {"status": "queued", "next_attempt_at": RETRY_AT})
    assert stmt.compile(dialect) == (
        f"INSERT INTO `outbound_messages` ({ALL_COLUMNS_MY}) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s) "
        "ON DUPLICATE KEY UPDATE `status` = %s, `next_attempt_at` = %s",
        (*ROW_PARAMS, "queued", RETRY_AT),
    )


# -- 3. Counters without a race: sql.raw, sql.expr, sql.now in set ---------------------------


def counter() -> Statement[Any]:
    return update(Outbound).set({
        "attempts": sql.raw("attempts + 1"),
        "next_attempt_at": sql.expr("now() + {} * interval '1 second'", BACKOFF),
        "updated_at": sql.now(),
    }).where({"id": ID1})


@pytest.mark.parametrize(("dialect", "expected"), [
    ("postgresql", 'UPDATE "outbound_messages" SET "attempts" = attempts + 1, '
                   "\"next_attempt_at\" = now() + %s * interval '1 second', "
                   '"updated_at" = now() WHERE "id" = %s'),
    ("sqlite", 'UPDATE "outbound_messages" SET "attempts" = attempts + 1, '
               "\"next_attempt_at\" = now() + ? * interval '1 second', "
               "\"updated_at\" = (strftime('%Y-%m-%d %H:%M:%f', 'now') || '000') "
               'WHERE "id" = ?'),
    ("mysql", "UPDATE `outbound_messages` SET `attempts` = attempts + 1, "
              "`next_attempt_at` = now() + %s * interval '1 second', "
              "`updated_at` = UTC_TIMESTAMP(6) WHERE `id` = %s"),
    ("mariadb", "UPDATE `outbound_messages` SET `attempts` = attempts + 1, "
                "`next_attempt_at` = now() + %s * interval '1 second', "
                "`updated_at` = UTC_TIMESTAMP(6) WHERE `id` = %s"),
])
def test_counter_update(dialect: str, expected: str) -> None:
    # sql.expr's text is verbatim on every dialect; only its {} become placeholders.
    assert counter().compile(dialect) == (expected, (BACKOFF, ID1))


@pytest.mark.parametrize(("dialect", "expected"), [
    ("postgresql", "(now() + CAST(%s AS double precision) * interval '1 second')"),
    ("sqlite", "(strftime('%Y-%m-%d %H:%M:%f', 'now', (?) || ' seconds') || '000')"),
    ("mysql", "(UTC_TIMESTAMP(6) + INTERVAL ROUND((%s) * 1000000) MICROSECOND)"),
    ("mariadb", "(UTC_TIMESTAMP(6) + INTERVAL ROUND((%s) * 1000000) MICROSECOND)"),
])
def test_portable_backoff_with_now_plus(dialect: str, expected: str) -> None:
    stmt = update(Outbound).set({"next_attempt_at": sql.now(plus=BACKOFF)}).where({"id": ID1})
    compiled = stmt.compile(dialect)
    assert compiled.sql.split(" = ", 1)[1].rsplit(" WHERE ", 1)[0] == expected
    assert compiled.params == (BACKOFF, ID1)


# -- The complete worker: ack and nack -------------------------------------------------------


def ack() -> Statement[Any]:
    return update(Outbound).set({"status": "sent", "updated_at": sql.now()}).where({"id": ID1})


def nack() -> Statement[Any]:
    return update(Outbound).set({
        "status": "queued",
        "next_attempt_at": sql.expr("now() + {} * interval '1 second'", BACKOFF),
    }).where({"id": ID1})


@pytest.mark.parametrize(("dialect", "expected"), [
    ("postgresql", 'UPDATE "outbound_messages" SET "status" = %s, "updated_at" = now() '
                   'WHERE "id" = %s'),
    ("sqlite", 'UPDATE "outbound_messages" SET "status" = ?, "updated_at" = '
               "(strftime('%Y-%m-%d %H:%M:%f', 'now') || '000') WHERE \"id\" = ?"),
    ("mysql", "UPDATE `outbound_messages` SET `status` = %s, `updated_at` = UTC_TIMESTAMP(6) "
              "WHERE `id` = %s"),
    ("mariadb", "UPDATE `outbound_messages` SET `status` = %s, "
                "`updated_at` = UTC_TIMESTAMP(6) WHERE `id` = %s"),
])
def test_ack(dialect: str, expected: str) -> None:
    assert ack().compile(dialect) == (expected, ("sent", ID1))


@pytest.mark.parametrize(("dialect", "expected"), [
    ("postgresql", 'UPDATE "outbound_messages" SET "status" = %s, '
                   "\"next_attempt_at\" = now() + %s * interval '1 second' WHERE \"id\" = %s"),
    ("sqlite", 'UPDATE "outbound_messages" SET "status" = ?, '
               "\"next_attempt_at\" = now() + ? * interval '1 second' WHERE \"id\" = ?"),
    ("mysql", "UPDATE `outbound_messages` SET `status` = %s, "
              "`next_attempt_at` = now() + %s * interval '1 second' WHERE `id` = %s"),
    ("mariadb", "UPDATE `outbound_messages` SET `status` = %s, "
                "`next_attempt_at` = now() + %s * interval '1 second' WHERE `id` = %s"),
])
def test_nack(dialect: str, expected: str) -> None:
    assert nack().compile(dialect) == (expected, ("queued", BACKOFF, ID1))


def test_delivered_rows_can_be_purged() -> None:
    stmt = delete(Outbound).where({"status": "sent"})
    assert stmt.compile("postgresql") == (
        'DELETE FROM "outbound_messages" WHERE "status" = %s', ("sent",))
    assert stmt.compile("mysql") == ("DELETE FROM `outbound_messages` WHERE `status` = %s",
                                     ("sent",))


def test_compiled_unpacks_as_sql_and_params() -> None:
    text, params = ack().compile("postgresql")
    assert text.startswith("UPDATE")
    assert params == ("sent", ID1)
