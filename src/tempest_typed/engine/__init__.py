"""Engines, sessions, transactions and results: running statements on real databases."""

from .aio import AsyncEngine, AsyncSession, AsyncStream, create_async_engine
from .engine import Engine, Session, Stream, create_engine
from .result import Result

Transaction = Session

__all__ = [
    "AsyncEngine", "AsyncSession", "AsyncStream", "Engine", "Result", "Session", "Stream",
    "Transaction", "create_async_engine", "create_engine",
]
