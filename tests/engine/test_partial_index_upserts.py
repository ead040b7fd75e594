"""An upsert onto a partial unique index repeats the index's predicate, which is written with
its values inline, as CREATE INDEX writes it: SQLite cannot prove that a bound value implies
the index's literal (it found no index at all), nor can PostgreSQL's generic plan of a
prepared statement (from the eleventh run of one statement on)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

import pytest

from tempest_typed import Index, Model, ValidationError, column, insert, select, sql

targets = pytest.mark.parametrize("url", ["postgresql", "sqlite"], indirect=True)  # MySQL: none


class Flagged(Model, table="eng_pi_flagged"):
    id: int = column(primary_key=True)
    k: str = column(max_length=10)
    active: bool = True
    n: int = 0
    __indexes__ = (Index("eng_pi_flagged_k", ["k"], unique=True, where={"active": True}),)


class Counted(Model, table="eng_pi_counted"):
    id: int = column(primary_key=True)
    k: str = column(max_length=10)
    n: int = 0
    __indexes__ = (Index("eng_pi_counted_k", ["k"], unique=True, where={"n": {"gt": 5}}),)


class Stated(Model, table="eng_pi_stated"):
    id: int = column(primary_key=True)
    k: str = column(max_length=10)
    status: Literal["queued", "sent", "held"] = "queued"
    n: int = 0
    __indexes__ = (
        Index("eng_pi_stated_k", ["k"], unique=True, where={"status": "queued"}),
        Index("eng_pi_stated_n", ["n"], unique=True,
              where={"status": {"in": ["sent", "held"]}}),
    )


class Named(Model, table="eng_pi_named"):
    id: int = column(primary_key=True)
    k: str = column(max_length=10)
    tag: str = column(max_length=20)
    n: int = 0
    at: datetime | None = None
    __indexes__ = (Index("eng_pi_named_k", ["k"], unique=True,
                         where={"tag": {"startswith": "5%_a"}}),)


MODELS = (Flagged, Counted, Stated, Named)


@targets
@pytest.mark.asyncio
async def test_a_value_predicate_meets_its_partial_index(db: Any) -> None:
    await db.execute(insert(Flagged).values({"k": "a"}))
    skip = insert(Flagged).values({"k": "a"}).on_conflict_do_nothing(
        ["k"], where={"active": True})
    assert (await db.execute(skip)).rows_affected() == 0
    upsert = insert(Flagged).values({"k": "a", "n": 3}).on_conflict_do_update(
        ["k"], {"n": sql.excluded("n")}, index_where={"active": True})
    assert (await db.execute(upsert)).rows_affected() == 1

    await db.execute(insert(Counted).values({"k": "a", "n": 9}))
    skip = insert(Counted).values({"k": "a", "n": 9}).on_conflict_do_nothing(
        ["k"], where={"n": {"gt": 5}})
    assert (await db.execute(skip)).rows_affected() == 0
    upsert = insert(Counted).values({"k": "a", "n": 7}).on_conflict_do_update(
        ["k"], {"n": sql.excluded("n")}, index_where={"n": {"gt": 5}})
    await db.execute(upsert)

    await db.execute(insert(Stated).values([{"k": "a"}, {"k": "b", "status": "sent", "n": 4}]))
    skip = insert(Stated).values({"k": "a"}).on_conflict_do_nothing(
        ["k"], where={"status": "queued"})
    assert (await db.execute(skip)).rows_affected() == 0
    upsert = insert(Stated).values({"k": "c", "status": "held", "n": 4}).on_conflict_do_update(
        ["n"], {"k": sql.excluded("k")}, index_where={"status": {"in": ["sent", "held"]}})
    await db.execute(upsert)

    # a pattern (SQLite writes it as GLOB in the index) with % and _ taken as themselves
    await db.execute(insert(Named).values({"k": "a", "tag": "5%_abc"}))
    upsert = insert(Named).values({"k": "a", "tag": "5%_az", "n": 2}).on_conflict_do_update(
        ["k"], {"n": sql.excluded("n")}, index_where={"tag": {"startswith": "5%_a"}})
    await db.execute(upsert)

    assert (await db.execute(select(Flagged, ["k", "n"]))).all() == [("a", 3)]
    assert (await db.execute(select(Counted, ["k", "n"]))).all() == [("a", 7)]
    assert (await db.execute(select(Stated, ["k", "status", "n"]).order_by("k"))).all() == [
        ("a", "queued", 0), ("c", "sent", 4)]
    assert (await db.execute(select(Named, ["k", "tag", "n"]))).all() == [("a", "5%_abc", 2)]


@targets
@pytest.mark.asyncio
async def test_the_same_upsert_runs_again_and_again(db: Any) -> None:
    # PostgreSQL prepares a statement run often and then plans it once for any value.
    await db.execute(insert(Stated).values({"k": "a"}))
    for n in range(15):
        upsert = insert(Stated).values({"k": "a", "n": n}).on_conflict_do_update(
            ["k"], {"n": sql.excluded("n")}, index_where={"status": "queued"})
        await db.execute(upsert)
    assert (await db.execute(select(Stated, ["n"]))).scalars() == [14]


def test_the_predicate_is_written_inline_and_values_of_no_literal_are_refused() -> None:
    stmt = insert(Stated).values({"k": "a"}).on_conflict_do_nothing(
        ["k"], where={"status": "queued"})
    for dialect in ("postgresql", "sqlite"):
        assert stmt.compile(dialect).sql.endswith(
            'ON CONFLICT ("k") WHERE "status" = \'queued\' DO NOTHING')
    assert stmt.compile("postgresql").params == ("a", "queued", 0)  # the row only
    like = insert(Named).values({"k": "a", "tag": "x"}).on_conflict_do_nothing(
        ["k"], where={"tag": {"startswith": "5%_a"}})
    assert "GLOB '5%_a*'" in like.compile("sqlite").sql
    assert "LIKE '5\\%%\\_a%%'" in like.compile("postgresql").sql  # % doubled for psycopg
    with pytest.raises(ValidationError, match=r"has no literal in DDL; it repeats the predicate"):
        insert(Named).values({"k": "a", "tag": "x"}).on_conflict_do_nothing(
            ["k"], where={"at": {"gt": datetime(2024, 1, 1, tzinfo=UTC)}})
