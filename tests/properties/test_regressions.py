"""Failing examples the property tests found, kept as regular tests on the three databases."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest

from tempest_typed import (
    DialectError,
    Engine,
    Index,
    IntegrityError,
    Model,
    column,
    delete,
    insert,
    select,
    sql,
    update,
)
from tempest_typed.dialects.ddl import CreateIndex


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


class Tagged(Model, table="prop_reg_tagged%"):
    id: int = column(primary_key=True)
    tag: str | None = column(name="tag%")

    __indexes__ = (Index("prop_reg_tagged%_unique", ["tag"], unique=True,
                         where={"tag": {"is_null": False}}),)


def test_a_percent_sign_in_a_partial_index_predicate_is_written_once() -> None:
    # DDL runs without parameters: a `%` there is not a placeholder and must not be doubled.
    for dialect in ("postgresql", "sqlite"):
        ddl = CreateIndex(Tagged, Tagged.__indexes__[0]).compile(dialect)
        assert ddl.endswith('WHERE "tag%" IS NOT NULL'), ddl


def test_a_partial_unique_index_on_a_column_named_with_a_percent_sign_works(
        engine: Engine) -> None:
    engine.drop_all(Tagged)
    engine.create_all(Tagged)
    try:
        engine.execute(insert(Tagged).values([{"id": 1, "tag": None}, {"id": 2, "tag": None},
                                              {"id": 3, "tag": "a"}]))
        with pytest.raises(IntegrityError):
            engine.execute(insert(Tagged).values({"id": 4, "tag": "a"}))
        assert engine.execute(select(Tagged, ["id"]).where({"tag": None}).order_by("id")
                              ).scalars() == [1, 2]
    finally:
        engine.drop_all(Tagged)


class Counted(Model, table="prop_reg_counted"):
    id: int = column(primary_key=True)
    n: int


def test_avg_of_an_int_column_is_the_full_float_on_every_database(engine: Engine) -> None:
    # MariaDB/MySQL compute AVG of an integer as a DECIMAL rounded to 4 places
    # (div_precision_increment): 29 / 7 came back as 4.1429 there, 4.142857142857143 elsewhere.
    engine.drop_all(Counted)
    engine.create_all(Counted)
    try:
        engine.execute(insert(Counted).values([{"id": i, "n": n}
                                               for i, n in enumerate((1, 2, 3, 4, 5, 6, 8))]))
        row = engine.execute(select(Counted).aggregate([], {"mean": sql.avg("n")})).one()
        assert type(row.mean) is float and row.mean == 29 / 7
        two = engine.execute(select(Counted).where({"id": {"in": [0, 1]}})
                             .aggregate([], {"mean": sql.avg("n")})).one()
        assert two.mean == 1.5
    finally:
        engine.drop_all(Counted)
