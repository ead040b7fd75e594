"""Words that the run-time checks and the mypy plugin both report.

A leaf module (it imports nothing): the plugin reads it at mypy time without loading the
runtime.
"""

from __future__ import annotations

from typing import Final

__all__ = ["FRACTION_FOR_AN_INT", "NOT_A_DATE", "NOT_A_NUMBER", "NOW_IS_A_TIMESTAMP"]

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
