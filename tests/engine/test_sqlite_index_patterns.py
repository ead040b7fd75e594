"""A partial index whose WHERE matches a pattern is made, checked and enforced on SQLite.

With case_sensitive_like on (the engine turns it on, so `like` is case-sensitive as on the
other databases), SQLite counts LIKE as non-deterministic and refuses it in an index's WHERE;
the dialect writes such a predicate as GLOB.
"""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import Index, IntegrityError, Model, column, insert, select

pytestmark = pytest.mark.parametrize("url", ["sqlite"], indirect=True)


class Handle(Model, table="eng_handles"):
    id: int = column(primary_key=True)
    name: str

    __indexes__ = (
        Index("eng_handles_at", ["name"], unique=True, where={"name": {"startswith": "@"}}),
        Index("eng_handles_bots", ["name"], where={"name": {"ilike": "%bot"}}),
    )


MODELS = (Handle,)


@pytest.mark.asyncio
async def test_the_index_is_made_checked_and_enforced(db: Any) -> None:
    await db.create_all(Handle)  # a second time: nothing to do
    await db.check_schema(Handle)
    await db.execute(insert(Handle).values([{"name": "@ann"}, {"name": "ann"}, {"name": "ann"},
                                            {"name": "HelpBOT"}]))
    with pytest.raises(IntegrityError):
        await db.execute(insert(Handle).values({"name": "@ann"}))
    rows = (await db.execute(select(Handle, ["name"]).where(
        {"name": {"ilike": "%bot"}}))).all()
    assert [r.name for r in rows] == ["HelpBOT"]
