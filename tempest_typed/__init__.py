"""tempest_typed: a typed, fluent SQL query builder for PostgreSQL, SQLite and MySQL/MariaDB."""

from . import sql
from .dialects import Compiled
from .engine import Engine, Result, Session, Transaction, create_engine
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
    Insert,
    Select,
    Statement,
    Subquery,
    Update,
    and_,
    delete,
    insert,
    not_,
    or_,
    select,
    update,
)

__all__ = [
    "UNSET", "Compiled", "Condition", "ConfigurationError", "Delete", "DialectError", "Engine", "Index", "Insert",
    "IntegrityError", "LockNotAvailable", "Model", "MultipleResultsError", "NoResultError",
    "QueryExecutionError", "Result", "Row", "SchemaError", "Select", "Session", "Transaction", "Statement", "Subquery", "TempestError", "TransactionConflict", "Update",
    "ValidationError", "and_", "column", "create_engine", "delete", "insert", "not_", "or_", "select", "sql",
    "update",
]

__version__ = "0.1.0"
