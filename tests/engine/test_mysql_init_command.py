"""A caller's init_command (connect_args or ?init_command= in the URL) runs on every new
MySQL/MariaDB connection without taking the place of the engine's own session settings: it
replaced them, so the session's time zone was the server's (NOW() and sql.now() in its local
time) and an explicit 0 in an identity column was stored as the next generated id."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest

from tempest_typed import Model, column, create_async_engine, create_engine, insert, select

from .both_engines import SyncEngine


class Counter(Model, table="eng_init_command"):
    id: int = column(primary_key=True)
    name: str = "x"


MINE = "SET @tempest_init = 7"


def _engines(mysql_url: str) -> list[Any]:
    in_url = f"{mysql_url}?init_command={quote(MINE)}"
    return [SyncEngine(create_engine(mysql_url, connect_args={"init_command": MINE})),
            create_async_engine(mysql_url, connect_args={"init_command": MINE}),
            SyncEngine(create_engine(in_url)), create_async_engine(in_url)]


@pytest.mark.asyncio
async def test_an_init_command_runs_beside_the_engines_session_settings(mysql_url: str) -> None:
    for engine in _engines(mysql_url):
        try:
            await engine.drop_all(Counter)
            await engine.create_all(Counter)
            await engine.execute(insert(Counter).values({"id": 0, "name": "zero"}))
            assert (await engine.execute(select(Counter, ["id"]))).scalars() == [0]
            settings = await engine.execute_sql("SELECT @@session.time_zone, @tempest_init")
            assert settings.all() == [("+00:00", 7)]
        finally:
            await engine.drop_all(Counter)
            await engine.dispose()
