"""A like/ilike pattern ending in a lone backslash (the escape character, escaping nothing) is
refused at build: PostgreSQL raised, MySQL matched a backslash, SQLite matched nothing. An
escaped backslash matches one on every database."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import Model, ValidationError, column, insert, select


class Slashed(Model, table="eng_like_slashed"):
    id: int = column(primary_key=True)
    s: str


MODELS = (Slashed,)


def test_a_lone_trailing_backslash_is_refused() -> None:
    for op in ("like", "ilike"):
        for pattern in ("ab\\", "a\\\\\\"):
            with pytest.raises(ValidationError, match=r"ends in the escape character .* escape "
                                                      r"it as \\\\ "):
                select(Slashed).where({"s": {op: pattern}})


@pytest.mark.asyncio
async def test_an_escaped_backslash_matches_one(db: Any) -> None:
    await db.execute(insert(Slashed).values([{"id": 1, "s": "ab\\"}, {"id": 2, "s": "ab"}]))
    for op in ("like", "ilike"):
        found = await db.execute(select(Slashed, ["id"]).where({"s": {op: "ab\\\\"}}))
        assert found.scalars() == [1]
        found = await db.execute(select(Slashed, ["id"]).where({"s": {op: "%\\\\"}}))
        assert found.scalars() == [1]
    found = await db.execute(select(Slashed, ["id"]).where({"s": {"endswith": "b\\"}}))
    assert found.scalars() == [1]
