"""A MySQL/MariaDB statement's warnings (INSERT IGNORE skipping a duplicate) are never printed
by a driver: both engines log them to "tempest_typed.sql" at DEBUG, and only then read them."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tempest_typed import create_async_engine, create_engine, insert

from .conftest import Item

LOGGER = "tempest_typed.sql"
DUPLICATE = "MySQL warning 1062: Duplicate entry 'twice' for key 'name' (after: INSERT IGNORE"

_SCRIPT = """
import asyncio, sys
from tempest_typed import create_async_engine, create_engine, insert
from tests.engine.conftest import Item

url = sys.argv[1]
twice = insert(Item).values({"name": "twice"}).on_conflict_do_nothing()

async def main():
    engine = create_async_engine(url)
    try:
        await engine.drop_all(Item)
        await engine.create_all(Item)
        for _ in range(2):
            await engine.execute(twice)
    finally:
        await engine.drop_all(Item)
        await engine.dispose()

asyncio.run(main())
with create_engine(url) as engine:
    engine.drop_all(Item)
    engine.create_all(Item)
    try:
        for _ in range(2):
            engine.execute(twice)
    finally:
        engine.drop_all(Item)
print("done")
"""


def test_nothing_is_printed_by_either_engine(mysql_url: str) -> None:
    # A child interpreter: pytest's own log handler would catch what Python's last-resort
    # handler prints to stderr when nothing is configured.
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(_SCRIPT), mysql_url],
                          capture_output=True, text=True, timeout=120, check=False,
                          cwd=Path(__file__).parents[2])
    assert done.returncode == 0, done.stderr
    assert done.stdout == "done\n"
    assert done.stderr == ""


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == LOGGER and r.levelno == logging.DEBUG]


def test_at_debug_both_engines_log_the_warnings(mysql_url: str,
                                                caplog: pytest.LogCaptureFixture) -> None:
    twice = insert(Item).values({"name": "twice"}).on_conflict_do_nothing()
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    with create_engine(mysql_url) as engine:
        engine.drop_all(Item)
        engine.create_all(Item)
        try:
            engine.execute(twice)
            assert _warnings(caplog) == []
            engine.execute(twice)
        finally:
            engine.drop_all(Item)
    [blocking] = _warnings(caplog)
    caplog.clear()

    async def run_async() -> None:
        engine = create_async_engine(mysql_url)
        try:
            await engine.drop_all(Item)
            await engine.create_all(Item)
            await engine.execute(twice)
            assert _warnings(caplog) == []
            await engine.execute(twice)
        finally:
            await engine.drop_all(Item)
            await engine.dispose()

    asyncio.run(run_async())
    [asynchronous] = _warnings(caplog)
    assert blocking == asynchronous
    assert blocking.startswith(DUPLICATE)
    assert not [r for r in caplog.records if r.name.startswith("asyncmy")]


def test_without_debug_no_warning_is_read(mysql_url: str,
                                          caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    twice = insert(Item).values({"name": "twice"}).on_conflict_do_nothing()

    async def run_async() -> None:
        engine = create_async_engine(mysql_url)
        try:
            await engine.drop_all(Item)
            await engine.create_all(Item)
            for _ in range(2):
                await engine.execute(twice)
        finally:
            await engine.drop_all(Item)
            await engine.dispose()

    asyncio.run(run_async())
    assert _warnings(caplog) == []
    assert not [r for r in caplog.records if r.name.startswith("asyncmy")]
