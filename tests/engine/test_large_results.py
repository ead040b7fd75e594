"""A fetched result is not kept by the driver after run() returns its rows.

The rows' builder makes each model in the fetched list, letting each tuple go as its row is
made; a second reference to the tuples (libpq's copy of a large result on the PostgreSQL
driver's kept cursor, the result object a MySQL connection keeps until its next statement)
kept them all alive with the models: a double peak, and on an idle pooled connection, memory
held for as long as it idles. Each driver, blocking and asyncio.
"""

from __future__ import annotations

import gc

import pytest

from tempest_typed.engine.drivers.mysql import PyMySQLDriver
from tempest_typed.engine.drivers.mysql_async import AsyncmyDriver
from tempest_typed.engine.drivers.psycopg import _LARGE_RESULT, PsycopgDriver
from tempest_typed.engine.drivers.psycopg_async import AsyncPsycopgDriver
from tempest_typed.engine.url import parse_url

PG_SERIES = "SELECT g, repeat('x', 40) FROM generate_series(1, %s) AS g"
MY_SERIES = ("SELECT seq, REPEAT('x', 40) FROM (SELECT 1 AS seq UNION ALL SELECT 2 "
             "UNION ALL SELECT 3) AS t WHERE seq <= %s")


def test_a_large_result_lets_its_cursor_go_and_the_next_statement_gets_a_new_one(
        pg_url: str) -> None:
    driver = PsycopgDriver(parse_url(pg_url), pool_size=1)
    conn = driver.acquire()
    try:
        rows, count = driver.run(conn, PG_SERIES, (10,))
        kept = conn._tempest_cursor
        assert (len(rows or ()), count, kept.pgresult.ntuples) == (10, 10, 10)
        rows, count = driver.run(conn, PG_SERIES, (_LARGE_RESULT,))
        assert (len(rows or ()), count) == (_LARGE_RESULT, _LARGE_RESULT)
        assert kept.closed and not hasattr(conn, "_tempest_cursor")
        rows, count = driver.run(conn, PG_SERIES, (3,))
        assert rows == [(1, "x" * 40), (2, "x" * 40), (3, "x" * 40)]
        assert conn._tempest_cursor is not kept
    finally:
        driver.release(conn)
        driver.close()


@pytest.mark.asyncio
async def test_the_asyncio_driver_lets_a_large_result_go_too(pg_url: str) -> None:
    driver = AsyncPsycopgDriver(parse_url(pg_url), pool_size=1)
    conn = await driver.acquire()
    try:
        await driver.run(conn, PG_SERIES, (10,))
        kept = conn._tempest_cursor
        rows, _ = await driver.run(conn, PG_SERIES, (_LARGE_RESULT,))
        assert len(rows or ()) == _LARGE_RESULT
        assert kept.closed and not hasattr(conn, "_tempest_cursor")
        rows, _ = await driver.run(conn, PG_SERIES, (2,))
        assert rows == [(1, "x" * 40), (2, "x" * 40)]
    finally:
        await driver.release(conn)
        await driver.close()


def test_a_mysql_connection_keeps_no_copy_of_the_rows_it_returned(mysql_url: str) -> None:
    driver = PyMySQLDriver(parse_url(mysql_url), pool_size=1)
    conn = driver.acquire()
    try:
        rows, count = driver.run(conn, MY_SERIES, (3,))
        assert rows == [(1, "x" * 40), (2, "x" * 40), (3, "x" * 40)] and count == 3
        assert conn._result.rows is None  # the connection's result let its tuples go
        assert driver.run(conn, MY_SERIES, (1,))[0] == [(1, "x" * 40)]
    finally:
        driver.release(conn)
        driver.close()


@pytest.mark.asyncio
async def test_an_asyncmy_connection_keeps_no_copy_of_the_rows_it_returned(
        mysql_url: str) -> None:
    driver = AsyncmyDriver(parse_url(mysql_url), pool_size=1)
    conn = await driver.acquire()
    try:
        rows, count = await driver.run(conn, MY_SERIES, (2,))
        assert rows == [(1, "x" * 40), (2, "x" * 40)] and count == 2
        assert conn._result.rows is None
        assert (await driver.run(conn, MY_SERIES, (1,)))[0] == [(1, "x" * 40)]
    finally:
        await driver.release(conn)
        await driver.close()


def test_the_cyclic_gc_sleeps_while_a_large_result_is_fetched_and_only_then(
        pg_url: str) -> None:
    driver = PsycopgDriver(parse_url(pg_url), pool_size=1)
    conn = driver.acquire()
    collections: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(count)
    try:
        gc.collect()
        collections.clear()
        rows, _ = driver.run(conn, PG_SERIES, (20_000,))
        # 20,000 new tuples would set off dozens of collections; at most the one owed once
        # the collector is back on may run before run() returns
        assert len(rows or ()) == 20_000 and len(collections) <= 1 and gc.isenabled()
        gc.disable()  # a program that turned the collector off keeps it off
        driver.run(conn, PG_SERIES, (2_000,))
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.callbacks.remove(count)
        driver.release(conn)
        driver.close()
