"""Every builder method returns a new statement: a stored statement can be reused and
extended, and the original compiles exactly as before."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import delete, insert, select, sql, update

from ..models import Account, Outbound


def snapshot(stmt: Any) -> tuple[str, tuple[object, ...]]:
    compiled = stmt.compile("postgresql")
    return compiled.sql, compiled.params


def test_select_extensions_leave_the_base_unchanged() -> None:
    base = select(Account).where({"owner": "a"})
    before = snapshot(base)
    extended = [
        base.where({"balance": {"gt": 1}}),
        base.order_by("id", "desc"),
        base.limit(5),
        base.offset(5),
        base.for_update(skip_locked=True),
        base.for_share(no_wait=True),
    ]
    assert snapshot(base) == before
    assert all(e is not base for e in extended)
    assert len({snapshot(e) for e in extended}) == len(extended)


def test_two_branches_of_one_base_do_not_see_each_other() -> None:
    base = select(Account).where({"owner": "a"})
    rich = base.where({"balance": {"gt": 100}})
    closed = base.where({"closed": True})
    assert snapshot(rich) == (
        'SELECT "id", "owner", "balance", "closed" FROM "accounts" '
        'WHERE "owner" = %s AND "balance" > %s', ("a", 100))
    assert snapshot(closed) == (
        'SELECT "id", "owner", "balance", "closed" FROM "accounts" '
        'WHERE "owner" = %s AND "closed" = %s', ("a", True))


def test_limit_on_a_copy_does_not_leak_its_value() -> None:
    base = select(Account).limit(1)
    base.limit(50)
    base.offset(3)
    assert snapshot(base) == ('SELECT "id", "owner", "balance", "closed" FROM "accounts" '
                              "LIMIT 1", ())


def test_as_subquery_leaves_the_select_unchanged() -> None:
    base = select(Outbound).where({"status": "queued"}).limit(10)
    before = snapshot(base)
    base.as_subquery("id")
    assert snapshot(base) == before
    assert base.columns == ("id", "consumer", "idempotency_key", "status", "attempts",
                            "next_attempt_at", "updated_at")


def test_a_subquery_is_frozen_when_taken() -> None:
    base = select(Account).where({"closed": True})
    sub = base.as_subquery("id")
    base.where({"owner": "later"})  # does not reach the subquery
    stmt = delete(Account).where({"id": {"in": sub}})
    assert snapshot(stmt)[1] == (True,)


def test_update_extensions_leave_the_base_unchanged() -> None:
    base = update(Account).set({"owner": "a"})
    before = snapshot(base)
    base.set({"balance": sql.raw("balance + 1")})
    base.where({"id": 1})
    base.returning("id")
    guarded = base.unguarded()
    assert snapshot(base) == before
    assert not base.guarded
    assert guarded.guarded


def test_delete_extensions_leave_the_base_unchanged() -> None:
    base = delete(Account)
    assert not base.guarded
    scoped = base.where({"closed": True})
    base.returning()
    assert not base.guarded
    assert scoped.guarded
    assert snapshot(base) == ('DELETE FROM "accounts"', ())


def test_insert_extensions_leave_the_base_unchanged() -> None:
    base = insert(Account).values({"owner": "a"})
    before = snapshot(base)
    more = base.values({"owner": "b"})
    base.on_conflict_do_nothing(["id"])
    base.on_conflict_do_update(["id"], {"owner": sql.excluded("owner")})
    base.returning()
    assert snapshot(base) == before
    assert (base.row_count, more.row_count) == (1, 2)


def test_a_failed_call_leaves_the_statement_usable() -> None:
    base = update(Account).set({"owner": "a"})
    with pytest.raises(ValueError):
        base.set({"balance": "not an int"})
    assert snapshot(base.where({"id": 1})) == (
        'UPDATE "accounts" SET "owner" = %s WHERE "id" = %s', ("a", 1))


def test_a_stored_statement_compiles_the_same_every_time() -> None:
    stmt = select(Account).where({"id": {"in": [1, 2]}}).order_by("id")
    assert snapshot(stmt) == snapshot(stmt)
    assert stmt.compile("sqlite") == stmt.compile("sqlite")


def test_statements_have_no_instance_dict() -> None:
    with pytest.raises(AttributeError):
        select(Account).extra = 1  # type: ignore[attr-defined]
