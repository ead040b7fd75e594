"""An upsert batch that repeats a conflict key is refused at build (PostgreSQL refused to
update a row twice, MySQL and SQLite kept the last row); a skipping insert keeps the first
row of a repeated key on every database."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import Model, ValidationError, column, insert, select, sql


class Keyed(Model, table="eng_urk_keyed"):
    id: int = column(primary_key=True)
    k: str = column(max_length=10, unique=True)
    n: int = 0


MODELS = (Keyed,)

REPEATED = r"rows 0 and 2 both have \{'k': 'a'\}, one conflict key: .* give each key once"


def test_a_repeated_key_is_refused_whichever_comes_first() -> None:
    rows = [{"k": "a", "n": 1}, {"k": "b", "n": 2}, {"k": "a", "n": 3}]
    with pytest.raises(ValidationError, match=REPEATED):
        insert(Keyed).values(rows).on_conflict_do_update(["k"], {"n": sql.excluded("n")})
    with pytest.raises(ValidationError, match=REPEATED):
        insert(Keyed).on_conflict_do_update(["k"], {"n": sql.excluded("n")}).values(rows)
    with pytest.raises(ValidationError, match=REPEATED):  # any unique key (MySQL's form)
        insert(Keyed).values(rows).on_conflict_do_update(None, {"n": sql.excluded("n")})
    with pytest.raises(ValidationError, match=r"rows 0 and 1 both have \{'k': 'a'\}"):
        insert(Keyed).values([Keyed(id=1, k="a"), Keyed(id=2, k="a")]).on_conflict_do_update(
            None, {"n": sql.excluded("n")})
    with pytest.raises(ValidationError, match=r"rows 0 and 1 both have \{'k': 'a'\}"):
        insert(Keyed).values({"k": "a"}).on_conflict_do_update(
            ["k"], {"n": 1}).values({"k": "a"})
    # NULL never conflicts; an expression is the database's value
    insert(Keyed).values([{"k": sql.raw("'a'")}, {"k": sql.raw("'a'")}]).on_conflict_do_update(
        ["k"], {"n": 1})


@pytest.mark.asyncio
async def test_distinct_keys_upsert_and_a_skip_keeps_the_first(db: Any) -> None:
    target = None if db.dialect.name in ("mysql", "mariadb") else ["k"]
    await db.execute(insert(Keyed).values([{"k": "a", "n": 1}, {"k": "a", "n": 2}])
                     .on_conflict_do_nothing(target))
    assert (await db.execute(select(Keyed, ["k", "n"]))).all() == [("a", 1)]
    await db.execute(insert(Keyed).values([{"k": "a", "n": 5}, {"k": "b", "n": 6}])
                     .on_conflict_do_update(target, {"n": sql.excluded("n")}))
    assert (await db.execute(select(Keyed, ["k", "n"]).order_by("k"))).all() == [
        ("a", 5), ("b", 6)]
