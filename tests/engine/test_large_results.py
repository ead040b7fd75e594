"""A large result is not kept on its connection after it is fetched: the PostgreSQL driver's
kept cursor would hold libpq's copy of every row until the connection's next statement
(on an idle pooled connection, for as long as it idles)."""

from __future__ import annotations

from typing import Any

from tempest_typed.engine.drivers.psycopg import _LARGE_RESULT, PsycopgDriver
from tempest_typed.engine.url import parse_url

SERIES = "SELECT g, repeat('x', 40) FROM generate_series(1, %s) AS g"


def test_a_large_result_lets_its_cursor_go_and_the_next_statement_gets_a_new_one(
        pg_url: str) -> None:
    driver = PsycopgDriver(parse_url(pg_url), pool_size=1)
    conn = driver.acquire()
    try:
        rows, count = driver.run(conn, SERIES, (10,))
        kept = conn._tempest_cursor
        assert (len(rows or ()), count, kept.pgresult.ntuples) == (10, 10, 10)
        rows, count = driver.run(conn, SERIES, (_LARGE_RESULT,))
        assert (len(rows or ()), count) == (_LARGE_RESULT, _LARGE_RESULT)
        assert kept.closed and not hasattr(conn, "_tempest_cursor")
        rows, count = driver.run(conn, SERIES, (3,))
        again: Any = conn._tempest_cursor
        assert rows == [(1, "x" * 40), (2, "x" * 40), (3, "x" * 40)] and again is not kept
    finally:
        driver.release(conn)
        driver.close()
