"""insert(M).from_select(): the columns the select does not give get the model's Python-side
defaults, as values() gives them (the database knows none of them: its rows got NULL, or
failed NOT NULL); a default_factory that makes a value per row (uuid4) is refused."""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any, Literal

import pytest

from tempest_typed import Model, ValidationError, column, insert, select, sql


class Source(Model, table="eng_fs_source"):
    id: int = column(primary_key=True)
    title: str = column(max_length=50)


class Archived(Model, table="eng_fs_archived"):
    id: int = column(primary_key=True)
    title: str = column(max_length=50)
    qty: int = 7
    state: Literal["new", "old"] = "new"
    price: Decimal = column(default=Decimal("1.50"), precision=6, scale=2)
    note: str | None = "n/a"
    gone: str | None = None
    tags: list[str] = column(default_factory=list)


class Token(Model, table="eng_fs_tokens"):
    id: int = column(primary_key=True)
    ref: uuid.UUID = column(default_factory=uuid.uuid4)


MODELS = (Source, Archived)


@pytest.mark.asyncio
async def test_the_python_defaults_fill_the_columns_not_selected(db: Any) -> None:
    await db.execute(insert(Source).values([{"id": 1, "title": "a"}, {"id": 2, "title": "b"},
                                            {"id": 3, "title": "c"}]))
    await db.execute(insert(Archived).from_select(select(Source).where({"id": 1})))
    await db.execute(insert(Archived).from_select(
        select(Source, ["id", "title"]).where({"id": 2}).union(
            select(Source, ["id", "title"]).where({"id": 3}))))
    rows = (await db.execute(select(Archived).order_by("id"))).all()
    assert [(r.id, r.title, r.qty, r.state, r.price, r.note, r.gone, r.tags) for r in rows] == [
        (i, t, 7, "new", Decimal("1.50"), "n/a", None, [])
        for i, t in ((1, "a"), (2, "b"), (3, "c"))]


def test_a_default_factory_is_refused() -> None:
    with pytest.raises(ValidationError, match=r"insert\(Token\)\.from_select\(\): the select "
                                              r"gives no ref, whose default_factory makes a "
                                              r"value per row in Python"):
        insert(Token).from_select(select(Source, ["id"]))
    given = insert(Token).from_select(
        select(Source, ["id"]).add_columns({"ref": sql.value(uuid.UUID(int=1))}))
    assert given.compile("sqlite").sql == (
        'INSERT INTO "eng_fs_tokens" ("id", "ref") SELECT "id", ? AS "ref" FROM "eng_fs_source"')


def test_the_defaults_are_bound_values_of_each_member_of_a_set_operation() -> None:
    one = select(Source, ["id", "title"]).where({"id": 1})
    stmt = insert(Archived).from_select(one.union_all(one))
    compiled = stmt.compile("postgresql")
    assert compiled.sql == (
        'INSERT INTO "eng_fs_archived" ("id", "title", "qty", "state", "price", "note", "tags") '
        'WITH '
        '"tempest_selected" ("id", "title") AS (SELECT "id", "title" FROM "eng_fs_source" '
        'WHERE "id" = %s UNION ALL SELECT "id", "title" FROM "eng_fs_source" WHERE "id" = %s) '
        'SELECT "id", "title", CAST(%s AS bigint) AS "qty", CAST(%s AS text) COLLATE "C" AS '
        '"state", CAST(%s AS numeric) AS "price", CAST(%s AS text) COLLATE "C" AS "note", '
        'CAST(%s AS jsonb) AS '
        '"tags" FROM "tempest_selected"')
    assert compiled.params[:6] == (1, 1, 7, "new", Decimal("1.50"), "n/a")
