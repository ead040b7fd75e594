"""What only one of the two engines has to say: tasks sharing an AsyncEngine, options checked
before anything connects, and when a stream left early is closed on each."""

from __future__ import annotations

import asyncio

import pytest

from tempest_typed import ConfigurationError, Engine, create_async_engine, insert, select

from .conftest import Fresh, Item


@pytest.mark.asyncio
async def test_tasks_share_one_engine_and_its_pool(url: str) -> None:
    engine = create_async_engine(url, pool_size=2)
    try:
        await engine.drop_all(Item)
        await engine.create_all(Item)

        async def work(n: int) -> None:
            async with engine.transaction() as tx:
                await tx.execute(insert(Item).values({"name": f"task {n}", "qty": n}))
                await asyncio.sleep(0)  # let the other tasks wait for a connection
                await tx.execute(select(Item).where({"qty": n}))

        await asyncio.gather(*(work(n) for n in range(10)))
        rows = (await engine.execute(select(Item, ["qty"]).order_by("qty"))).scalars()
        assert rows == list(range(10))
    finally:
        await engine.drop_all(Item)
        await engine.dispose()


def test_async_engine_options_are_checked_before_anything_connects() -> None:
    with pytest.raises(ConfigurationError, match="pool_size"):
        create_async_engine("postgresql://nobody@127.0.0.1:1/none", pool_size=0)
    with pytest.raises(ConfigurationError, match="busy_timeout"):
        create_async_engine("mysql://root@127.0.0.1:1/none", busy_timeout=5)
    with pytest.raises(ConfigurationError):
        create_async_engine("oracle://x/y")


def test_a_blocking_stream_left_early_is_closed_when_the_loop_is_left(fresh: Fresh) -> None:
    engine: Engine = fresh(Item)
    engine.execute(insert(Item).values([{"name": f"n{i}"} for i in range(50)]))
    with engine.session() as s:
        for _item in s.stream(select(Item), chunk_size=5):
            assert s.in_transaction or engine.dialect.name != "postgresql"
            break
        # no statement ran since: the stream's own transaction ended with the loop
        assert not s.in_transaction
        stream = s.stream(select(Item), chunk_size=5)
        with stream:
            assert len(list(stream)) == 50
        assert list(stream) == []  # a stream is read once
        assert not s.in_transaction
        # a stream still open when its session closes goes with the session's connection
        rows = iter(s.stream(select(Item), chunk_size=5))
        next(rows)
    del rows
    assert engine.execute(select(Item, ["id"]).where({"name": "n1"})).scalar() is not None


@pytest.mark.asyncio
async def test_an_async_stream_left_early_is_closed_before_the_next_statement(
        pg_url: str) -> None:
    engine = create_async_engine(pg_url)
    try:
        await engine.drop_all(Item)
        await engine.create_all(Item)
        await engine.execute(insert(Item).values([{"name": f"n{i}"} for i in range(20)]))
        async with engine.session() as s:
            async for _ in s.stream(select(Item), chunk_size=5):
                break
            # `async for` ran no cleanup: the stream and its transaction are still open ...
            assert s.in_transaction
            # ... until the session runs its next statement, which closes them first
            assert (await s.execute_sql("SELECT count(*) FROM pg_cursors")).scalar() == 0
            assert not s.in_transaction
    finally:
        await engine.drop_all(Item)
        await engine.dispose()


@pytest.mark.asyncio
async def test_a_cancelled_task_rolls_back_and_gives_its_connection_back(url: str) -> None:
    engine = create_async_engine(url, pool_size=1)
    try:
        await engine.drop_all(Item)
        await engine.create_all(Item)
        inside = asyncio.Event()

        async def work() -> None:
            async with engine.transaction() as tx:
                await tx.execute(insert(Item).values({"name": "never committed"}))
                inside.set()
                await asyncio.Event().wait()  # until cancelled (a client that went away)

        task = asyncio.create_task(work())
        await inside.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # one connection in the pool: it came back, rolled back
        assert (await engine.execute(select(Item))).all() == []
    finally:
        await engine.drop_all(Item)
        await engine.dispose()


@pytest.mark.asyncio
async def test_async_mysql_tells_mariadb_from_mysql_on_its_first_connection(
        mysql_url: str) -> None:
    from tempest_typed import TempestError

    engine = create_async_engine(mysql_url)
    try:
        with pytest.raises(TempestError, match="await a statement first"):
            _ = engine.dialect  # the blocking driver would connect here; this one does not
        assert (await engine.execute_sql("SELECT 1")).scalar() == 1
        assert engine.dialect.name in ("mysql", "mariadb")
    finally:
        await engine.dispose()
