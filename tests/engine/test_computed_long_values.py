"""A computed value longer than its column's max_length fails the write on every database:
SQLite's TEXT and BLOB, and PostgreSQL's bytea, hold any length, so a longer string or bytes
from insert().from_select() or an expression in update().set() was stored there where
MySQL's VARCHAR/VARBINARY (and PostgreSQL's varchar) refuse it."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import Model, QueryExecutionError, column, insert, select, sql, update


class Tag(Model, table="eng_computed_long_tags"):
    id: int = column(primary_key=True)
    code: str | None = column(default=None, max_length=3)
    raw: bytes | None = column(default=None, max_length=3)


class Source(Model, table="eng_computed_long_sources"):
    id: int = column(primary_key=True)
    text: str
    blob: bytes


MODELS = (Tag, Source)


@pytest.mark.asyncio
async def test_a_computed_value_longer_than_the_column_is_refused(db: Any) -> None:
    await db.execute(insert(Source).values([{"id": 1, "text": "abcd", "blob": b"\x00bcd"},
                                            {"id": 2, "text": "abc", "blob": b"abc"}]))
    await db.execute(insert(Tag).values({"id": 1, "code": "ab", "raw": b"ab"}))
    writes = [
        insert(Tag).from_select(select(Source, ["id"]).where({"id": 1})
                                .add_columns({"code": sql.col("text")})),
        insert(Tag).from_select(select(Source, ["id"]).where({"id": 1})
                                .add_columns({"raw": sql.col("blob")})),
        update(Tag).set({"code": sql.lower(sql.value("ABCD"))}).where({"id": 1}),
        update(Tag).set({"raw": sql.coalesce(sql.value(b"abcd"), "raw")}).where({"id": 1}),
    ]
    for stmt in writes:
        with pytest.raises(QueryExecutionError):
            await db.execute(stmt)
    rows = (await db.execute(select(Tag).order_by("id"))).all()
    assert [(r.id, r.code, r.raw) for r in rows] == [(1, "ab", b"ab")]
    # up to the limit, computed values are written as they are
    await db.execute(insert(Tag).from_select(select(Source, ["id"]).where({"id": 2})
                                             .add_columns({"code": sql.upper("text"),
                                                           "raw": sql.col("blob")})))
    await db.execute(update(Tag).set({"code": sql.coalesce(sql.value("xyz"), "code")})
                     .where({"id": 1}))
    rows = (await db.execute(select(Tag).order_by("id"))).all()
    assert [(r.id, r.code) for r in rows] == [(1, "xyz"), (2, "ABC")]
