"""What a driver decides without waiting: the rules both engines share.

A driver is two parts. Its rules (DriverRules here, one subclass per database) adapt values by
column kind, translate the library's exceptions into tempest_typed's (keeping the original as
`__cause__`), say what the database can do (`stream_coexists`, `batches_rows`, ...) and spell
the SQL of its transaction control; they never touch a connection. Its connections (opening,
pooling, running SQL, streaming, closing) are driver_async.py's AsyncDriver, written once for
asyncio, and driver.py's Driver, the blocking copy generated from it by
tools/async_to_sync.py. The engine reads the rules (`engine._driver`) and waits on the
connections (`engine._io`), so both engines read values, name errors and spell statements alike.

Listener, the interface of a LISTEN connection, is here too: only the asyncio engine has one,
so it has no blocking copy to be generated.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar

from ...dialects import PACKED, Dialect
from ...errors import ConfigurationError, DialectError, QueryExecutionError, ValidationError
from ...values import untyped_value
from ..types import Adapter, Adapters

__all__ = ["MEMORY_POOL_FIX", "MISSING_COLUMN_HINT", "MISSING_TABLE_HINT", "POOL_FIX", "DriverRules",
           "Listener", "hinted", "isolation_sql", "no_listen", "pool_exhausted", "statement_start"]

#: how adapt_any() names the value in its messages when the caller says nothing closer
UNTYPED = "a value bound without a column type"

ISOLATION_LEVELS = {
    "read uncommitted": "READ UNCOMMITTED",
    "read committed": "READ COMMITTED",
    "repeatable read": "REPEATABLE READ",
    "serializable": "SERIALIZABLE",
}


# What comes before a statement's first word: blanks and comments (not MySQL's /*! ... */,
# which the server runs).
_LEADING = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|#[^\n]*(?:\n|$)|/\*(?!!)(?:.|\n)*?\*/)*")
# The statements that end or begin a transaction, or set a savepoint in it, on any database.
_CONTROL = re.compile(r"(BEGIN|START|COMMIT|END|ROLLBACK|ABORT|SAVEPOINT|RELEASE)\b",
                      re.IGNORECASE)
# The statements that set what a connection keeps for whoever uses it next: a setting, a
# variable or a role (SET, RESET), but not those that end with their transaction or statement
# (SET LOCAL, SET TRANSACTION, SET CONSTRAINTS, MariaDB's SET STATEMENT ... FOR).
_SESSION_STATE = re.compile(
    r"(?:SET|RESET)\b(?!\s+(?:LOCAL|TRANSACTION|CONSTRAINTS?|STATEMENT)\b)", re.IGNORECASE)
# The statements that leave something on the connection past their transaction, which the
# next user of the pooled connection would meet: a temporary table (it hides the table of its
# name: that user read the temporary one's rows and wrote into it), a prepared statement's
# name, a LISTEN, a cursor WITH HOLD, another current database (MySQL's USE: that user's
# statements ran against it), MySQL's LOCK TABLES, SQLite's ATTACH.
_CONNECTION_STATE = re.compile(
    r"(?:CREATE\s+(?:(?:GLOBAL|LOCAL)\s+)?TEMP(?:ORARY)?\b|PREPARE\b|LISTEN\b|USE\b"
    r"|LOCK\s+TABLES?\b|ATTACH\b|DECLARE\b(?=.*\bWITH\s+HOLD\b))",
    re.IGNORECASE | re.DOTALL)
# What a statement sets for the connection wherever it calls it: a lock the connection holds
# until it is released or the connection ends (PostgreSQL's session advisory locks, MySQL's
# GET_LOCK), a setting made by a function (PostgreSQL's set_config(), SET's twin) or a MySQL
# variable assigned in a SELECT (@v := 1, SELECT ... INTO @v): pooled, the next user would
# inherit it.
_SESSION_LOCK = re.compile(
    r"\b(?:pg_(?:try_)?advisory_lock(?:_shared)?|get_lock|set_config)\s*\(|@\w+\s*:="
    r"|\bINTO\s+@", re.IGNORECASE)


def statement_start(sql: str) -> int:
    """Where the first word of `sql` is, after leading blanks and comments."""
    found = _LEADING.match(sql)
    return found.end() if found else 0


def isolation_sql(level: str) -> str:
    """The SQL spelling of an isolation level name, or ConfigurationError."""
    key = level.lower().replace("_", " ").replace("-", " ")
    found = ISOLATION_LEVELS.get(key)
    if found is None:
        raise ConfigurationError(
            f"unknown isolation level {level!r}; use one of {', '.join(ISOLATION_LEVELS)}"
        )
    return found


def _packed(element: Adapter | None) -> Adapter:
    """The adapter of an array parameter: a list of the values, each through `element`."""
    if element is None:
        return list
    return lambda values: [element(v) if v is not None else None for v in values]


class DriverRules:
    """What one database library decides without a connection: values, errors, capabilities."""

    dialect: Dialect
    #: adapters from a Python value to the driver's, by column kind
    bind: ClassVar[Adapters] = {}
    #: adapters from the driver's value to the annotated Python type, by column kind
    result: ClassVar[Adapters] = {}

    def adapt_any(self, value: Any, where: str = UNTYPED) -> Any:
        """A value bound where no column type is known (sql.expr arguments, sql.now(plus=),
        execute_sql parameters), as this driver stores it; ValidationError for a value that
        not every driver would store as it is (never bound as its str())."""
        return self.adapt_untyped(untyped_value(value, where, json=True))

    def adapt_untyped(self, value: Any) -> Any:
        """A value untyped_value() took, as this driver binds it."""
        return value

    def adapt_param(self, value: Any, where: str) -> Any:
        """An execute_sql() parameter as this driver binds it: a value as adapt_any() takes
        it, a dict as JSON, and a list or tuple of such values as the driver's own sequence
        parameter (PostgreSQL's array, MySQL's parenthesized list for IN %s)."""
        if isinstance(value, list | tuple):
            items = [self.adapt_untyped(untyped_value(v, f"{where}, item {i + 1}"))
                     for i, v in enumerate(value)]
            return self.sequence_param(items, where)
        return self.adapt_any(value, where)

    def sequence_param(self, items: list[Any], where: str) -> Any:
        """A list of bound values as one parameter, where the database takes one."""
        raise ValidationError(
            f"{where} is a list, and {self.dialect.display_name} binds no list as one "
            "parameter: write one placeholder per item"
        )

    def bind_adapter(self, kind: str | None) -> Adapter | None:
        """The adapter for a parameter of a column kind; None when the value passes as is."""
        if kind is None:
            return self.adapt_any
        if kind.endswith(PACKED):  # an array of values of the kind before the suffix
            return _packed(self.bind_adapter(kind[:-len(PACKED)] or None))
        return self.bind.get(kind)

    def batches_rows(self, n_rows: int, returning: bool) -> bool:
        """True when run_many() of a one-row insert beats one multi-row VALUES statement."""
        return False

    def copies_rows(self, n_rows: int) -> bool:
        """True when the driver's copy_rows() writes a batch of `n_rows` plain rows faster
        than run_many() (the dialect has said it has a bulk copy)."""
        return False

    def copies_binary(self, n_rows: int) -> bool:
        """True when a bulk copy of `n_rows` rows is worth reading its columns' stored types
        first, to be sent in binary where they allow it."""
        return False

    #: True when run_together() sends its statements before reading the first answer, as
    #: one transaction (psycopg's pipeline); else they run in turn in a transaction
    pipelines: ClassVar[bool] = False

    #: True when a cursor left open on the server lives only inside a transaction
    #: (PostgreSQL's named cursors): stream() outside one opens one for the stream's length
    stream_needs_transaction: ClassVar[bool] = False
    #: True when stream()'s cursor takes a write with returning(...) too; else (PostgreSQL,
    #: whose cursors take only SELECT and VALUES) such a write runs as one statement and
    #: its rows are handed out in chunks
    stream_cursor_takes_writes: ClassVar[bool] = True
    #: True when another statement can run on the connection while a stream's cursor is
    #: open there, inside a transaction (not MySQL's unbuffered reads)
    stream_coexists: ClassVar[bool] = True

    #: True when the database rolls back the whole transaction, savepoints included, on a
    #: TransactionConflict (MySQL and MariaDB on a deadlock), rather than the failed
    #: statement alone (PostgreSQL keeps the savepoint to roll back to)
    conflict_ends_transaction: ClassVar[bool] = False

    #: True when a driver call interrupted under way (KeyboardInterrupt, a cancelled task)
    #: can leave the connection halfway through a reply, which the next statement would read
    #: (PyMySQL, asyncmy): the session's connection is then closed, not pooled. psycopg
    #: cancels the statement and stays in step; sqlite3's calls return whole.
    interrupt_breaks_connection: ClassVar[bool] = True

    #: True when on_conflict_do_nothing() also skips rows for errors other than a conflict
    #: (MySQL's INSERT IGNORE), which the driver then raises after the statement: a
    #: statement of several rows runs in a transaction, so that none of them stays
    ignore_skips_errors: ClassVar[bool] = False

    def check_in_transaction(self, sql: str) -> None:
        """Refuse execute_sql() text that would end the caller's transaction, or take its
        control from transaction() (DialectError, naming the way out)."""
        found = _CONTROL.match(sql, statement_start(sql))
        if found is None:
            return
        keyword = found.group(1).upper()
        raise DialectError(
            f"execute_sql('{keyword} ...') inside transaction(): the transaction is "
            f"transaction()'s, and {keyword} would end it or change it behind its back (its "
            "rollback would then undo nothing); leave the block to commit, raise out of it to "
            "roll back, and open a nested transaction() for a savepoint"
        )

    def changes_session(self, sql: str) -> bool:
        """Whether execute_sql() text sets state that its connection would keep for the next
        user of the pooled connection (SET lock_timeout, SET @v, SET ROLE, RESET, a temporary
        table, PREPARE, LISTEN, USE, a session lock): the connection is then closed, not
        pooled, when its session ends."""
        start = statement_start(sql)
        return (_SESSION_STATE.match(sql, start) is not None
                or _CONNECTION_STATE.match(sql, start) is not None
                or _SESSION_LOCK.search(sql, start) is not None)

    def translate(self, exc: BaseException, sql: str, params: Sequence[Any]) -> QueryExecutionError:
        """The tempest_typed error for a driver exception."""
        return QueryExecutionError(str(exc).strip() or type(exc).__name__, sql, params)

    def is_disconnect(self, exc: BaseException) -> bool:
        """True when the connection is unusable after this exception."""
        return False

    def ddl_already_done(self, exc: BaseException) -> bool:
        """True when a CREATE failed only because what it creates already exists."""
        return False

    def driver_errors(self) -> tuple[type[BaseException], ...]:
        """The exception classes this driver raises for database errors."""
        raise NotImplementedError


#: what the message of a statement on a table the database does not have adds
MISSING_TABLE_HINT = (
    "hint: the database has no such table; engine.create_all(Model) creates it (or the URL "
    "names another database or schema than the one that has it)"
)
#: what the message of a statement naming a column its table does not have adds
MISSING_COLUMN_HINT = (
    "hint: the table in the database has no such column; engine.check_schema(Model) lists "
    "how it differs from its model (create_all() does not alter an existing table)"
)


def hinted(message: str, hint: str | None) -> str:
    """The driver's message, with the hint on a line of its own when there is one."""
    return message if hint is None else f"{message}\n  {hint}"


#: what a pool that had no connection free in time asks for
POOL_FIX = "raise pool_size, or release sessions sooner"

#: ... when it is an in-memory SQLite database's one connection, which no pool_size widens
MEMORY_POOL_FIX = (
    "an in-memory database is one connection that every session shares, so a session (or "
    "transaction) waits for the one holding it to end, in the same thread too; end that one "
    "first, or use a file (sqlite:///path.db) for connections of their own"
)


def pool_exhausted(what: str, timeout: float, size: int,
                   fix: str = POOL_FIX) -> ConfigurationError:
    """The error of a pool that had no connection free in time."""
    return ConfigurationError(f"{what}: no connection free after {timeout:g}s ({size} in use); {fix}")


class Listener:
    """A connection of its own that LISTENs on a channel (PostgreSQL): wait() for a NOTIFY."""

    async def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for a notification; True when one (or more) came."""
        raise NotImplementedError

    async def close(self) -> None:
        """Stop listening and close the connection."""
        raise NotImplementedError


def no_listen(rules: DriverRules) -> DialectError:
    """The error of listen() on a database without LISTEN/NOTIFY."""
    return DialectError(f"{rules.dialect.name} has no LISTEN/NOTIFY: poll instead")
