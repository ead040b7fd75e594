"""Words that the run-time checks and the mypy plugin both report.

A leaf module (it imports nothing): the plugin reads it at mypy time without loading the
runtime.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CTE_HIDES_TABLE", "DISTINCT_NOT_OVER_JSON", "DISTINCT_ROW_STANDS_FOR", "FRACTION_FOR_AN_INT",
    "JSON_NOT_COMPARED", "NOT_A_DATE", "NOT_A_GROUP_COLUMN", "NOT_A_NUMBER", "NOT_ORDERED_BY_JSON",
    "NOW_IS_A_TIMESTAMP", "WINDOW_NOT_BY_JSON",
]

#: Why a value that type checkers read as the column's type is refused: bool is a subclass of
#: int, and datetime of date, but a bool stored as a number or a datetime cut to a date would
#: not read back as what was written.
NOT_A_NUMBER: Final = "a bool is not a number here (write 1 or 0)"
NOT_A_DATE: Final = "a datetime is not a date (pass its .date())"
#: Why sql.now() is refused as the value of a column that is not a datetime: it is the
#: current timestamp, not a date, a number or text.
NOW_IS_A_TIMESTAMP: Final = "sql.now() is a timestamp, a value of datetime columns only"
#: Why an int column is never set to a float or Decimal expression, and what to do instead.
FRACTION_FOR_AN_INT: Final = (
    "PostgreSQL and MySQL would round it, SQLite store the fraction; say how to make a whole "
    "number of it (sql.round(...)), or make the column a float or a Decimal"
)
#: Why a JSON column is refused where values are compared (order_by(), a window's
#: partition_by/order_by, distinct()): each database compares JSON its own way (jsonb by
#: value and size first, the others as text), so the rows or their order would differ.
JSON_NOT_COMPARED: Final = "is a JSON column, which is not compared"
NOT_ORDERED_BY_JSON: Final = "order by another column"
WINDOW_NOT_BY_JSON: Final = "a window partitions and orders by other columns"
DISTINCT_NOT_OVER_JSON: Final = (
    "so rows with it cannot be told apart the same way on every database; select the columns "
    "without it, or drop distinct()"
)
#: Why a distinct select is not ordered by a value it does not fetch.
DISTINCT_ROW_STANDS_FOR: Final = (
    "a distinct row may stand for rows with different values of it (PostgreSQL refuses this)"
)
#: Why having() reads no column that is not grouped through sql.col("table.column").
NOT_A_GROUP_COLUMN: Final = (
    "which is not a group column: a group has no one value of it (PostgreSQL refuses this); "
    "compare a label or a group column"
)
#: Why a named select is not named as a model's table.
CTE_HIDES_TABLE: Final = (
    "the named select would hide that table in every statement that reads it (and from its "
    "own select): give it a name no table has"
)
