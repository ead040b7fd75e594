"""An upsert's set takes expressions over the row being changed and the row tried.

A bare column name is ambiguous in PostgreSQL's DO UPDATE (the table or EXCLUDED), so column
references there name the table; `sql.excluded()` takes arithmetic and stands inside
functions, as any value does. The same statement counts the same on the three databases.
"""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import Model, ValidationError, column, insert, select, sql

from .conftest import Item


def _upsert(db: Any, name: str, qty: int, set: dict[str, Any]) -> Any:
    stmt = insert(Item).values({"name": name, "qty": qty})
    target = ["name"] if db.dialect.supports_conflict_target else None
    return stmt.on_conflict_do_update(target, set)


@pytest.mark.asyncio
async def test_a_counter_adds_the_tried_value_to_the_stored_one(db: Any) -> None:
    add = {"qty": sql.col("qty") + sql.excluded("qty")}
    for qty in (2, 3, 4):
        await db.execute(_upsert(db, "apples", qty, add))
    await db.execute(_upsert(db, "pears", 1, {"qty": sql.col("qty") + 1}))
    await db.execute(_upsert(db, "pears", 1, {"qty": sql.col("qty") + 1}))
    rows = (await db.execute(select(Item, ["name", "qty"]).order_by("name"))).all()
    assert [(r.name, r.qty) for r in rows] == [("apples", 9), ("pears", 2)]


@pytest.mark.asyncio
async def test_excluded_stands_inside_functions_and_takes_arithmetic(db: Any) -> None:
    await db.execute(insert(Item).values({"name": "figs", "qty": 5}))
    await db.execute(_upsert(db, "figs", 7, {
        "qty": sql.excluded("qty") * 10 - sql.col("qty"),
        "note": sql.coalesce("note", sql.value("seen twice")),
    }))
    row = (await db.execute(select(Item).where({"name": "figs"}))).one()
    assert (row.qty, row.note) == (65, "seen twice")


def test_excluded_outside_an_upsert_set_is_refused_inside_an_expression_too() -> None:
    with pytest.raises(ValidationError, match=r"belongs in on_conflict_do_update\(\.\.\., set\)"):
        select(Item).add_columns({"x": sql.excluded("qty") + 1})
    with pytest.raises(ValidationError, match=r"belongs in on_conflict_do_update\(\.\.\., set\)"):
        select(Item).where({"qty": {"gt": sql.excluded("qty") * 2}})
    with pytest.raises(ValidationError, match=r"Item has no column 'nope'"):
        insert(Item).values({"name": "x"}).on_conflict_do_update(
            ["name"], {"qty": sql.excluded("nope") + 1})


def test_column_references_in_postgresql_s_do_update_name_the_table() -> None:
    stmt = insert(Item).values({"name": "a", "qty": 1}).on_conflict_do_update(
        ["name"], {"qty": sql.col("qty") + sql.excluded("qty")},
        update_where={"qty": {"lt": 100}})
    assert stmt.compile("postgresql").sql == (
        'INSERT INTO "eng_items" ("name", "qty", "note") VALUES (%s, %s, %s) '
        'ON CONFLICT ("name") '
        'DO UPDATE SET "qty" = ("eng_items"."qty" + EXCLUDED."qty") '
        'WHERE "eng_items"."qty" < %s')


class Incoming(Model, table="eng_incoming"):
    """Rows to merge into Item: its columns bear Item's names."""

    id: int = column(primary_key=True)
    name: str = column(max_length=100)
    qty: int = 0


MODELS = (Item, Incoming)


@pytest.mark.asyncio
async def test_an_upsert_from_a_select_of_a_table_with_the_same_column_names(db: Any) -> None:
    # MySQL: a bare `qty` in ON DUPLICATE KEY UPDATE was ambiguous between the two tables
    await db.execute(insert(Item).values({"name": "apples", "qty": 1}))
    await db.execute(insert(Incoming).values([{"name": "apples", "qty": 2},
                                              {"name": "pears", "qty": 5}]))
    target = ["name"] if db.dialect.supports_conflict_target else None
    await db.execute(insert(Item).from_select(select(Incoming, ["name", "qty"]))
                     .on_conflict_do_update(target, {"qty": sql.col("qty") + sql.excluded("qty")}))
    rows = (await db.execute(select(Item, ["name", "qty"]).order_by("name"))).all()
    assert [(r.name, r.qty) for r in rows] == [("apples", 3), ("pears", 5)]


def test_an_upsert_from_a_select_compiles_unambiguously() -> None:
    stmt = insert(Item).from_select(select(Incoming, ["name", "qty"]))
    sqlite = stmt.on_conflict_do_update(["name"], {"qty": sql.col("qty") + 1}).compile("sqlite")
    assert sqlite.sql.startswith('INSERT INTO "eng_items" ("name", "qty") SELECT * FROM '
                                 '(SELECT "name", "qty" FROM "eng_incoming") WHERE 1 ON CONFLICT')
    mysql = stmt.on_conflict_do_update(None, {"qty": sql.col("qty") + 1}).compile("mysql")
    assert mysql.sql.endswith("ON DUPLICATE KEY UPDATE `qty` = (`eng_items`.`qty` + %s)")
