"""Failing examples the property tests found, kept as regular tests on the three databases."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest

from tempest_typed import DialectError, Engine, Model, column, delete, insert, select, update


class Percent(Model, table="prop_reg_100%"):
    id: int = column(primary_key=True)
    rate: str = column(name="a%s")
    share: int = column(name="100%")


@pytest.fixture
def percent(engine: Engine) -> Iterator[Engine]:
    engine.drop_all(Percent)
    engine.create_all(Percent)
    try:
        yield engine
    finally:
        engine.drop_all(Percent)


def test_a_percent_sign_in_a_table_or_column_name_is_not_a_placeholder(percent: Engine) -> None:
    percent.execute(insert(Percent).values([{"id": 1, "rate": "x", "share": 5},
                                            {"id": 2, "rate": "y", "share": 7}]))
    percent.execute(update(Percent).set({"share": 6}).where({"rate": "x"}))
    percent.execute(delete(Percent).where({"id": 2}))
    rows = percent.execute(select(Percent, ["id", "share"]).order_by("share")
                           ).all()
    assert [(r.id, r.share) for r in rows] == [(1, 6)]


class Gone(Model, table="prop_reg_gone"):
    id: int = column(primary_key=True)
    label: str


def test_a_delete_returning_that_matches_nothing_returns_no_rows(engine: Engine) -> None:
    engine.drop_all(Gone)
    engine.create_all(Gone)
    try:
        result = engine.execute(delete(Gone).where({"id": 1}).returning("id"))
        assert result.all() == []
        assert result.rows_affected() == 0
    finally:
        engine.drop_all(Gone)


class Priced(Model, table="prop_reg_priced"):
    id: int = column(primary_key=True)
    price: Decimal | None


def test_ordering_by_a_decimal_column_is_a_dialect_error_on_sqlite() -> None:
    # SQLite stores Decimal as text: '-0.1' < '-1' as text, the reverse as numbers.
    with pytest.raises(DialectError, match="SQLite stores Decimal as text"):
        select(Priced).order_by("price").compile("sqlite")
    assert "ORDER BY" in select(Priced).order_by("price").compile("postgresql").sql
