"""tempest_typed: a typed, fluent SQL query builder for PostgreSQL, SQLite and MySQL/MariaDB.

The public names are imported on first use (PEP 562): `import tempest_typed.mypy`, the mypy
plugin's entry point, then loads no part of the runtime. Type checkers read the imports below.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
        TransactionAborted,
        TransactionConflict,
        ValidationError,
    )
    from .model import UNSET, ForeignKey, Index, Model, column
    from .row import Row
    from .statements import (
        Condition,
        Delete,
        Grouped,
        Insert,
        Join,
        NamedSelect,
        Select,
        SetQuery,
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
    "ForeignKey", "Grouped", "Index", "Insert", "IntegrityError", "Join", "LockNotAvailable", "Model",
    "NamedSelect",
    "MultipleResultsError", "NoResultError", "QueryExecutionError", "Result", "Row",
    "SchemaError", "Select", "Session", "SetQuery", "Statement", "Stream", "Subquery", "TempestError", "Transaction",
    "TransactionAborted", "TransactionConflict", "Update", "ValidationError", "and_", "column", "create_async_engine",
    "create_engine",
    "delete", "insert", "join", "not_", "or_", "select", "sql", "update",
]

__version__ = "0.1.0"

#: Where each public name is defined (`sql` is a submodule itself), for the imports done on
#: first use; tests/test_lazy_package.py checks it against the imports above.
_HOMES = {name: home for home, names in {
    "sql": ("sql",),
    "dialects": ("Compiled",),
    "engine": ("AsyncEngine", "AsyncSession", "AsyncStream", "Engine", "Result", "Session",
               "Stream", "Transaction", "create_async_engine", "create_engine"),
    "errors": ("ConfigurationError", "DialectError", "IntegrityError", "LockNotAvailable",
               "MultipleResultsError", "NoResultError", "QueryExecutionError", "SchemaError",
               "TempestError", "TransactionAborted", "TransactionConflict", "ValidationError"),
    "model": ("UNSET", "ForeignKey", "Index", "Model", "column"),
    "row": ("Row",),
    "statements": ("Condition", "Delete", "Grouped", "Insert", "Join", "NamedSelect", "Select",
                   "SetQuery", "Statement", "Subquery", "Update", "and_", "delete", "insert", "join", "not_", "or_",
                   "select", "update"),
}.items() for name in names}
#: The submodules that are attributes of the package once imported (`tempest_typed.sql`).
_SUBMODULES = frozenset({"dialects", "engine", "errors", "expressions", "model", "row", "sql",
                         "statements"})

if not TYPE_CHECKING:  # type checkers read the imports above, and no catch-all attribute

    def __getattr__(name: str) -> object:
        """A public name (or a submodule), imported the first time it is asked for."""
        home = _HOMES.get(name, name if name in _SUBMODULES else None)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from importlib import import_module

        module = import_module(f"{__name__}.{home}")
        value = module if home == name else getattr(module, name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        """The module's names and the public names not imported yet."""
        return sorted(set(globals()) | set(__all__) | _SUBMODULES)
