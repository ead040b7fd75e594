"""Error codes and the wording of every message the plugin reports.

Each message names the model and the column, the way the run-time ValidationError does, so
a mistake reads the same whether mypy or the builder finds it. Part of the foundation: imports
no check.
"""

from __future__ import annotations

import difflib
import keyword
from collections.abc import Iterable

from mypy.errorcodes import ErrorCode
from mypy.nodes import Expression, StrExpr
from mypy.options import Options
from mypy.types import Instance, Type, get_proper_type

from .metadata import Column, ModelFacts

__all__ = [
    "AGGREGATE", "COLUMN", "COMPARE", "INSERT", "OPERATOR", "PLAIN_NAME", "RAW", "VALUE",
    "column_name", "describe", "index_label", "listed", "near", "plain_name_problem",
    "unknown_column",
]

COLUMN = ErrorCode("tempest-column", "A column name the model does not have", "tempest")
VALUE = ErrorCode("tempest-value", "A value that the column cannot hold", "tempest")
OPERATOR = ErrorCode("tempest-operator", "An unknown operator, or one the column's type "
                     "does not support", "tempest")
INSERT = ErrorCode("tempest-insert", "An insert that leaves out a required column", "tempest")
COMPARE = ErrorCode("tempest-compare", "Columns of different types compared (an on pair, "
                    "sql.col(), sql.scalar())", "tempest")
AGGREGATE = ErrorCode("tempest-aggregate", "An aggregate of a column it does not apply to",
                      "tempest")
RAW = ErrorCode("tempest-raw", "sql.raw() given something other than a literal string",
                "tempest")


#: how a message asks for a plain name (a label, an alias), as tempest_typed.row words it
PLAIN_NAME = "a Python identifier, not a keyword, without a leading '_'"


def plain_name_problem(name: str) -> str | None:
    """What keeps `name` from being a label or an alias (a row field), as at run time."""
    if not name.isidentifier():
        return "is not a Python identifier"
    if keyword.iskeyword(name):
        return f"is a Python keyword (row.{name} cannot be written)"
    if name.startswith("_"):
        return "starts with '_', as the row's own attributes do"
    return None


def near(word: str, choices: Iterable[str]) -> str | None:
    """The choice that `word` was probably meant to be, if one is close enough."""
    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return found[0] if found else None


def unknown_column(facts: ModelFacts, name: str, where: str) -> str:
    """`Outbound has no column "sttaus" in where(); did you mean "status"?`"""
    by_sql = [c.attr for c in facts.columns.values() if c.sql_name == name]
    hint = ""
    if by_sql:
        hint = f'; "{name}" is the SQL name, write the attribute "{by_sql[0]}"'
    else:
        guess = near(name, facts.columns)
        if guess is not None:
            hint = f'; did you mean "{guess}"?'
    return f'{facts.name} has no column "{name}" in {where}{hint}'


def describe(typ: Type, options: Options) -> str:
    """A type as mypy would quote it, showing the literal a plain `str` value came from."""
    from mypy.messages import format_type

    proper = get_proper_type(typ)
    if isinstance(proper, Instance) and proper.last_known_value is not None:
        return format_type(proper.last_known_value, options)
    return format_type(typ, options)


def column_name(col: Column) -> str:
    """`Outbound.status`."""
    return f"{col.model}.{col.attr}"


def listed(names: Iterable[str]) -> str:
    """`"a", "b"`: names quoted, as a message lists them."""
    return ", ".join(f'"{n}"' for n in names)


def index_label(name: list[Expression]) -> str:
    """How messages name an Index given the expressions of its `name` argument:
    `Index "ix_status"`, or `Index` when the name is not a literal."""
    return f'Index "{name[0].value}"' if name and isinstance(name[0], StrExpr) else "Index"
