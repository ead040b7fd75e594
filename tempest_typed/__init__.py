"""tempest_typed: a typed, fluent SQL query builder for PostgreSQL, SQLite and MySQL/MariaDB."""

from . import sql
from .dialects import Compiled
from .errors import (
    DialectError,
    IntegrityError,
    LockNotAvailable,
    MultipleResultsError,
    NoResultError,
    QueryExecutionError,
    TempestError,
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
    "UNSET", "Compiled", "Condition", "Delete", "DialectError", "Index", "Insert",
    "IntegrityError", "LockNotAvailable", "Model", "MultipleResultsError", "NoResultError",
    "QueryExecutionError", "Row", "Select", "Statement", "Subquery", "TempestError", "Update",
    "ValidationError", "and_", "column", "delete", "insert", "not_", "or_", "select", "sql",
    "update",
]

__version__ = "0.1.0"
