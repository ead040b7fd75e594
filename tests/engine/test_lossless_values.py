"""Values a column would change without a word, on every database.

MariaDB's DECIMAL(65, 30), a Decimal column without a size there, rounded `Decimal("1E-40")`
to 0 with only a note: such a value is refused when it is bound for an insert or update on
MySQL and MariaDB (a comparison takes any Decimal, which MySQL compares exactly). A sized
column refuses what it would round on every database, when the statement is built. JSON on
PostgreSQL is `jsonb`, which keeps numbers as numeric: what it gives back, and what SQLite
and MariaDB give back for the same document, is pinned here as the README's table says it.
Run on both engines (the contract's adapter), on the three databases.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from tempest_typed import (
    Model,
    ValidationError,
    column,
    insert,
    select,
    update,
)

pytestmark = pytest.mark.asyncio


class Amounts(Model, table="eng_lv_amounts"):
    id: int = column(primary_key=True)
    loose: Decimal = Decimal(0)
    cents: Decimal = column(default=Decimal(0), precision=10, scale=2)


async def test_an_unsized_decimal_mysql_would_round_is_refused_there(db: Any) -> None:
    tiny, huge = Decimal("1E-40"), Decimal("1" * 36)
    if db.dialect.name in ("mysql", "mariadb"):
        # MariaDB stored 1E-40 as 0 (a note, no error): refused when bound instead
        for value, says in ((tiny, "has 40 digits after the point"),
                            (huge, "has 36 digits before the point")):
            with pytest.raises(ValidationError, match=says):
                await db.execute(insert(Amounts).values({"loose": value}))
            with pytest.raises(ValidationError, match=says):
                await db.execute(update(Amounts).set({"loose": value}).where({"id": 1}))
        with pytest.raises(ValidationError, match="DECIMAL\\(65, 30\\) on MySQL and MariaDB"):
            await db.execute(insert(Amounts).values([{"loose": 1}, {"loose": tiny}]))
        await db.execute(insert(Amounts).values({"loose": Decimal("1E-30")}))
        # a comparison may use any Decimal: MySQL compares it exactly
        found = (await db.execute(select(Amounts, ["loose"]).where({"loose": {"gt": tiny}}))).all()
        assert [r.loose for r in found] == [Decimal("1E-30")]
    else:
        await db.execute(insert(Amounts).values([{"id": 1, "loose": tiny}, {"id": 2, "loose": huge}]))
        found = (await db.execute(select(Amounts, ["loose"]).order_by("id"))).scalars()
        assert found == [tiny, huge]
    # a sized column refuses on every database what it would round (PostgreSQL and MariaDB
    # round 1.234 to 1.23, SQLite keeps the text)
    with pytest.raises(ValidationError, match="has 3 digits after the point"):
        await db.execute(insert(Amounts).values({"cents": Decimal("1.234")}))


class Doc(Model, table="eng_lv_docs"):
    id: int = column(primary_key=True)
    body: dict[str, Any]


MODELS = (Amounts, Doc)


#: what each database gives back for the same document (the README's table says so)
JSON_IN = {"b": 1e20, "a": -0.0, "c": 1.0, "d": 10**30, "long_key": 1e16, "e": 1e15, "f": 0.1}
JSONB_OUT = {"a": 0.0, "b": 100000000000000000000, "c": 1.0, "d": 10**30, "e": 1e15, "f": 0.1,
             "long_key": 10000000000000000}


async def test_what_json_columns_give_back_on_each_database(db: Any) -> None:
    await db.execute(insert(Doc).values({"id": 1, "body": JSON_IN}))
    body = (await db.execute(select(Doc, ["body"]))).scalar()
    if db.dialect.name == "postgresql":
        # jsonb keeps numbers as numeric: a float of 1e16 or more reads back as an int, -0.0
        # as 0.0; keys come back shortest first
        assert body == JSONB_OUT
        assert [type(body[k]) for k in ("b", "long_key", "e")] == [int, int, float]
        assert str(body["a"]) == "0.0"
        assert list(body) == ["a", "b", "c", "d", "e", "f", "long_key"]
    else:
        # SQLite and MariaDB keep the JSON text as written
        assert json.dumps(body) == json.dumps(JSON_IN)
