"""tempest_typed: a typed, fluent SQL query builder for PostgreSQL, SQLite and MySQL/MariaDB."""

from . import sql
from .dialects import Compiled
from .engine import (
    AsyncEngine,
    AsyncSession,
    AsyncStream,
    Engine,
    Result,
    Session,
    Stream,
    Transaction,
    create_async_engine,
    create_engine,
)
from .errors import (
    ConfigurationError,
    DialectError,
    IntegrityError,
    LockNotAvailable,
    MultipleResultsError,
    NoResultError,
    QueryExecutionError,
    SchemaError,
    TempestError,
    TransactionConflict,
    ValidationError,
)
from .model import UNSET, Index, Model, column
from .row import Row
from .statements import (
    Condition,
    Delete,
    Grouped,
    Insert,
    Join,
    Select,
    Statement,
    Subquery,
    Update,
    and_,
    delete,
    insert,
    join,
    not_,
    or_,
    select,
    update,
)

__all__ = [
    "UNSET", "AsyncEngine", "AsyncSession", "AsyncStream", "Compiled", "Condition", "ConfigurationError", "Delete", "DialectError", "Engine",
    "Grouped", "Index", "Insert", "IntegrityError", "Join", "LockNotAvailable", "Model",
    "MultipleResultsError", "NoResultError", "QueryExecutionError", "Result", "Row",
    "SchemaError", "Select", "Session", "Statement", "Stream", "Subquery", "TempestError", "Transaction",
    "TransactionConflict", "Update", "ValidationError", "and_", "column", "create_async_engine",
    "create_engine",
    "delete", "insert", "join", "not_", "or_", "select", "sql", "update",
]

__version__ = "0.1.0"
