"""The statement tree: plain tagged tuples that hold structure, never values.

A statement is `(key, values)`: `key` is a tree of the tuples below, `values` the bound values
in the order the builder met them. Because the key holds no value, it is also the cache key of
the compiled SQL: two statements of the same shape share one compilation.

Value nodes
    ("param", i, kind)            values[i] (of the enclosing statement); kind: column kind or None
    ("raw", text)                 verbatim SQL from sql.raw
    ("expr", parts, nodes)        sql.expr: parts[0] nodes[0] parts[1] ... parts[-1]
    ("now", plus | None)          sql.now(plus=...): plus is a value node
    ("excluded", column)          sql.excluded: the row an upsert tried to insert
Condition nodes
    ("cmp", column, op, value)    op is one of = <> < <= > >=
    ("isnull", column, negated)
    ("between", column, low, high)
    ("in", column, values, negated)
    ("inparams", column, start, count, negated)    `in` over values[start:start + count]
    ("insub", column, select_key, offset, negated)   offset: where the subquery's values start
    ("like", column, value, ilike)
    ("and", conditions) ("or", conditions) ("not", condition) ("true",) ("false",)
Statement keys
    ("select", meta, columns | None, where | None, order, limit, offset, lock)
    ("insert", meta, columns, rows, conflict | None, returning)
    ("update", meta, assignments, where | None, returning)
    ("delete", meta, where | None, returning)
where `columns` are ColumnMeta tuples, `order` is ((column, descending), ...), `lock` is
(mode, skip_locked, no_wait, of_tables), `rows` is ("params", n_rows, start) when every cell
is a bound value laid out row by row from values[start], or a tuple of value-node rows, `returning` is None, "*" or
a ColumnMeta tuple, and `conflict` is ("nothing", target, where) or
("update", target, assignments, index_where, update_where).
"""

from __future__ import annotations

from typing import TypeAlias

Node: TypeAlias = tuple[object, ...]

ORDERED_KINDS = frozenset({"int", "float", "decimal", "datetime", "date"})
TEXT_KINDS = frozenset({"str", "literal"})

#: operator name in the where language -> SQL comparison operator
COMPARISONS = {"eq": "=", "ne": "<>", "lt": "<", "lte": "<=", "gt": ">", "gte": ">="}
OPERATORS = ("eq", "ne", "lt", "lte", "gt", "gte", "between", "in", "not_in", "is_null",
             "like", "ilike")

TRUE: Node = ("true",)
FALSE: Node = ("false",)
