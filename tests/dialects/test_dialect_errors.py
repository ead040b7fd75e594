"""What a database cannot do is a DialectError raised by compile(), naming the way out;
building the statement succeeds, since the same statement may suit another dialect."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest

from tempest_typed import DialectError, delete, insert, join, select, sql, update
from tempest_typed.dialects import get_dialect

from ..models import Account, Everything, Outbound


def test_unknown_dialect() -> None:
    with pytest.raises(DialectError, match="use 'postgresql', 'sqlite', 'mysql' or 'mariadb'"):
        select(Account).compile("oracle")


def test_postgres_is_an_alias() -> None:
    assert get_dialect("postgres") is get_dialect("postgresql")


# -- SQLite: no row locks ---------------------------------------------------------------------


@pytest.mark.parametrize("lock", ["for_update", "for_share"])
def test_row_locks_on_sqlite(lock: str) -> None:
    stmt = getattr(select(Account), lock)()
    with pytest.raises(DialectError) as err:
        stmt.compile("sqlite")
    text = str(err.value)
    assert f"select(Account).{lock}(): SQLite has no row-level locks" in text
    assert "serialize the claim in a transaction" in text
    assert f"drop {lock}() for SQLite" in text


def test_row_lock_inside_a_subquery_on_sqlite() -> None:
    sub = select(Account).limit(1).for_update().as_subquery("id")
    with pytest.raises(DialectError, match="SQLite has no row-level locks"):
        delete(Account).where({"id": {"in": sub}}).compile("sqlite")


@pytest.mark.parametrize("op", [{"gt": Decimal(1)}, {"between": [Decimal(0), Decimal(1)]}])
def test_ordered_decimal_comparison_on_sqlite(op: dict[str, object]) -> None:
    stmt = select(Everything).where({"price": op})
    with pytest.raises(DialectError, match="SQLite stores Decimal as text"):
        stmt.compile("sqlite")
    assert stmt.compile("postgresql")  # fine where decimals are numbers
    assert select(Everything).where({"price": Decimal(1)}).compile("sqlite")


# -- MySQL / MariaDB --------------------------------------------------------------------------


def _message(stmt: Any, dialect: str) -> str:
    with pytest.raises(DialectError) as err:
        stmt.compile(dialect)
    return str(err.value)


def _queued(clause: str = "limit") -> Any:
    return getattr(select(Outbound).where({"status": "queued"}), clause)(10)


# Each message advises what fits the statement written: the two-step claim for an update that
# claims rows, the ids first for a delete, the values as a list for a select.


@pytest.mark.parametrize("dialect", ["mysql", "mariadb"])
@pytest.mark.parametrize("clause", ["limit", "offset"])
def test_limit_inside_an_in_subquery_of_a_select_on_mysql(dialect: str, clause: str) -> None:
    stmt = select(Outbound, ["id"]).where({"id": {"in": _queued(clause).as_subquery("id")}})
    text = _message(stmt, dialect)
    assert f"{dialect} rejects LIMIT in IN (SELECT ...)" in text
    assert text.endswith("run the subquery as a select of its own first, and pass the "
                         'values it fetched as a list: {"id": {"in": values}}')
    assert "claim" not in text


@pytest.mark.parametrize("dialect", ["mysql", "mariadb"])
def test_limit_inside_an_in_subquery_of_an_update_is_the_claim(dialect: str) -> None:
    sub = _queued().for_update(skip_locked=True).as_subquery("id")
    text = _message(update(Outbound).set({"status": "sending"}).where({"id": {"in": sub}}),
                    dialect)
    assert f"{dialect} rejects LIMIT in IN (SELECT ...)" in text
    assert text.endswith(
        "use the two-step claim: in engine.transaction(), select the ids with "
        'for_update(skip_locked=True), then update(Outbound).where({"id": {"in": ids}})')


@pytest.mark.parametrize("dialect", ["mysql", "mariadb"])
def test_limit_inside_an_in_subquery_of_a_delete_selects_the_ids_first(dialect: str) -> None:
    text = _message(delete(Outbound).where({"id": {"in": _queued().as_subquery("id")}}), dialect)
    assert text.endswith(
        "in engine.transaction(), select the ids first (with for_update() so they stay as "
        'selected), then delete(Outbound).where({"id": {"in": ids}})')
    assert "claim" not in text


@pytest.mark.parametrize("dialect", ["mysql", "mariadb"])
def test_limit_inside_an_in_subquery_names_the_column_it_feeds(dialect: str) -> None:
    owners = select(Account, ["owner"]).order_by("owner").limit(5).as_subquery("owner")
    text = _message(update(Outbound).set({"status": "sending"})
                    .where({"consumer": {"in": owners}}), dialect)
    assert text.endswith(
        "use the two-step claim: in engine.transaction(), select the consumers with "
        'for_update(skip_locked=True), then update(Outbound).where({"consumer": {"in": '
        'consumers}})')
    text = _message(update(Outbound).set({"status": "sending"})
                    .where({"consumer": {"in": owners}}).returning(), dialect)
    assert "rows it changed" not in text  # consumers name no row of Outbound
    text = _message(delete(Outbound).where({"consumer": {"not_in": owners}}), dialect)
    assert text.endswith(
        "in engine.transaction(), select the consumers first (with for_update() so they stay "
        'as selected), then delete(Outbound).where({"consumer": {"not_in": consumers}})')
    text = _message(select(Outbound).where({"consumer": {"in": owners}}), dialect)
    assert text.endswith('as a list: {"consumer": {"in": values}}')


@pytest.mark.parametrize("dialect", ["mysql"])
def test_subquery_on_the_table_being_updated_on_mysql(dialect: str) -> None:
    sub = select(Outbound).where({"status": "queued"}).as_subquery("id")
    text = _message(update(Outbound).set({"status": "sending"}).where({"id": {"in": sub}}),
                    dialect)
    assert text.startswith(f"update(Outbound): {dialect} cannot read the table being updated "
                           "or deleted in a subquery (error 1093); in engine.transaction(), "
                           "select the ids first")
    assert text.endswith('then update(Outbound).where({"id": {"in": ids}})')
    claim = select(Outbound).where({"status": "queued"}).for_update(skip_locked=True)
    text = _message(update(Outbound).set({"status": "sending"})
                    .where({"id": {"in": claim.as_subquery("id")}}), dialect)
    assert "error 1093); use the two-step claim" in text
    text = _message(delete(Outbound).where({"id": {"in": sub}}), dialect)
    assert text.startswith(f"delete(Outbound): {dialect} cannot read the table")
    assert text.endswith('then delete(Outbound).where({"id": {"in": ids}})')


def test_mariadb_reads_the_table_being_updated_or_deleted_in_a_subquery() -> None:
    sub = select(Outbound).where({"status": "queued"}).as_subquery("id")
    assert update(Outbound).set({"status": "sending"}).where(
        {"id": {"in": sub}}).compile("mariadb").sql == (
        "UPDATE `outbound_messages` SET `status` = %s WHERE `id` IN "
        "(SELECT `id` FROM `outbound_messages` WHERE `status` = %s)")
    assert delete(Outbound).where({"id": {"in": sub}}).compile("mariadb").sql.startswith(
        "DELETE FROM `outbound_messages` WHERE `id` IN (SELECT `id` FROM `outbound_messages`")


def test_subquery_on_another_table_is_fine_on_mysql() -> None:
    sub = select(Account).where({"closed": True}).as_subquery("id")
    stmt = delete(Everything).where({"id": {"in": sub}})
    assert stmt.compile("mysql").sql == (
        "DELETE FROM `everything` WHERE `id` IN "
        "(SELECT `id` FROM `accounts` WHERE `closed` = %s)")


@pytest.mark.parametrize("dialect", ["mysql", "mariadb"])
@pytest.mark.parametrize("kwargs", [
    {"target": ["id"]},
    {"target": ["id"], "where": {"closed": False}},
])
def test_conflict_target_on_mysql(dialect: str, kwargs: dict[str, object]) -> None:
    stmt = insert(Account).values({"owner": "a"}).on_conflict_do_nothing(**kwargs)  # type: ignore[arg-type]
    with pytest.raises(DialectError) as err:
        stmt.compile(dialect)
    text = str(err.value)
    assert "insert(Account).on_conflict_do_nothing()" in text
    # The message names the call the user wrote, not another statement's spelling.
    assert "INSERT IGNORE, which has no conflict target and no predicate" in text
    assert "ON DUPLICATE KEY UPDATE" not in text


@pytest.mark.parametrize("dialect", ["mysql", "mariadb"])
@pytest.mark.parametrize("kwargs", [
    {"target": ["id"]},
    {"target": None, "update_where": {"balance": {"lt": 5}}},
])
def test_upsert_target_or_predicate_on_mysql(dialect: str, kwargs: dict[str, object]) -> None:
    stmt = insert(Account).values({"owner": "a"}).on_conflict_do_update(
        set={"owner": "b"}, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(DialectError, match=r"i\.e\. on_conflict_do_update\(None, set\)"):
        stmt.compile(dialect)


@pytest.mark.parametrize(("kind", "way_out"), [
    ("update", "in engine.transaction(), run the update, then select(Account) with the same "
               "where reads the rows it changed"),
    ("delete", "in engine.transaction(), select(Account) with the same where and for_update() "
               "first (the rows the delete will remove), then run the delete"),
    ("insert", "in engine.transaction(), run the insert, then select the rows by a key you "
               "gave them (a UUID from default_factory, a unique column); for one row, "
               'tx.execute_sql("SELECT LAST_INSERT_ID()") reads the identity the database '
               "filled"),
])
def test_returning_on_mysql(kind: str, way_out: str) -> None:
    stmt = {
        "update": update(Account).set({"owner": "a"}).where({"id": 1}),
        "delete": delete(Account).where({"id": 1}),
        "insert": insert(Account).values({"owner": "a"}),
    }[kind].returning()
    assert _message(stmt, "mysql") == f"{kind}(Account).returning(): mysql has no RETURNING; {way_out}"


@pytest.mark.parametrize("dialect", ["mysql", "mariadb"])
def test_update_returning_advises_what_fits_the_update(dialect: str) -> None:
    plain = _message(update(Account).set({"owner": "a"}).where({"id": 1}).returning(), dialect)
    assert plain.endswith("in engine.transaction(), run the update, then select(Account) "
                          "with the same where reads the rows it changed")
    assert "claim" not in plain
    every = _message(update(Account).set({"owner": "a"}).unguarded().returning("id"), dialect)
    assert every.endswith("run the update, then select(Account) reads every row it changed")
    # It changes what its where reads: selecting by the same where afterwards finds others.
    claim = _message(update(Outbound).set({"status": "sending"})
                     .where({"status": "queued"}).returning(), dialect)
    assert ("the update sets status, which its where reads, so the same where finds other "
            "rows afterwards: in engine.transaction(), select the ids by the where first with "
            "for_update()") in claim
    assert "the two-step claim" in claim
    assert claim.endswith('run update(Outbound).where({"id": {"in": ids}}), then select the '
                          "rows by those ids")


def test_update_returning_on_mariadb() -> None:
    text = _message(update(Account).set({"owner": "a"}).where({"id": 1}).returning(), "mariadb")
    assert "MariaDB has RETURNING on INSERT and DELETE only, not on UPDATE" in text


def test_insert_and_delete_returning_on_mariadb() -> None:
    assert delete(Account).where({"id": 1}).returning("id").compile("mariadb").sql == (
        "DELETE FROM `accounts` WHERE `id` = %s RETURNING `id`")
    assert insert(Account).values({"owner": "a"}).returning("id").compile("mariadb").sql == (
        "INSERT INTO `accounts` (`owner`, `balance`, `closed`) VALUES (%s, %s, %s) "
        "RETURNING `id`")


# -- PostgreSQL -------------------------------------------------------------------------------


def test_upsert_without_target_on_postgresql() -> None:
    stmt = insert(Account).values({"owner": "a"}).on_conflict_do_update(None, {"owner": "b"})
    with pytest.raises(DialectError) as err:
        stmt.compile("postgresql")
    assert "postgresql needs a conflict target" in str(err.value)
    assert 'on_conflict_do_update(["id"], {...})' in str(err.value)


def test_a_statement_that_fails_on_one_dialect_still_compiles_on_another() -> None:
    stmt = select(Account).for_update(skip_locked=True)
    with pytest.raises(DialectError):
        stmt.compile("sqlite")
    assert stmt.compile("postgresql").sql.endswith("FOR UPDATE SKIP LOCKED")


def test_repr_never_raises() -> None:
    assert repr(insert(Account)).startswith("<Insert <not compilable:")


def test_a_lock_of_rows_no_table_holds_is_refused_everywhere() -> None:
    windowed = select(Account, ["id"]).add_columns(
        {"place": sql.row_number().over(order_by=["balance"])})
    named = sql.cte("rich", select(Account, ["id", "owner"]).where({"balance": {"gt": 5}}))
    cases = [
        (windowed.for_update(), "with a window function: PostgreSQL refuses the lock"),
        (select(named).for_share(), "'rich' is a named select (sql.cte)"),
        (join(Account, "a").inner_join(named, "r", {"a.id": "r.id"}).for_update(of=["r"]),
         "'r' is a named select (sql.cte)"),
    ]
    for stmt, message in cases:
        for dialect in ("postgresql", "mysql", "sqlite"):
            with pytest.raises(DialectError, match=re.escape(message)):
                stmt.compile(dialect)
    # a join's lock of its tables stands beside a named select it reads
    locked = join(Account, "a").inner_join(named, "r", {"a.id": "r.id"}).for_update(of=["a"])
    assert locked.compile("postgresql").sql.endswith('FOR UPDATE OF "a"')
