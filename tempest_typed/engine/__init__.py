"""Engines, sessions, transactions and results: running statements on real databases."""

from .engine import Engine, Session, create_engine
from .result import Result

Transaction = Session

__all__ = ["Engine", "Result", "Session", "Transaction", "create_engine"]
