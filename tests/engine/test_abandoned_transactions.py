"""A transaction left without its block's end (the session closed inside it, or a generator
closed inside the block: GeneratorExit) is rolled back before its connection goes back to the
pool: the next user of the connection never runs inside it, nor commits its writes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tempest_typed import Model, TempestError, column, insert, select


class Note(Model, table="eng_abandoned_notes"):
    id: int = column(primary_key=True)
    name: str = column(max_length=50)


MODELS = (Note,)

pytestmark = pytest.mark.asyncio


async def _names(db: Any) -> list[str]:
    return [r.name for r in (await db.execute(select(Note).order_by("id"))).all()]


async def test_a_block_left_by_generator_exit_rolls_back(db: Any) -> None:
    async def writes() -> AsyncIterator[int]:
        async with db.transaction() as tx:
            await tx.execute(insert(Note).values({"name": "abandoned"}))
            yield 1

    gen = writes()
    assert await gen.__anext__() == 1
    await gen.aclose()
    async with db.transaction() as tx:  # the same pooled connection, on MySQL too
        await tx.execute(insert(Note).values({"name": "next"}))
    assert await _names(db) == ["next"]


async def test_a_savepoint_left_by_generator_exit_rolls_back_alone(db: Any) -> None:
    async with db.transaction() as tx:
        await tx.execute(insert(Note).values({"name": "outer"}))

        async def writes() -> AsyncIterator[int]:
            async with tx.transaction():
                await tx.execute(insert(Note).values({"name": "abandoned"}))
                yield 1

        gen = writes()
        await gen.__anext__()
        await gen.aclose()
        assert tx.in_transaction
        await tx.execute(insert(Note).values({"name": "after"}))
    assert await _names(db) == ["outer", "after"]


async def test_a_session_closed_inside_a_transaction_rolls_back(db: Any) -> None:
    for read_only in (False, True):
        async with db.session() as session:
            cm = session.transaction(read_only=read_only)
            await cm.__aenter__()
            if not read_only:
                await session.execute(insert(Note).values({"name": "left open"}))
            assert session.in_transaction
            await session.close()
            assert not session.in_transaction
        # SQLite: the connection a read-only transaction left is writable again
        await db.execute(insert(Note).values({"name": f"next {read_only}"}))
    assert await _names(db) == ["next False", "next True"]


async def test_a_block_abandoned_after_its_session_closed_owes_nothing(db: Any) -> None:
    async with db.session() as session:
        cm = session.transaction()
        await cm.__aenter__()
        with pytest.raises(TempestError, match="this session is closed"):
            async with session.transaction():  # a savepoint, open when the session closes
                await session.close()
                with pytest.raises(TempestError, match="this session is closed"):
                    await session.execute(select(Note))
        assert not session.in_transaction
        exit_ = GeneratorExit()
        assert not await cm.__aexit__(GeneratorExit, exit_, None)  # re-raised: not swallowed
        assert not session.in_transaction
    assert await _names(db) == []


async def test_a_transaction_begun_by_hand_is_rolled_back_when_the_session_closes(
        db: Any) -> None:
    begin = "BEGIN" if db.dialect.name in ("postgresql", "sqlite") else "START TRANSACTION"
    async with db.session() as session:
        await session.execute_sql(begin)
        await session.execute(insert(Note).values({"name": "by hand"}))
    # the same pooled connection: its next user begins (MySQL would commit the open one)
    async with db.transaction() as tx:
        await tx.execute(insert(Note).values({"name": "next"}))
    assert await _names(db) == ["next"]
