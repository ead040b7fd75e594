"""Words that the run-time checks and the mypy plugin both report.

A leaf module (it imports nothing): the plugin reads it at mypy time without loading the
runtime.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ASYNC_HANDLER", "CTE_HIDES_TABLE", "DISTINCT_NOT_OVER_JSON", "DISTINCT_ROW_STANDS_FOR",
    "EMPTY_WHERE", "FRACTION_FOR_AN_INT", "GENERATOR_HANDLER", "JSON_NOT_COMPARED",
    "LOCK_NOT_IN_SELECT", "LOCK_OF_ONE_TABLE", "NAMED_TWICE", "NOT_A_DATE", "NOT_A_GROUP_COLUMN", "NO_ROWS", "NOT_A_NUMBER", "NOT_ORDERED_BY_JSON", "NOW_IS_A_TIMESTAMP",
    "NO_COLUMNS_IN_VALUES", "STEP_AGGREGATES", "STEP_COLUMNS", "STEP_COLUMN_NAMES",
    "STEP_LEFT_JOINS", "STEP_ORDERS", "STEP_READS_ITSELF", "STEP_READS_TWICE",
    "WINDOW_NOT_BY_JSON",
]

#: Why a list of columns (a select's, returning()'s, a conflict target) refuses a name given
#: twice (after "<Model>: <call> names the column '<name>' twice"): a row has one field of a
#: name.
NAMED_TWICE: Final = "name it once"
#: Why a value that type checkers read as the column's type is refused: bool is a subclass of
#: int, and datetime of date, but a bool stored as a number or a datetime cut to a date would
#: not read back as what was written.
NOT_A_NUMBER: Final = "a bool is not a number here (write 1 or 0)"
NOT_A_DATE: Final = "a datetime is not a date (pass its .date())"
#: Why sql.now() is refused as the value of a column that is not a datetime: it is the
#: current timestamp, not a date, a number or text.
NOW_IS_A_TIMESTAMP: Final = "sql.now() is a timestamp, a value of datetime columns only"
#: Why a select of one table refuses a name (an alias) in for_update(of=...)/for_share(of=...)
#: (after "<Model>: for_update(of=[...])"), and what to write instead (then the model).
LOCK_OF_ONE_TABLE: Final = (
    "names an alias, which only a join has; a select of one table takes its model: of=["
)
#: Why for_update(of=[M])/for_share(of=[M]) of a select of another model is refused (after
#: "<Model>: for_update(of=[M])", then "(FROM <table>)").
LOCK_NOT_IN_SELECT: Final = "names a table that is not in this select"
#: Why insert(M).values([]) is refused (after "insert(M).values([])"), and what to do instead.
NO_ROWS: Final = "has no row to insert: give one row or more, or skip the insert when there are none"
#: Why an empty where dict is refused (after "an empty where dict in <place>").
EMPTY_WHERE: Final = (
    "matches every row; say what to match, or call unguarded() on an update/delete meant for "
    "every row"
)
#: Why an expression in insert().values() reads no column, and what to write instead.
NO_COLUMNS_IN_VALUES: Final = (
    "a row being inserted has no columns to read yet; pass values (sql.value(x) inside a "
    "function), or insert(...).from_select(...) to insert what a select computes"
)
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
#: What a recursive named select's step must be (sql.recursive_cte), and why.
STEP_COLUMNS: Final = "give them the same columns (a join's project({...}))"
STEP_COLUMN_NAMES: Final = "name the step's columns as the base's (a join's project({...}))"
STEP_ORDERS: Final = (
    "the step takes no order_by(), limit() or offset(): PostgreSQL and MariaDB refuse them "
    "there, SQLite applies them to every row found; order and limit the select of the named "
    "select instead"
)
STEP_AGGREGATES: Final = (
    "the step cannot aggregate() (no database computes an aggregate in the recursive part); "
    "aggregate the select of the named select instead"
)
STEP_LEFT_JOINS: Final = (
    "the step left-joins the table being defined, which no database allows; inner_join() it, "
    "or start the join from it"
)
STEP_READS_ITSELF: Final = (
    "the step does not read the table being defined, so it would find the same rows again on "
    "every round, without end: join the table step() is given, e.g. join(M, 'm')"
    ".inner_join(table, 't', {'m.parent_id': 't.id'})"
)
STEP_READS_TWICE: Final = (
    "the step reads the table being defined {times} times; no database allows more than "
    "once: join it once"
)
#: Why a blocking worker refuses an async handler: calling it only makes a coroutine, and the
#: message would be acked without its work done.
ASYNC_HANDLER: Final = ("an async handler is awaited by AsyncQueue (of an async engine); "
                        "Queue calls its handler on a thread and would ack the message with "
                        "the coroutine never awaited, its work not done")
#: Why no worker takes a generator function as its handler: calling one runs none of its body.
GENERATOR_HANDLER: Final = ("calling a generator function (its body holds `yield`) runs none "
                            "of its body, and the message would be acked with its work not "
                            "done; return (or raise) instead of yielding")
