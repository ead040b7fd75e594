"""A JSON column's values are moved, never compared, by set() from another JSON column,
insert(...).from_select(), union_all() (and a recursive named select's step), coalesce() and
CASE, on every database; they were refused as if compared ("'doc' is json but 'doc' is
json"), while union(), intersect(), except_() and order_by(), which compare, say so."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import Model, ValidationError, column, insert, join, select, sql, update


class Doc(Model, table="eng_json_docs"):
    id: int = column(primary_key=True)
    doc: dict[str, object] | None = None
    old: dict[str, object] | None = None


class Kept(Model, table="eng_json_kept"):
    id: int = column(primary_key=True)
    doc: dict[str, object] | None = None


MODELS = (Doc, Kept)

ROWS = [{"id": 1, "doc": {"a": 1}}, {"id": 2, "doc": {"b": [1, "x"]}}, {"id": 3}]


@pytest.mark.asyncio
async def test_json_values_are_moved(db: Any) -> None:
    await db.execute(insert(Doc).values(ROWS))
    await db.execute(update(Doc).set({"old": sql.col("doc")}).where({"id": 1}))
    await db.execute(update(Doc).set({"old": sql.scalar(
        select(Doc, ["doc"]).where({"id": 1}).as_subquery("doc"))}).where({"id": 3}))
    rows = (await db.execute(select(Doc, ["id", "old"]).order_by("id"))).all()
    assert [tuple(r) for r in rows] == [(1, {"a": 1}), (2, None), (3, {"a": 1})]
    await db.execute(insert(Kept).from_select(select(Doc, ["id", "doc"])))
    kept = (await db.execute(select(Kept).order_by("id"))).all()
    assert [k.doc for k in kept] == [{"a": 1}, {"b": [1, "x"]}, None]
    both = (await db.execute(select(Doc, ["id", "doc"]).union_all(select(Kept, ["id", "doc"]))
                             .order_by("id"))).all()
    assert [tuple(r) for r in both] == [(1, {"a": 1}), (1, {"a": 1}), (2, {"b": [1, "x"]}),
                                        (2, {"b": [1, "x"]}), (3, None), (3, None)]
    picked = (await db.execute(select(Doc, ["id"]).add_columns({
        "first": sql.coalesce("doc", "old"),
        "either": sql.case(({"id": 2}, "doc"), else_="old")}).order_by("id"))).all()
    assert [tuple(r) for r in picked] == [(1, {"a": 1}, {"a": 1}), (2, {"b": [1, "x"]},
                                          {"b": [1, "x"]}), (3, {"a": 1}, {"a": 1})]
    chain = sql.recursive_cte(
        "chain", select(Doc, ["id", "doc"]).where({"id": 1}),
        lambda t: join(Doc, "d").inner_join(t, "t", {"d.id": "t.id"}).where({"d.id": {"gt": 1}})
        .project({"id": "d.id", "doc": "d.doc"}))
    assert [tuple(r) for r in (await db.execute(select(chain))).all()] == [(1, {"a": 1})]


def test_what_compares_json_says_so() -> None:
    a, b = select(Doc, ["id", "doc"]), select(Kept, ["id", "doc"])
    for combine in (a.union, a.intersect, a.except_):
        with pytest.raises(ValidationError, match=r"'doc' and 'doc' are JSON columns, which are "
                           r"not compared.*use union_all"):
            combine(b)
    with pytest.raises(ValidationError, match="'doc' is a JSON column, which is not compared"):
        a.union_all(b).order_by("doc")
    with pytest.raises(ValidationError, match="are JSON columns, which are not compared"):
        join(Doc, "x").inner_join(Doc, "y", {"x.doc": "y.old"})
