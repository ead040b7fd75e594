"""Every annotated type goes in and comes back as itself, on every database, None included."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any
from uuid import UUID, uuid4

import pytest

from tempest_typed import insert, select, update

from .conftest import Fresh, Typed

MAX_INT = 2**63 - 1  # BIGINT on PostgreSQL and MySQL, INTEGER on SQLite
MANY_DIGITS = Decimal("-12345678901234567890123456789012345.123456789012345678901234567891")
TEXTS = ["", "plain", "héllo wörld", "日本語のテキスト", "emoji 🎉🧪", "quote ' and \" and `",
         "back\\slash %s ? :name {}", "line\nbreak\ttab", "trailing space ", " leading"]

#: (column, values that must come back equal to themselves)
CASES: list[tuple[str, list[Any]]] = [
    ("ref", [uuid4(), UUID(int=0), UUID(int=2**128 - 1)]),
    ("at", [
        datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(2024, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
        datetime(1000, 1, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    ]),
    ("day", [date(2024, 2, 29), date(1000, 1, 1), date(9999, 12, 31)]),
    ("price", [Decimal("0"), Decimal("0.1"), Decimal("-1.50"), MANY_DIGITS,
               Decimal("99999999999999999999999999999999999"),
               Decimal("0.000000000000000000000000000001")]),
    ("flag", [True, False]),
    ("blob", [b"", bytes(range(256)), b"\x00" * 10]),
    ("state", ["on", "off", "ünï"]),
    ("doc", [{}, {"a": 1, "b": [1, 2.5, None, True], "ç": {"nested": "日本"}}]),
    ("items", [[], [1, "two", {"three": 3}, [None]]]),
    ("text", TEXTS),
    ("count", [0, -1, MAX_INT, -MAX_INT - 1]),
    ("ratio", [0.0, -1.5, 1e308, 2.2250738585072014e-308, 0.1 + 0.2]),
]


def _ids() -> list[str]:
    return [column for column, _ in CASES]


@pytest.mark.parametrize(("column", "values"), CASES, ids=_ids())
def test_values_round_trip_as_their_annotated_type(fresh: Fresh, column: str,
                                                   values: list[Any]) -> None:
    engine = fresh(Typed)
    rows = [{"id": i + 1, column: v} for i, v in enumerate(values)]
    engine.execute(insert(Typed).values(rows))
    got = engine.execute(select(Typed).order_by("id")).all()
    assert [getattr(r, column) for r in got] == values
    assert [type(getattr(r, column)) for r in got] == [type(v) for v in values]
    # The same through a partial select.
    partial = engine.execute(select(Typed, [column]).order_by("id")).scalars()
    assert partial == values


@pytest.mark.parametrize(("column", "values"), CASES, ids=_ids())
def test_a_stored_value_is_found_by_equality(fresh: Fresh, column: str,
                                             values: list[Any]) -> None:
    if column in ("doc", "items"):
        pytest.skip("JSON documents are not compared by equality")
    engine = fresh(Typed)
    engine.execute(insert(Typed).values([{"id": i + 1, column: v} for i, v in enumerate(values)]))
    for i, value in enumerate(values):
        found = engine.execute(select(Typed, ["id"]).where({column: value})).scalars()
        assert found == [i + 1], f"{column} = {value!r}"


@pytest.mark.parametrize(("column", "values"), CASES, ids=_ids())
def test_stored_values_are_found_by_a_long_in_list(fresh: Fresh, column: str,
                                                   values: list[Any]) -> None:
    """An `in` list in a statement of more than 50 parameters (one array on PostgreSQL,
    `= ANY`, `<> ALL`) finds what a short one finds, for every type."""
    if column in ("doc", "items"):
        pytest.skip("JSON documents are not compared by equality")
    engine = fresh(Typed)
    engine.execute(insert(Typed).values([{"id": i + 1, column: v} for i, v in enumerate(values)]))
    engine.execute(insert(Typed).values({"id": 100}))  # NULL: in no list, not in none
    long = (values * 60)[:60]
    ids = list(range(1, len(values) + 1))
    found = engine.execute(select(Typed, ["id"]).where({column: {"in": long}}).order_by("id"))
    assert found.scalars() == ids
    assert engine.execute(select(Typed, ["id"]).where(
        {column: {"not_in": long}})).scalars() == []
    assert engine.execute(select(Typed, ["id"]).where(
        {column: {"in": long[1:]}, "id": {"not_in": list(range(200, 260))}}
    ).order_by("id")).scalars() == [i for i in ids if values[i - 1] in long[1:]]


def test_none_round_trips_in_every_nullable_column(fresh: Fresh) -> None:
    engine = fresh(Typed)
    engine.execute(insert(Typed).values({"id": 1}))
    row = engine.execute(select(Typed)).one()
    assert row == Typed(id=1)
    assert engine.execute(select(Typed, ["id"]).where({"at": None, "doc": None})).scalar() == 1


def test_every_type_in_one_row_through_returning(fresh: Fresh) -> None:
    engine = fresh(Typed)
    row = Typed(id=1, **{column: values[-1] for column, values in CASES})
    if engine.dialect.name in ("mysql",):  # MySQL has no RETURNING
        engine.execute(insert(Typed).values(row))
        back = engine.execute(select(Typed)).one()
    else:
        back = engine.execute(insert(Typed).values(row).returning()).one()
    assert back == row


def test_an_aware_datetime_in_any_zone_comes_back_as_the_same_instant_in_utc(
        fresh: Fresh) -> None:
    engine = fresh(Typed)
    tokyo = datetime(2024, 6, 1, 9, 30, 15, 123456, tzinfo=timezone(timedelta(hours=9)))
    engine.execute(insert(Typed).values({"id": 1, "at": tokyo}))
    back = engine.execute(select(Typed, ["at"])).scalar()
    assert back == tokyo
    assert back.utcoffset() == timedelta(0)
    assert back == datetime(2024, 6, 1, 0, 30, 15, 123456, tzinfo=UTC)


def test_datetimes_order_and_compare_as_instants(fresh: Fresh) -> None:
    engine = fresh(Typed)
    base = datetime(2024, 6, 1, 12, tzinfo=UTC)
    minus_two = timezone(timedelta(hours=-2))
    engine.execute(insert(Typed).values([
        {"id": 1, "at": base},
        {"id": 2, "at": (base + timedelta(microseconds=1)).astimezone(minus_two)},
        {"id": 3, "at": base - timedelta(days=1)},
    ]))
    assert engine.execute(select(Typed, ["id"]).order_by("at")).scalars() == [3, 1, 2]
    later = engine.execute(select(Typed, ["id"]).where({"at": {"gt": base}})).scalars()
    assert later == [2]


def test_an_update_writes_each_type_too(fresh: Fresh) -> None:
    engine = fresh(Typed)
    engine.execute(insert(Typed).values({"id": 1}))
    values = {column: values[0] for column, values in CASES}
    engine.execute(update(Typed).set(values).where({"id": 1}))
    assert engine.execute(select(Typed)).one() == Typed(id=1, **values)


def test_decimals_keep_every_digit(fresh: Fresh) -> None:
    engine = fresh(Typed)
    engine.execute(insert(Typed).values({"id": 1, "price": MANY_DIGITS}))
    back = engine.execute(select(Typed, ["price"])).scalar()
    assert back == MANY_DIGITS
    assert isinstance(back, Decimal)
