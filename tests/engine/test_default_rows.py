"""An insert whose rows give no column (values({}), values([{}, {}]), Model()) inserts rows of
defaults on every database: identities, server defaults and NULLs as the table declares."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from tempest_typed import Model, ValidationError, column, insert, select, sql


class Stamp(Model, table="eng_stamps"):
    id: int = column(primary_key=True)
    created: datetime = column(server_default=sql.now())
    note: str | None


class Tick(Model, table="eng_ticks"):
    id: int = column(primary_key=True)
    at: datetime = column(server_default=sql.now())


MODELS = (Stamp, Tick)


@pytest.mark.asyncio
async def test_rows_of_defaults_are_inserted(db: Any) -> None:
    assert (await db.execute(insert(Stamp).values({}))).rows_affected() == 1
    assert (await db.execute(insert(Stamp).values([{}, {}, {}]))).rows_affected() == 3
    rows = (await db.execute(select(Stamp).order_by("id"))).all()
    assert [r.id for r in rows] == [1, 2, 3, 4]
    assert all(isinstance(r.created, datetime) and r.note is None for r in rows)
    assert (await db.execute(insert(Tick).values(Tick()))).rows_affected() == 1
    assert (await db.execute(insert(Tick).values([Tick(), Tick()]))).rows_affected() == 2
    assert [t.id for t in (await db.execute(select(Tick).order_by("id"))).all()] == [1, 2, 3]


@pytest.mark.asyncio
async def test_many_rows_of_defaults_are_one_statement(db: Any) -> None:
    assert (await db.execute(insert(Stamp).values([{}] * 200))).rows_affected() == 200
    assert (await db.execute(select(Stamp).aggregate([], {"n": sql.count()}))).scalar() == 200


@pytest.mark.asyncio
async def test_rows_of_defaults_with_a_conflict_clause(db: Any) -> None:
    stmt = insert(Stamp).values([{}, {}]).on_conflict_do_nothing()
    assert (await db.execute(stmt)).rows_affected() == 2
    assert (await db.execute(insert(Stamp).values({}).on_conflict_do_nothing())
            ).rows_affected() == 1
    assert len((await db.execute(select(Stamp))).all()) == 3


@pytest.mark.asyncio
async def test_rows_of_defaults_are_returned(db: Any) -> None:
    if "insert" not in db.dialect.supports_returning:
        pytest.skip("no INSERT ... RETURNING on this database")
    one = (await db.execute(insert(Stamp).values({}).returning())).one()
    assert one.id == 1 and isinstance(one.created, datetime) and one.note is None
    rows = (await db.execute(insert(Stamp).values([{}, {}]).returning("id"))).all()
    assert sorted(r.id for r in rows) == [2, 3]


@pytest.mark.asyncio
async def test_an_insert_from_a_select_counts_its_rows_when_it_runs(db: Any) -> None:
    await db.execute(insert(Tick).values([{}, {}]))
    copy = insert(Stamp).from_select(select(Tick, ["id"]))
    with pytest.raises(ValidationError, match="read rows_affected"):
        copy.row_count  # noqa: B018
    assert (await db.execute(copy)).rows_affected() == 2
