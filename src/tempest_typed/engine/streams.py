"""The objects `session.stream(stmt)` returns: the rows of one select as they arrive.

A stream is iterated once. Its cursor and what it reads ahead are the session's
(core.StreamState); the stream only asks its session for the next chunk. The blocking and the
asyncio stream differ in how a loop left early is noticed: the blocking one iterates through a
generator, which closes its cursor as soon as the loop lets it go; the asyncio one is closed
by `async with`, or by its session once the stream object is gone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterator
from typing import Any, Generic, Protocol, TypeVar

from ..statements.base import Statement
from .core import StreamState

__all__ = ["AsyncStream", "Stream"]

R = TypeVar("R")


class _Session(Protocol):
    _closed: bool

    def _next_chunk(self, stream: Any) -> list[Any] | None: ...

    def _close_stream(self, state: StreamState) -> None: ...


class _AsyncSession(Protocol):
    _closed: bool

    def _next_chunk(self, stream: Any) -> Awaitable[list[Any] | None]: ...

    def _close_stream(self, state: StreamState) -> Awaitable[None]: ...


class Stream(Generic[R]):
    """The rows of one select as they arrive: iterate once; leaving early closes the cursor."""

    def __init__(self, session: _Session, stmt: Statement[R], chunk_size: int) -> None:
        self._session = session
        self._stmt = stmt
        self._chunk_size = chunk_size
        self._state: StreamState | None = None
        self._done = False

    def __iter__(self) -> Iterator[R]:
        """The rows, chunk by chunk; a loop left early (break, exception) closes the cursor."""
        try:
            while not self._done:
                chunk = self._session._next_chunk(self)
                if chunk is None:
                    return
                yield from chunk
        finally:
            self.close()

    def close(self) -> None:
        """Close the cursor (and end the transaction stream() began); the session stays."""
        if self._done:
            return
        self._done = True
        state = self._state
        if state is not None and state.live() and not self._session._closed:
            self._session._close_stream(state)

    def __enter__(self) -> Stream[R]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncStream(Generic[R]):
    """The rows of one select as they arrive: `async for` once. A loop left early (break,
    an exception) closes the cursor when the stream object is dropped, at the latest when
    the session runs its next statement or closes; `async with` closes it at the end of
    the block."""

    def __init__(self, session: _AsyncSession, stmt: Statement[R], chunk_size: int) -> None:
        self._session = session
        self._stmt = stmt
        self._chunk_size = chunk_size
        self._state: StreamState | None = None
        self._rows: list[Any] = []
        self._at = 0
        self._done = False

    def __aiter__(self) -> AsyncStream[R]:
        return self

    async def __anext__(self) -> R:
        """The next row; a new chunk is fetched when the last one is used up."""
        while self._at >= len(self._rows):
            if self._done:
                raise StopAsyncIteration
            try:
                chunk = await self._session._next_chunk(self)
            except BaseException:
                self._finished()
                raise
            if chunk is None:
                self._finished()
                raise StopAsyncIteration
            self._rows, self._at = chunk, 0
        row: R = self._rows[self._at]
        self._at += 1
        return row

    def _finished(self) -> None:
        self._done = True
        self._rows, self._at = [], 0

    async def aclose(self) -> None:
        """Close the cursor (and end the transaction stream() began); the session stays."""
        if self._done:
            return
        self._finished()
        state = self._state
        if state is not None and state.live() and not self._session._closed:
            await self._session._close_stream(state)

    async def __aenter__(self) -> AsyncStream[R]:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
