"""The error hierarchy of tempest_typed: every failure a user can meet is one of these."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

__all__ = [
    "ConfigurationError",
    "DialectError",
    "IntegrityError",
    "LockNotAvailable",
    "MultipleResultsError",
    "NoResultError",
    "QueryExecutionError",
    "SchemaDifference",
    "SchemaError",
    "TempestError",
    "TransactionAborted",
    "TransactionConflict",
    "ValidationError",
]


class TempestError(Exception):
    """Base class of every error raised by tempest_typed."""


class ValidationError(TempestError, ValueError):
    """Bad builder input, raised while a statement is being built."""


class DialectError(TempestError):
    """The target database cannot express this statement; the message names the way out."""


_MAX_VALUE_CHARS = 80


def _cut(value: object) -> str:
    text = repr(value)
    if len(text) > _MAX_VALUE_CHARS:
        return text[: _MAX_VALUE_CHARS - 3] + "..."
    return text


class QueryExecutionError(TempestError):
    """The database refused a statement; carries the SQL and its parameters."""

    def __init__(self, message: str, sql: str, params: Sequence[object]) -> None:
        self.sql = sql
        self.params = tuple(params)
        shown = ", ".join(_cut(p) for p in self.params[:20])
        if len(self.params) > 20:
            shown += f", ... ({len(self.params)} parameters)"
        # No SQL (a connection that could not be made): the message alone, no empty lines.
        super().__init__(f"{message}\n  SQL: {sql}\n  parameters: ({shown})" if sql else message)
        self.message = message


class IntegrityError(QueryExecutionError):
    """A constraint was violated; `constraint` and `kind` say which when the database tells."""

    def __init__(
        self,
        message: str,
        sql: str,
        params: Sequence[object],
        *,
        constraint: str | None = None,
        kind: str | None = None,
    ) -> None:
        super().__init__(message, sql, params)
        self.constraint = constraint
        self.kind = kind


class LockNotAvailable(QueryExecutionError):
    """A `no_wait` lock met a row that another transaction holds."""


class TransactionConflict(QueryExecutionError):
    """The database aborted the transaction to resolve a conflict (a deadlock, or a
    serialization failure); it was rolled back whole and can be run again."""


class TransactionAborted(TempestError):
    """A statement in this transaction failed: it can only roll back (the first failure is
    the `__cause__`); nothing of it commits."""


class NoResultError(TempestError, LookupError):
    """`one()` or `scalar()` found no row."""


class MultipleResultsError(TempestError, LookupError):
    """`one()`, `one_or_none()` or `scalar()` found more than one row."""


class ConfigurationError(TempestError, ValueError):
    """An engine cannot be made as asked: a malformed URL, a missing driver, a bad option."""


@dataclasses.dataclass(frozen=True)
class SchemaDifference:
    """One way an existing table differs from its model, and the statement that fixes it."""

    table: str
    #: the SQL column name; None for the table's own differences (a missing table, its
    #: primary key, its indexes)
    column: str | None
    #: "missing column", "extra column", "changed type", "changed nullability",
    #: "missing table", "changed primary key", "missing index", "changed index",
    #: "index name taken", "table name taken" or "unknown reference"
    problem: str
    #: what the model makes (a column type, NULL / NOT NULL)
    expected: str
    #: what the database has
    actual: str
    #: the statement (or the model change) that makes the two agree
    fix: str

    def __str__(self) -> str:
        where = f"{self.table}.{self.column}" if self.column is not None else self.table
        return (f"{where}: {self.problem} (model: {self.expected}; database: {self.actual}); "
                f"fix: {self.fix}")


class SchemaError(TempestError):
    """An existing table differs from its model (create_all, check_schema); `.differences`
    lists each difference with its fix."""

    def __init__(self, differences: Sequence[SchemaDifference], dialect: str) -> None:
        self.differences = tuple(differences)
        tables = sorted({d.table for d in self.differences})
        lines = "\n".join(f"  - {d}" for d in self.differences)
        super().__init__(
            f"{dialect}: the table{'s' if len(tables) > 1 else ''} {', '.join(tables)} "
            f"differ{'' if len(tables) > 1 else 's'} from the model "
            f"({len(self.differences)} difference{'s' if len(self.differences) > 1 else ''}); "
            f"alter the table or the model:\n{lines}"
        )
