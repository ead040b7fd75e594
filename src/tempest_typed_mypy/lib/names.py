"""The names the checks recognise in user code: the full names of tempest_typed's classes and
functions, and the where language's operators. Part of the foundation: imports no check.

The plugin loads no runtime module, so the names are written out here, once;
tests/typecheck/test_operators.py compares the operators with the runtime's.
"""

from __future__ import annotations

__all__ = [
    "AGGREGATE_FUNCTION", "COL", "COLUMN_FUNCTION", "COMBINATORS", "EXCLUDED", "EXISTS",
    "EXPRESSION", "FIELD", "GROUPED", "JOIN", "MODEL", "NAMED_SELECT_CLASS", "NOW", "OPERATORS", "QUERY", "RESULT", "ROUND", "ROW",
    "SCALAR", "SELECT", "SET_QUERY", "SUBQUERY", "TEXT_OPERATORS",
]

MODEL = "tempest_typed.model.Model"
#: `column(...)` in a model's class body
COLUMN_FUNCTION = "tempest_typed.model.column"
FIELD = "dataclasses.field"
ROW = "tempest_typed.row.Row"
RESULT = "tempest_typed.engine.result.Result"
#: a select, a join or a grouped select
QUERY = "tempest_typed.statements.query.Query"
JOIN = "tempest_typed.statements.join.Join"
SELECT = "tempest_typed.statements.select.Select"
#: what sql.cte() returns
NAMED_SELECT_CLASS = "tempest_typed.statements.cte.NamedSelect"
#: selects combined by union() and the other set operations
SET_QUERY = "tempest_typed.statements.compound.SetQuery"
GROUPED = "tempest_typed.statements.aggregate.Grouped"
SUBQUERY = "tempest_typed.statements.where.Subquery"
AGGREGATE_FUNCTION = "tempest_typed.statements.aggregate.AggregateFunction"
EXPRESSION = "tempest_typed.expressions.Expression"
#: what sql.now() returns
NOW = "tempest_typed.expressions.Now"
COL = "tempest_typed.sql.col"
SCALAR = "tempest_typed.sql.scalar"
EXCLUDED = "tempest_typed.sql.excluded"
ROUND = "tempest_typed.sql.round"
EXISTS = frozenset({"tempest_typed.sql.exists", "tempest_typed.sql.not_exists"})

COMBINATORS = frozenset({
    "tempest_typed.statements.where.and_",
    "tempest_typed.statements.where.or_",
    "tempest_typed.statements.where.not_",
})
#: the runtime's list, in its order
OPERATORS = ("eq", "ne", "lt", "lte", "gt", "gte", "between", "in", "not_in", "is_null",
             "like", "ilike", "contains", "icontains", "startswith", "endswith")
#: the operators that apply to strings only: a pattern (like, ilike), or the literal text to
#: look for (the rest), whose `%` and `_` match themselves
TEXT_OPERATORS = frozenset({"like", "ilike", "contains", "icontains", "startswith", "endswith"})
