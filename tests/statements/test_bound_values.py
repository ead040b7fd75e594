"""What a built statement binds: its own copy of each value, of the value's plain type.

Changing a dict, a list or a bytearray after building changes nothing the statement stores;
an enum member is bound as its value; a column value no database takes is refused when the
statement is built; and sql.now(plus=...) takes only seconds that give a timestamp.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from enum import Enum, IntEnum
from fractions import Fraction
from typing import Any

import pytest

from tempest_typed import ValidationError, delete, insert, select, sql, update

from ..models import Everything


def params(stmt: Any, dialect: str = "postgresql") -> tuple[object, ...]:
    return tuple(stmt.compile(dialect).params)


def test_insert_keeps_its_own_copy_of_json_and_bytes() -> None:
    doc: dict[str, object] = {"tags": ["a"], "nested": {"n": 1}, "pair": (1, [2])}
    payload = bytearray(b"ab")
    stmt = insert(Everything).values({"id": 1, "name": "x", "doc": doc, "payload": payload})
    before = params(stmt)
    doc["tags"].append("b")  # type: ignore[attr-defined]  # a list, as built above
    doc["nested"]["n"] = 2  # type: ignore[index]  # a dict, as built above
    doc["pair"][1].append(3)  # type: ignore[index]  # a tuple holding a list
    doc["new"] = True
    payload[0] = ord("z")
    assert params(stmt) == before
    assert {"tags": ["a"], "nested": {"n": 1}, "pair": (1, [2])} in before
    assert b"ab" in before and not any(isinstance(p, bytearray) for p in before)


def test_insert_of_model_instances_and_of_many_rows_keeps_copies() -> None:
    made = Everything(id=1, name="x", doc={"n": 1})
    rows = [{"id": i, "name": "x", "doc": {"n": i}} for i in range(2, 5)]
    stmt = insert(Everything).values(made)
    many = insert(Everything).values(rows)
    with_expr = insert(Everything).values({"id": 9, "name": sql.raw("'x'"), "doc": {"n": 9}})
    before = [params(s) for s in (stmt, many, with_expr)]
    assert made.doc is not None
    made.doc["n"] = 100
    for row in rows:
        row["doc"]["n"] = 100  # type: ignore[index]  # a dict, as built above
    assert [params(s) for s in (stmt, many, with_expr)] == before


def test_update_set_where_and_upsert_keep_copies() -> None:
    doc: dict[str, object] = {"n": 1}
    key = bytearray(b"k")
    change = update(Everything).set({"doc": doc}).where({"payload": key})
    upsert = insert(Everything).values({"id": 1, "name": "x"}).on_conflict_do_update(
        ["id"], {"doc": doc}, update_where={"payload": key})
    found = select(Everything).where({"payload": {"in": [key]}})
    gone = delete(Everything).where({"payload": key})
    stmts = (change, upsert, found, gone)
    before = [params(s) for s in stmts]
    doc["n"] = 2
    key[0] = ord("z")
    assert [params(s) for s in stmts] == before
    assert all(not isinstance(p, bytearray | dict) or p == {"n": 1}
               for ps in before for p in ps)


def test_an_enum_member_is_bound_as_its_plain_value() -> None:
    class Mode(str, Enum):  # noqa: UP042  # not StrEnum: this str() is "Mode.ON"
        ON = "on"

    class Size(IntEnum):
        BIG = 7

    made = insert(Everything).values({"id": Size.BIG, "name": Mode.ON, "state": Mode.ON,
                                      "count": Size.BIG})
    found = select(Everything).where({"name": Mode.ON, "count": Size.BIG})
    changed = update(Everything).set({"count": sql.expr("{}", Size.BIG)}).where({"id": 1})
    for stmt in (made, found, changed):
        bound = params(stmt)
        assert not any(isinstance(p, Enum) for p in bound)
        assert {p for p in bound if isinstance(p, int | str)} >= {7} | (
            set() if stmt is changed else {"on"})


@pytest.mark.parametrize(("column", "value", "message"), [
    ("name", "\udfff", "not valid Unicode"),
    ("name", "a\x00b", "NUL"),
    ("count", 2**70, "64-bit"),
    ("count", -(2**63) - 1, "64-bit"),
    ("ratio", float("nan"), "finite"),
    ("ratio", float("-inf"), "finite"),
    ("price", Decimal("Infinity"), "finite"),
    ("price", Decimal("NaN"), "finite"),
    ("doc", {"x": float("nan")}, "JSON"),
    ("doc", {1: "x"}, "JSON"),
])
def test_a_column_value_no_database_takes_is_refused(column: str, value: object,
                                                     message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        insert(Everything).values({"id": 1, "name": "x", column: value})
    with pytest.raises(ValidationError, match=message):
        update(Everything).set({column: value}).where({"id": 1})


@pytest.mark.parametrize(("value", "message"), [
    (Fraction(1, 3), "Fraction cannot be bound"),
    (object(), "object cannot be bound"),
    (1j, "complex cannot be bound"),
    (datetime(2024, 1, 1), "naive datetime"),
    ("\ud800", "not valid Unicode"),
    ("a\x00", "NUL"),
    (2**63, "64-bit"),
    (float("inf"), "finite"),
    (Decimal("sNaN"), "finite"),
    ({"a": 1}, "cannot be bound as one parameter"),
    ([1], "cannot be bound as one parameter"),
])
def test_an_expr_value_every_driver_would_not_store_as_it_is_is_refused(
        value: object, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        sql.expr("{}", value)


def test_an_expr_value_is_kept_as_its_plain_value() -> None:
    made = sql.expr("{} || {} || {}", memoryview(b"ab"), bytearray(b"cd"),
                    datetime(2024, 1, 1, tzinfo=UTC))
    assert made.values[:2] == (b"ab", b"cd")  # type: ignore[attr-defined]  # an Expr
    assert all(type(v) is not bytearray for v in made.values)  # type: ignore[attr-defined]


@pytest.mark.parametrize("plus", [float("nan"), float("inf"), float("-inf"), 1e20, -1e20,
                                  2**80, 10**12, True, "30", Decimal("30"), Fraction(1, 2)])
def test_a_plus_that_gives_no_timestamp_is_refused(plus: Any) -> None:
    with pytest.raises(ValidationError, match="plus"):
        sql.now(plus=plus)


@pytest.mark.parametrize("plus", [0, 30, -30, 1.5, 10**9, 60 * 60 * 24 * 365 * 1000])
def test_a_plus_that_gives_a_timestamp_is_taken(plus: float) -> None:
    assert sql.now(plus=plus) is not None
