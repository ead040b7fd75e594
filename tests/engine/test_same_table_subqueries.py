"""An update or delete that reads its own table in a subquery runs where the database can.

PostgreSQL and SQLite always could; MariaDB can since 10.3 (MySQL refuses it, error 1093,
and its dialect says how to select the ids first).
"""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import delete, insert, select, sql, update

from .conftest import Item


@pytest.mark.asyncio
async def test_an_update_and_a_delete_read_their_own_table(db: Any) -> None:
    await db.execute(insert(Item).values([{"name": n, "qty": q}
                                          for n, q in (("a", 1), ("b", 2), ("c", 3))]))
    small = select(Item).where({"qty": {"lt": 3}}).as_subquery("id")
    await db.execute(update(Item).set({"note": "small"}).where({"id": {"in": small}}))
    most = sql.scalar(select(Item).aggregate([], {"m": sql.max("qty")}).as_subquery("m"))
    await db.execute(delete(Item).where({"qty": {"lt": most}, "note": "small", "name": "a"}))
    rows = (await db.execute(select(Item, ["name", "note"]).order_by("name"))).all()
    assert [(r.name, r.note) for r in rows] == [("b", "small"), ("c", None)]
