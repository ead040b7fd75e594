"""A session and its transactions belong to one thread (or asyncio task) at a time.

Shared by two at once, a session would interleave their statements on one connection: a
thread's statement inside another's transaction, one result read by the other, and on the
async engine two pool connections taken for one session (one never given back). A second
user meets a TempestError that names the rule instead, on the three databases.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from tempest_typed import (
    AsyncSession,
    Engine,
    TempestError,
    create_async_engine,
    insert,
    select,
)

from .conftest import Fresh, Item


def _in_thread(work: Any) -> BaseException | None:
    """Run `work` on a thread of its own: what it raised, or None."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:
            raised.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    assert not thread.is_alive()
    return raised[0] if raised else None


def test_another_thread_cannot_use_a_session_inside_its_transaction(fresh: Fresh) -> None:
    engine = fresh(Item)
    with engine.session() as session:
        with session.transaction():
            session.execute(insert(Item).values({"name": "mine"}))
            for other in (lambda: session.execute(insert(Item).values({"name": "theirs"})),
                          lambda: session.execute_sql("SELECT 1"),
                          lambda: list(session.stream(select(Item))),
                          session.close):
                error = _in_thread(other)
                assert isinstance(error, TempestError)
                assert "another thread" in str(error) and "engine.session()" in str(error)
            session.execute(insert(Item).values({"name": "mine too"}))
        # the transaction is over: another thread may use the session now
        assert _in_thread(lambda: session.execute(insert(Item).values({"name": "later"}))) is None
    names = sorted(engine.execute(select(Item, ["name"])).scalars())
    assert names == ["later", "mine", "mine too"]


def test_another_thread_cannot_use_a_session_while_a_statement_runs(fresh: Fresh) -> None:
    engine = fresh(Item)
    driver: Any = engine._io
    running, release = threading.Event(), threading.Event()
    run = driver.run

    def slow_run(conn: Any, sql: str, params: Any) -> Any:
        if "slow" in sql:
            running.set()
            release.wait(30)
        return run(conn, sql, params)

    with engine.session() as session:
        driver.run = slow_run
        try:
            first = threading.Thread(target=lambda: session.execute_sql("SELECT 'slow'"))
            first.start()
            assert running.wait(30)
            error = _in_thread(lambda: session.execute(insert(Item).values({"name": "x"})))
            release.set()
            first.join(30)
        finally:
            driver.run = run
            release.set()
        assert isinstance(error, TempestError) and "running a statement" in str(error)
        session.execute(insert(Item).values({"name": "y"}))
    assert engine.execute(select(Item, ["name"])).scalars() == ["y"]


def test_threads_taking_turns_on_one_session_lose_no_row(engine: Engine,
                                                         fresh: Fresh) -> None:
    """Each thread writes through the shared session; a turn refused is a TempestError,
    never a row lost or a result mixed."""
    fresh(Item)
    written: list[str] = []
    refused: list[TempestError] = []
    lock = threading.Lock()
    with engine.session() as session:

        def writer(n: int) -> None:
            for i in range(40):
                name = f"t{n}-{i}"
                try:
                    made = session.execute(insert(Item).values({"name": name}).returning("name"))
                except TempestError as exc:
                    with lock:
                        refused.append(exc)
                    continue
                assert made.scalar() == name  # never another thread's row
                with lock:
                    written.append(name)

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    stored = sorted(engine.execute(select(Item, ["name"])).scalars())
    assert stored == sorted(written)
    assert all("another thread" in str(e) for e in refused)


# -- asyncio tasks ---------------------------------------------------------------------------


async def _with_items(url: str) -> Any:
    engine = create_async_engine(url, pool_size=2)
    await engine.drop_all(Item)
    await engine.create_all(Item)
    return engine


@pytest.mark.asyncio
async def test_another_task_cannot_use_a_session_inside_its_transaction(url: str) -> None:
    engine = await _with_items(url)
    try:
        async with engine.session() as session:
            inside, done = asyncio.Event(), asyncio.Event()

            async def owner() -> None:
                async with session.transaction():
                    await session.execute(insert(Item).values({"name": "mine"}))
                    inside.set()
                    await done.wait()

            task = asyncio.create_task(owner())
            await inside.wait()
            with pytest.raises(TempestError, match="another task"):
                await session.execute(insert(Item).values({"name": "theirs"}))
            done.set()
            await task
            await session.execute(insert(Item).values({"name": "after"}))
        names = sorted((await engine.execute(select(Item, ["name"]))).scalars())
        assert names == ["after", "mine"]
    finally:
        await engine.drop_all(Item)
        await engine.dispose()


@pytest.mark.asyncio
async def test_concurrent_tasks_on_one_session_take_no_second_connection(url: str) -> None:
    engine = await _with_items(url)
    try:
        for _ in range(3):
            session: AsyncSession = engine.session()
            outcomes = await asyncio.gather(
                *(session.execute(insert(Item).values({"name": f"n{i}-{id(session)}"}))
                  for i in range(4)),
                return_exceptions=True)
            await session.close()
            errors = [o for o in outcomes if isinstance(o, BaseException)]
            assert all(isinstance(e, TempestError) and "another task" in str(e)
                       for e in errors)
        # every connection went back: the pool of 2 serves two sessions at once
        async with engine.session() as a, engine.session() as b:
            await a.execute_sql("SELECT 1")
            await b.execute_sql("SELECT 1")
    finally:
        await engine.drop_all(Item)
        await engine.dispose()
