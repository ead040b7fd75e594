"""A program whose async engine it never disposed of still ends: asyncio.run() cancels every
task left, and the PostgreSQL pool's connecting task took that cancel for a failed attempt and
tried again, so the program hung in asyncio.run() forever. Run in a child process, on each
database."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

_PROGRAM = """
    import asyncio, sys
    from tempest_typed import create_async_engine

    async def main() -> None:
        engine = create_async_engine(sys.argv[1])
        await engine.execute_sql("SELECT 1")
        # no engine.dispose(): the pool may still be connecting its next connection

    async def with_a_session() -> None:
        engine = create_async_engine(sys.argv[1])
        async with engine.session() as session:
            await session.execute_sql("SELECT 2")

    for _ in range(3):
        asyncio.run(main())
    asyncio.run(with_a_session())
    print("ended")
"""


@pytest.mark.parametrize("which", ["postgresql", "mysql", "sqlite"])
def test_an_undisposed_async_engine_lets_asyncio_run_end(
        which: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    url = (request.getfixturevalue("pg_url") if which == "postgresql"
           else request.getfixturevalue("mysql_url") if which == "mysql"
           else f"sqlite:///{tmp_path / 'end.db'}")
    try:
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(_PROGRAM), url],
                              capture_output=True, text=True, timeout=60, check=False,
                              cwd=Path(__file__).parents[2])
    except subprocess.TimeoutExpired:
        pytest.fail("the program did not end within 60 s of asyncio.run() returning its main")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ended\n"
    assert "error connecting" not in done.stderr, done.stderr
