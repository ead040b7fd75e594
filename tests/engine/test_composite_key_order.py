"""A composite foreign key may name the referenced key's columns in any order, on every
database: InnoDB takes one only over an index's columns in that index's order, so MariaDB
refused the table ("Foreign key constraint is incorrectly formed") where PostgreSQL and
SQLite made it; the DDL writes the pairs in the order of the key they reference."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import ForeignKey, Index, IntegrityError, Model, column, insert, select


class Slot(Model, table="eng_cko_slots"):
    room: int = column(primary_key=True)
    day: str = column(primary_key=True, max_length=10)
    code: str = column(max_length=10)
    shelf: int = 0

    __indexes__ = (Index("eng_cko_slots_shelf_code", ["shelf", "code"], unique=True),)


class Booking(Model, table="eng_cko_bookings"):
    id: int = column(primary_key=True)
    day: str = column(max_length=10)
    room: int
    code: str = column(max_length=10)
    shelf: int = 0

    __foreign_keys__ = (
        ForeignKey(["day", "room"], "eng_cko_slots", ["day", "room"]),        # key: room, day
        ForeignKey(["code", "shelf"], "eng_cko_slots", ["code", "shelf"]),    # index: shelf, code
    )


MODELS = (Slot, Booking)


@pytest.mark.asyncio
async def test_a_foreign_key_in_another_order_than_its_key(db: Any) -> None:
    await db.execute(insert(Slot).values({"room": 1, "day": "mon", "code": "a", "shelf": 2}))
    await db.execute(insert(Booking).values({"id": 1, "day": "mon", "room": 1, "code": "a",
                                             "shelf": 2}))
    for wrong in ({"day": "tue", "room": 1, "code": "a", "shelf": 2},
                  {"day": "mon", "room": 1, "code": "a", "shelf": 3}):
        with pytest.raises(IntegrityError):
            await db.execute(insert(Booking).values({"id": 2, **wrong}))
    assert [b.id for b in (await db.execute(select(Booking))).all()] == [1]
