"""A Row's fields named like its own attributes read their values on every database."""

from __future__ import annotations

import pytest

from tempest_typed import Engine, Model, column, insert, join, select, sql

from .conftest import Fresh


class Shelf(Model, table="eng_row_shelves"):
    id: int = column(primary_key=True)
    _index: int = 0
    _fields: str = ""
    count: int = 0


@pytest.fixture
def shelves(fresh: Fresh) -> Engine:
    engine = fresh(Shelf)
    engine.execute(insert(Shelf).values([
        {"_index": 1, "_fields": "a", "count": 10}, {"_index": 1, "_fields": "b", "count": 20},
    ]))
    return engine


def test_a_partial_select_of_underscored_attributes_reads_them(shelves: Engine) -> None:
    rows = shelves.execute(
        select(Shelf, ["_index", "_fields", "count"]).order_by("_fields")).all()
    assert [(r._index, r._fields, r.count) for r in rows] == [(1, "a", 10), (1, "b", 20)]
    assert rows[0]["_fields"] == "a" and rows[0].keys() == ("_index", "_fields", "count")
    assert rows[1].asdict() == {"_index": 1, "_fields": "b", "count": 20}


def test_group_columns_and_labels_named_like_tuple_methods_read_their_values(
        shelves: Engine) -> None:
    row = shelves.execute(
        select(Shelf).aggregate(["_index"], {"index": sql.count(), "total": sql.sum("count")})
    ).one()
    assert (row._index, row.index, row.total) == (1, 2, 30)
    stmt = (join(Shelf, "count").inner_join(Shelf, "index", {"count.id": "index.id"})
            .order_by("count._fields"))
    pairs = shelves.execute(stmt).all()
    assert [(p.count._fields, p.index.count) for p in pairs] == [("a", 10), ("b", 20)]
