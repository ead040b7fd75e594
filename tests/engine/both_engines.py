"""Both engines behind one awaitable interface, on the three databases: the `db` fixture.

`db` is the blocking Engine behind a thin adapter whose methods are awaitable (each runs the
blocking call as it is), or the AsyncEngine itself, so a test written once as an async
function states what both engines do. The fixtures are every engine test's
(tests/engine/conftest.py imports them).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import pytest_asyncio

from tempest_typed import Engine, create_async_engine, create_engine

from .conftest import Child, Item, Parent

# -- the adapter: the blocking engine, awaitable -------------------------------------------


class SyncStream:
    """A blocking Stream seen through `async for` / `async with`."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._rows: Iterator[Any] | None = None

    def __aiter__(self) -> SyncStream:
        return self

    async def __anext__(self) -> Any:
        if self._rows is None:
            self._rows = iter(self._stream)
        try:
            return next(self._rows)
        except StopIteration:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self._stream.close()

    async def __aenter__(self) -> SyncStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._stream.close()


class SyncSession:
    def __init__(self, session: Any) -> None:
        self._s = session

    async def execute(self, stmt: Any) -> Any:
        return self._s.execute(stmt)

    async def execute_sql(self, sql: str, params: Any = ()) -> Any:
        return self._s.execute_sql(sql, params)

    async def _execute_together(self, stmts: Any) -> Any:
        return self._s._execute_together(stmts)

    @asynccontextmanager
    async def transaction(self, *args: Any, **kwargs: Any) -> AsyncIterator[SyncSession]:
        with self._s.transaction(*args, **kwargs):
            yield self

    async def close(self) -> None:
        self._s.close()

    def stream(self, stmt: Any, **kwargs: Any) -> SyncStream:
        return SyncStream(self._s.stream(stmt, **kwargs))

    @property
    def in_transaction(self) -> bool:
        return bool(self._s.in_transaction)


class SyncEngine:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.dialect = engine.dialect

    async def execute(self, stmt: Any) -> Any:
        return self.engine.execute(stmt)

    async def execute_sql(self, sql: str, params: Any = ()) -> Any:
        return self.engine.execute_sql(sql, params)

    async def _execute_together(self, stmts: Any) -> Any:
        return self.engine._execute_together(stmts)

    async def create_all(self, *models: type) -> None:
        self.engine.create_all(*models)

    async def drop_all(self, *models: type) -> None:
        self.engine.drop_all(*models)

    async def check_schema(self, *models: type) -> None:
        self.engine.check_schema(*models)

    async def dispose(self) -> None:
        self.engine.dispose()

    @asynccontextmanager
    async def session(self) -> AsyncIterator[SyncSession]:
        with self.engine.session() as s:
            yield SyncSession(s)

    @asynccontextmanager
    async def transaction(self, *args: Any, **kwargs: Any) -> AsyncIterator[SyncSession]:
        with self.engine.transaction(*args, **kwargs) as tx:
            yield SyncSession(tx)

    async def run_transaction(self, work: Any, **kwargs: Any) -> Any:
        return self.engine.run_transaction(lambda tx: _now(work(SyncSession(tx))), **kwargs)


def _now(coroutine: Any) -> Any:
    """The result of a coroutine that never waits (one over the blocking adapter)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("a coroutine over the blocking adapter waited")


@pytest_asyncio.fixture(params=["sync", "async"])
async def db(request: pytest.FixtureRequest, url: str) -> AsyncIterator[Any]:
    """Both engines on `url`, with the test module's `MODELS` (eng_items, eng_parents and
    eng_children when it names none) dropped, created empty, and dropped after, even when
    the test fails; a module with `CREATE_MODELS = False` gets them dropped only."""
    engine: Any = (SyncEngine(create_engine(url)) if request.param == "sync"
                   else create_async_engine(url))
    models = tuple(getattr(request.module, "MODELS", (Item, Parent, Child)))
    try:
        await engine.drop_all(*models)
        if getattr(request.module, "CREATE_MODELS", True):
            await engine.create_all(*models)
        yield engine
    finally:
        try:
            await engine.drop_all(*models)
        finally:
            await engine.dispose()
