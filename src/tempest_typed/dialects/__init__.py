"""Dialect compilers: statement tree in, (sql, params) out. No database is touched here."""

from __future__ import annotations

from ..errors import DialectError
from .base import PACKED, Compiled, CompiledShape, Dialect, packed_kind, shifted
from .mysql import MariaDBDialect, MySQLDialect
from .postgresql import PostgreSQLDialect
from .sqlite import SQLiteDialect

__all__ = ["PACKED", "Compiled", "CompiledShape", "Dialect", "MariaDBDialect", "MySQLDialect",
           "PostgreSQLDialect", "SQLiteDialect", "get_dialect", "packed_kind", "shifted"]

_DIALECTS: dict[str, Dialect] = {}
_CLASSES: dict[str, type[Dialect]] = {
    "postgresql": PostgreSQLDialect,
    "postgres": PostgreSQLDialect,
    "sqlite": SQLiteDialect,
    "mysql": MySQLDialect,
    "mariadb": MariaDBDialect,
}


def get_dialect(dialect: str | Dialect) -> Dialect:
    """The shared dialect instance for a name: postgresql, sqlite, mysql or mariadb."""
    if isinstance(dialect, Dialect):
        return dialect
    found = _DIALECTS.get(dialect)
    if found is None:
        cls = _CLASSES.get(dialect)
        if cls is None:
            raise DialectError(
                f"unknown dialect {dialect!r}; use 'postgresql', 'sqlite', 'mysql' or 'mariadb'"
            )
        found = _DIALECTS[dialect] = _DIALECTS.get(cls.name) or cls()
        _DIALECTS[cls.name] = found
    return found
