"""Each dialect's capability flags say what its compiler does: the layers above ask them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tempest_typed import DialectError, Index, Model, column, delete, insert, select, update
from tempest_typed.dialects import get_dialect
from tempest_typed.dialects.ddl import create_statements

DIALECTS = ["postgresql", "sqlite", "mysql", "mariadb"]


class Job(Model, table="cap_jobs"):
    id: int = column(primary_key=True)
    key: str | None = None
    due: datetime

    __indexes__ = (Index("cap_jobs_due", ["due"], where={"key": {"is_null": False}}),)


def compiles(stmt: object, name: str) -> bool:
    try:
        stmt.compile(name)  # type: ignore[attr-defined]  # every statement kind has compile()
    except DialectError:
        return False
    return True


@pytest.mark.parametrize("name", DIALECTS)
def test_row_locks(name: str) -> None:
    assert compiles(select(Job).for_update(skip_locked=True), name) is (
        get_dialect(name).supports_row_locks)


@pytest.mark.parametrize("name", DIALECTS)
def test_returning(name: str) -> None:
    kinds = get_dialect(name).supports_returning
    assert compiles(insert(Job).values({"due": datetime(2026, 1, 1, tzinfo=UTC)}).returning(), name) is (
        "insert" in kinds)
    assert compiles(update(Job).set({"key": "k"}).where({"id": 1}).returning(), name) is (
        "update" in kinds)
    assert compiles(delete(Job).where({"id": 1}).returning(), name) is ("delete" in kinds)


@pytest.mark.parametrize("name", DIALECTS)
def test_limit_in_subquery(name: str) -> None:
    due = select(Job, ["id"]).order_by("due").limit(10).as_subquery("id")
    claim = update(Job).set({"key": "k"}).where({"id": {"in": due}})
    assert compiles(claim, name) is get_dialect(name).supports_limit_in_subquery


@pytest.mark.parametrize("name", DIALECTS)
def test_conflict_target(name: str) -> None:
    upsert = insert(Job).values({"due": datetime(2026, 1, 1, tzinfo=UTC), "key": "k"}).on_conflict_do_update(
        ["id"], {"key": "again"})
    assert compiles(upsert, name) is get_dialect(name).supports_conflict_target


@pytest.mark.parametrize("name", DIALECTS)
def test_partial_indexes(name: str) -> None:
    ddl = " ".join(create_statements(Job, get_dialect(name)))
    assert (" WHERE " in ddl) is get_dialect(name).supports_partial_indexes


def test_connection_ids_and_ending_them_come_together() -> None:
    for name in DIALECTS:
        dialect = get_dialect(name)
        assert (dialect.connection_id_sql is None) is (dialect.terminate_connection_sql is None)
    assert get_dialect("sqlite").connection_id_sql is None  # one process, no server


@pytest.mark.parametrize("name", DIALECTS)
def test_a_claim_has_a_way_to_take_rows_alone(name: str) -> None:
    # the queue's claim takes row locks, or holds the one write lock of the database
    dialect = get_dialect(name)
    assert dialect.supports_row_locks or dialect.serializes_write_transactions


@pytest.mark.parametrize("name", DIALECTS)
def test_flags_are_plain_values(name: str) -> None:
    dialect = get_dialect(name)
    assert isinstance(dialect.worker_holds_connection, bool)
    assert dialect.worker_holds_connection is (name == "postgresql")
