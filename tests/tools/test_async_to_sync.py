"""tools/async_to_sync.py: the blocking modules are written from their asyncio sources."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("async_to_sync", ROOT / "tools" / "async_to_sync.py")
assert _spec is not None and _spec.loader is not None
tool = importlib.util.module_from_spec(_spec)
sys.modules["async_to_sync"] = tool
_spec.loader.exec_module(tool)


def test_the_keywords_go_and_the_names_become_blocking() -> None:
    source = '''import asyncio  # async only
from collections.abc import (  # sync: from collections.abc import Callable
    Awaitable,
    Callable,
)

__all__ = ["AsyncEngine"]


class AsyncEngine:
    async def run(self, work: Callable[[], Awaitable[int]]) -> int:
        """Await `work`; comments and "AsyncEngine" in text stay."""
        await asyncio.sleep(0.1)  # a pause
        async with self.lock:
            async for row in self.rows():
                pass
        return await work()

    # async only: begin
    async def listen(self) -> None:
        pass

    # async only: end
    async def __aenter__(self) -> AsyncEngine:
        return self
'''
    assert tool.convert(source) == '''from collections.abc import Callable

__all__ = ["Engine"]


class Engine:
    def run(self, work: Callable[[], int]) -> int:
        """Await `work`; comments and "AsyncEngine" in text stay."""
        time.sleep(0.1)  # a pause
        with self.lock:
            for row in self.rows():
                pass
        return work()

    def __enter__(self) -> Engine:
        return self
'''


def test_every_generated_module_is_up_to_date() -> None:
    assert tool.main(["--check"]) == 0


def test_an_empty_sync_marker_drops_the_line_and_the_queue_names_become_blocking() -> None:
    source = '''import asyncio  # sync:
import time

from .work_aio import AsyncWork  # sync: from .work import Work


class AsyncQueue(AsyncWork):
    async def wait(self) -> None:
        await asyncio.sleep(time.monotonic())


class AsyncLoop:
    _kind = "async worker"  # sync: _kind = "worker"
'''
    assert tool.convert(source) == '''import time

from .work import Work


class Queue(Work):
    def wait(self) -> None:
        time.sleep(time.monotonic())


class Loop:
    _kind = "worker"
'''


def test_a_comment_line_marked_sync_is_blocking_code_and_a_closing_line_skips_nothing() -> None:
    source = '''async def take(slots: asyncio.Semaphore, timeout: float) -> bool:
    # async only: begin
    await asyncio.wait_for(slots.acquire(), timeout)
    return True
    # async only: end
    # sync: return slots.acquire(timeout=timeout)


def make() -> Rules:
    return Rules(url,
                 errors=asyncmy.errors)  # sync: errors=pymysql.err)
    after = AsyncConnectionPool(AsyncConnection)
'''
    assert tool.convert(source) == '''def take(slots: threading.BoundedSemaphore, timeout: float) -> bool:
    return slots.acquire(timeout=timeout)


def make() -> Rules:
    return Rules(url,
                 errors=pymysql.err)
    after = ConnectionPool(Connection)
'''


def test_every_generated_module_says_so_and_names_its_source() -> None:
    for source, target in tool.FILES:
        text = (ROOT / target).read_text()
        assert text.startswith(tool.header(source)), target
        assert "do not edit" in text.splitlines()[0]


def test_a_module_ending_in_an_async_only_block_ends_with_one_newline() -> None:
    source = "x = 1\n\n\n# async only: begin\nclass Listener:\n    pass\n# async only: end\n"
    assert tool.convert(source) == "x = 1\n"
