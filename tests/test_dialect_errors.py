"""What a database cannot do is a DialectError raised by compile(), naming the way out;
building the statement succeeds, since the same statement may suit another dialect."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tempest_typed import DialectError, delete, insert, select, update
from tempest_typed.dialects import get_dialect

from .models import Account, Everything, Outbound


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


@pytest.mark.parametrize("dialect", ["mysql", "mariadb"])
@pytest.mark.parametrize("clause", ["limit", "offset"])
def test_limit_inside_an_in_subquery_on_mysql(dialect: str, clause: str) -> None:
    sub = getattr(select(Outbound).where({"status": "queued"}), clause)(10).as_subquery("id")
    stmt = select(Outbound, ["id"]).where({"id": {"in": sub}})
    with pytest.raises(DialectError) as err:
        stmt.compile(dialect)
    text = str(err.value)
    assert f"{dialect} rejects LIMIT in IN (SELECT ...)" in text
    assert "use the two-step claim" in text


@pytest.mark.parametrize("dialect", ["mysql", "mariadb"])
def test_subquery_on_the_table_being_updated_on_mysql(dialect: str) -> None:
    sub = select(Outbound).where({"status": "queued"}).as_subquery("id")
    stmt = update(Outbound).set({"status": "sending"}).where({"id": {"in": sub}})
    with pytest.raises(DialectError) as err:
        stmt.compile(dialect)
    assert "cannot read the table being updated or deleted" in str(err.value)
    assert "two-step claim" in str(err.value)
    with pytest.raises(DialectError, match="error 1093"):
        delete(Outbound).where({"id": {"in": sub}}).compile(dialect)


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


@pytest.mark.parametrize("kind", ["update", "delete", "insert"])
def test_returning_on_mysql(kind: str) -> None:
    stmt = {
        "update": update(Account).set({"owner": "a"}).where({"id": 1}),
        "delete": delete(Account).where({"id": 1}),
        "insert": insert(Account).values({"owner": "a"}),
    }[kind].returning()
    with pytest.raises(DialectError) as err:
        stmt.compile("mysql")
    assert f"{kind}(Account).returning(): mysql has no RETURNING" in str(err.value)
    assert "select the rows you need in the same transaction" in str(err.value)


def test_update_returning_on_mariadb() -> None:
    stmt = update(Account).set({"owner": "a"}).where({"id": 1}).returning()
    with pytest.raises(DialectError) as err:
        stmt.compile("mariadb")
    text = str(err.value)
    assert "MariaDB has RETURNING on INSERT and DELETE only, not on UPDATE" in text
    assert "two-step claim" in text


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
