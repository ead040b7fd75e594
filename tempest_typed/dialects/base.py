"""The one place SQL text is produced: a visitor over the statement tree.

It turns a statement's key (pure structure, see statements/nodes.py) into SQL text and the
order in which the statement's values fill the placeholders. Values are never written into
the text: every value is a placeholder. Identifiers are always quoted. This layer does not
touch a database. A dialect subclass overrides only what its database does differently.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar, Final

from ..errors import DialectError, ValidationError
from ..model import ColumnMeta, ModelMeta
from ..statements.nodes import Node

if TYPE_CHECKING:
    from ..statements.base import Statement

__all__ = ["Compiled", "CompiledShape", "Dialect"]


class CompiledShape:
    """The compilation of one statement shape: SQL text, and how values fill it."""

    __slots__ = ("in_order", "kind", "kinds", "order", "result", "sql")

    def __init__(self, sql: str, order: tuple[int, ...], kinds: tuple[str | None, ...],
                 kind: str, result: ModelMeta | tuple[ColumnMeta, ...] | None) -> None:
        self.sql = sql
        #: for each placeholder, in textual order, the index of its value in the statement
        self.order = order
        #: every value is used once, in the order the builder bound them: params are values
        self.in_order = order == tuple(range(len(order)))
        #: for each placeholder, the kind of the column it is compared to or written in
        self.kinds = kinds
        #: "select", "insert", "update", "delete"
        self.kind = kind
        #: what a row is: a whole model (ModelMeta), some columns, or no rows (None)
        self.result = result


class Compiled:
    """A compiled statement: `sql` and its `params` in placeholder order."""

    __slots__ = ("params", "shape", "sql")

    def __init__(self, sql: str, params: tuple[object, ...], shape: CompiledShape) -> None:
        self.sql = sql
        self.params = params
        self.shape = shape

    def __iter__(self):  # type: ignore[no-untyped-def]
        """Unpack as `sql, params = stmt.compile(...)`."""
        yield self.sql
        yield self.params

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Compiled):
            return (self.sql, self.params) == (other.sql, other.params)
        if isinstance(other, tuple):
            return (self.sql, self.params) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.sql, self.params))

    def __repr__(self) -> str:
        return f"Compiled(sql={self.sql!r}, params={self.params!r})"


class _Out:
    """The text and placeholder order being produced by one compilation."""

    __slots__ = ("kinds", "literals", "offset", "order", "parts", "qualifier")

    def __init__(self, literals: list[object] | None = None) -> None:
        self.parts: list[str] = []
        self.order: list[int] = []
        self.kinds: list[str | None] = []
        self.offset = 0
        #: the quoted table that column references are prefixed with, when bare ones would
        #: be ambiguous (an upsert's DO UPDATE ... WHERE also sees EXCLUDED's columns)
        self.qualifier: str | None = None
        #: DDL only: the values to write inline, since CREATE INDEX ... WHERE takes no parameter
        self.literals = literals


# Measured with `python bench/bench_build.py` (CPython 3.11, PostgreSQL dialect, medians):
# building the seed's single-statement claim costs 10 us; compiling it costs 8.4 us with this
# cache cleared and 2.0 us with it warm (the key lookup plus binding the parameters), so
# build + compile drops from 19.5 us to 12.5 us, and a statement built again in a loop pays
# mostly for building. Shapes are few in real code; the bound keeps a program that generates
# unbounded shapes (multi-row inserts of every size) from growing without end.
_SHAPE_CACHE_SIZE: Final = 4096


class Dialect:
    """The shared compiler; subclasses override what their database spells differently."""

    name: ClassVar[str] = "base"
    #: "format" (%s) or "qmark" (?)
    paramstyle: ClassVar[str] = "format"
    #: the most bound parameters one statement may carry
    max_params: ClassVar[int] = 65535
    supports_returning: ClassVar[frozenset[str]] = frozenset({"insert", "update", "delete"})

    def __init__(self) -> None:
        self._shapes: dict[Node, CompiledShape] = {}
        self._quoted: dict[str, str] = {}
        self.placeholder = "%s" if self.paramstyle == "format" else "?"

    def __repr__(self) -> str:
        return f"<dialect {self.name}>"

    # -- entry points -----------------------------------------------------------------------

    def shape(self, stmt: Statement[object]) -> CompiledShape:
        """The compiled shape of a statement, from the cache when it was seen before."""
        return self.shape_of_key(stmt._key())

    def shape_of_key(self, key: Node) -> CompiledShape:
        """The compiled shape of a statement key, compiled on first sight."""
        shape = self._shapes.get(key)
        if shape is None:
            shape = self._compile_key(key)
            if len(self._shapes) >= _SHAPE_CACHE_SIZE:
                self._shapes.clear()
            self._shapes[key] = shape
        return shape

    def compile(self, stmt: Statement[object]) -> Compiled:
        """SQL text and parameters in placeholder order."""
        shape = self.shape(stmt)
        values = stmt._values
        if shape.in_order and len(values) == len(shape.order):
            return Compiled(shape.sql, values, shape)
        return Compiled(shape.sql, tuple([values[i] for i in shape.order]), shape)

    def _compile_key(self, key: Node) -> CompiledShape:
        out = _Out()
        kind = key[0]
        result: ModelMeta | tuple[ColumnMeta, ...] | None
        if kind == "select":
            self.visit_select(key, out)
            result = key[2] if key[2] is not None else key[1]  # type: ignore[assignment]
        else:
            getattr(self, f"visit_{kind}")(key, out)
            returning = key[-1]
            result = None if returning is None else (key[1] if returning == "*" else returning)  # type: ignore[assignment]
        return CompiledShape("".join(out.parts), tuple(out.order), tuple(out.kinds), str(kind),
                             result)

    # -- identifiers and values -------------------------------------------------------------

    def quote(self, name: str) -> str:
        """The identifier quoted for statement text (quotes inside it doubled, `%` escaped)."""
        quoted = self._quoted.get(name)
        if quoted is None:
            # The driver formats statement text: a `%` in a name would read as a placeholder.
            quoted = self.escape_text(self.quote_identifier(name))
            self._quoted[name] = quoted
        return quoted

    def quote_identifier(self, name: str) -> str:
        """The identifier quoted verbatim, for DDL (which runs without parameters)."""
        return '"' + name.replace('"', '""') + '"'

    def escape_text(self, text: str) -> str:
        """Verbatim SQL made safe for the paramstyle (a literal % doubled for format)."""
        return text.replace("%", "%%") if self.paramstyle == "format" else text

    def visit_value(self, node: Node, out: _Out) -> None:
        """Write a value node: a placeholder, raw text, an expression, now() or EXCLUDED."""
        tag = node[0]
        if tag == "param":
            if out.literals is not None:
                out.parts.append(self.literal(out.literals[node[1]]))  # type: ignore[call-overload]
                return
            out.parts.append(self.placeholder)
            out.order.append(out.offset + node[1])  # type: ignore[operator]
            out.kinds.append(node[2])  # type: ignore[arg-type]
        elif tag == "raw":
            text: str = node[1]  # type: ignore[assignment]
            out.parts.append(text if out.literals is not None else self.escape_text(text))
        elif tag == "expr":
            parts: tuple[str, ...] = node[1]  # type: ignore[assignment]
            nodes: tuple[Node, ...] = node[2]  # type: ignore[assignment]
            for i, part in enumerate(parts):
                out.parts.append(part if out.literals is not None else self.escape_text(part))
                if i < len(nodes):
                    self.visit_value(nodes[i], out)
        elif tag == "now":
            self.visit_now(node[1], out)  # type: ignore[arg-type]
        elif tag == "excluded":
            self.visit_excluded(node[1], out)  # type: ignore[arg-type]
        else:  # pragma: no cover - the builders produce no other node
            raise ValidationError(f"unknown value node {tag!r}")

    def literal(self, value: object) -> str:
        """A value written inline, for DDL only (index predicates, server defaults)."""
        if isinstance(value, bool):
            return "TRUE" if value else "FALSE"
        if isinstance(value, int | float):
            return repr(value)
        if isinstance(value, str):
            return self.string_literal(value)
        raise DialectError(
            f"{value!r} cannot be written into DDL; index predicates and server defaults take "
            "str, int, float or bool values, or sql.raw()/sql.now()"
        )

    def string_literal(self, value: str) -> str:
        """A string written inline, quoted for this dialect (DDL only)."""
        return "'" + value.replace("'", "''") + "'"

    # -- DDL --------------------------------------------------------------------------------

    def column_type(self, col: ColumnMeta) -> str:
        """The SQL type of a column."""
        raise NotImplementedError

    def identity(self, col: ColumnMeta) -> str:
        """The clause that makes an int primary key generated by the database."""
        raise NotImplementedError

    def create_index_prefix(self) -> str:
        """The start of CREATE [UNIQUE] INDEX, with `{unique}` to fill in."""
        return "CREATE {unique}INDEX IF NOT EXISTS"

    table_options = ""

    def visit_now(self, plus: Node | None, out: _Out) -> None:
        """Write sql.now(), plus a number of seconds when given."""
        if plus is None:
            out.parts.append("CURRENT_TIMESTAMP")
            return
        out.parts.append("(CURRENT_TIMESTAMP + CAST(")
        self.visit_value(plus, out)
        out.parts.append(" AS DOUBLE PRECISION) * INTERVAL '1 second')")

    def visit_excluded(self, col: ColumnMeta, out: _Out) -> None:
        """Write sql.excluded(column): the row an upsert tried to insert."""
        out.parts.append("EXCLUDED." + self.quote(col.name))

    def column_ref(self, col: ColumnMeta, out: _Out | None = None) -> str:
        """A column as a condition names it (qualified where a clause needs it)."""
        if out is not None and out.literals is not None:
            return self.quote_identifier(col.name)  # DDL: no paramstyle, so no `%` escape
        if out is not None and out.qualifier is not None:
            return out.qualifier + "." + self.quote(col.name)
        return self.quote(col.name)

    # -- conditions -------------------------------------------------------------------------

    def visit_condition(self, node: Node, out: _Out) -> None:
        """Write a condition node by dispatching on its tag."""
        getattr(self, "visit_cond_" + node[0])(node, out)  # type: ignore[operator]

    def _nested(self, node: Node, out: _Out) -> None:
        if node[0] in ("and", "or"):
            out.parts.append("(")
            self.visit_condition(node, out)
            out.parts.append(")")
        else:
            self.visit_condition(node, out)

    def visit_cond_and(self, node: Node, out: _Out) -> None:
        """Write `a AND b ...`."""
        self._junction(node, " AND ", out)

    def visit_cond_or(self, node: Node, out: _Out) -> None:
        """Write `a OR b ...`."""
        self._junction(node, " OR ", out)

    def _junction(self, node: Node, joiner: str, out: _Out) -> None:
        items: tuple[Node, ...] = node[1]  # type: ignore[assignment]
        for i, item in enumerate(items):
            if i:
                out.parts.append(joiner)
            self._nested(item, out)

    def visit_cond_not(self, node: Node, out: _Out) -> None:
        """Write `NOT (a)`."""
        out.parts.append("NOT (")
        self.visit_condition(node[1], out)  # type: ignore[arg-type]
        out.parts.append(")")

    def visit_cond_true(self, node: Node, out: _Out) -> None:
        """Write a condition that always holds."""
        out.parts.append("1 = 1")

    def visit_cond_false(self, node: Node, out: _Out) -> None:
        """Write a condition that never holds (an empty `in`)."""
        out.parts.append("1 = 0")

    def visit_cond_cmp(self, node: Node, out: _Out) -> None:
        """Write `column op value`."""
        out.parts.append(f"{self.column_ref(node[1], out)} {node[2]} ")  # type: ignore[arg-type]
        self.visit_value(node[3], out)  # type: ignore[arg-type]

    def visit_cond_isnull(self, node: Node, out: _Out) -> None:
        """Write `column IS [NOT] NULL`."""
        suffix = " IS NOT NULL" if node[2] else " IS NULL"
        out.parts.append(self.column_ref(node[1], out) + suffix)  # type: ignore[arg-type]

    def visit_cond_between(self, node: Node, out: _Out) -> None:
        """Write `column BETWEEN low AND high`."""
        out.parts.append(self.column_ref(node[1], out) + " BETWEEN ")  # type: ignore[arg-type]
        self.visit_value(node[2], out)  # type: ignore[arg-type]
        out.parts.append(" AND ")
        self.visit_value(node[3], out)  # type: ignore[arg-type]

    def visit_cond_in(self, node: Node, out: _Out) -> None:
        """Write `column [NOT] IN (values...)`."""
        out.parts.append(self.column_ref(node[1], out) + (" NOT IN (" if node[3] else " IN ("))  # type: ignore[arg-type]
        items: tuple[Node, ...] = node[2]  # type: ignore[assignment]
        for i, item in enumerate(items):
            if i:
                out.parts.append(", ")
            self.visit_value(item, out)
        out.parts.append(")")

    def visit_cond_inparams(self, node: Node, out: _Out) -> None:
        """Write `column [NOT] IN (%s, ...)` for a run of bound values."""
        col: ColumnMeta = node[1]  # type: ignore[assignment]
        start: int = node[2]  # type: ignore[assignment]
        out.parts.append(self.column_ref(col, out) + (" NOT IN (" if node[4] else " IN ("))
        for i in range(node[3]):  # type: ignore[call-overload]
            if i:
                out.parts.append(", ")
            self.visit_value(("param", start + i, col.kind), out)
        out.parts.append(")")

    def visit_cond_insub(self, node: Node, out: _Out) -> None:
        """Write `column [NOT] IN (SELECT ...)`, the subquery's values where it stands."""
        sub: Node = node[2]  # type: ignore[assignment]
        self.check_subquery(sub, out)
        out.parts.append(self.column_ref(node[1], out) + (" NOT IN (" if node[4] else " IN ("))  # type: ignore[arg-type]
        saved, qualifier = out.offset, out.qualifier
        out.offset, out.qualifier = saved + node[3], None  # type: ignore[operator]
        self.visit_select(sub, out)
        out.offset, out.qualifier = saved, qualifier
        out.parts.append(")")

    def check_subquery(self, sub: Node, out: _Out) -> None:
        """Raise DialectError for an `in` subquery this database rejects."""

    def visit_cond_like(self, node: Node, out: _Out) -> None:
        """Write `column LIKE pattern` (or its case-insensitive form)."""
        col: ColumnMeta = node[1]  # type: ignore[assignment]
        if node[3]:
            out.parts.append(f"{self.column_ref(col, out)} ILIKE ")
        else:
            out.parts.append(f"{self.column_ref(col, out)} LIKE ")
        self.visit_value(node[2], out)  # type: ignore[arg-type]

    # -- statements -------------------------------------------------------------------------

    def column_list(self, cols: tuple[ColumnMeta, ...]) -> str:
        """Quoted column names separated by commas."""
        return ", ".join(self.quote(c.name) for c in cols)

    def visit_select(self, key: Node, out: _Out) -> None:
        """Write a SELECT statement."""
        meta: ModelMeta = key[1]  # type: ignore[assignment]
        cols: tuple[ColumnMeta, ...] = key[2] if key[2] is not None else meta.columns  # type: ignore[assignment]
        out.parts.append(f"SELECT {self.column_list(cols)} FROM {self.quote(meta.table)}")
        if key[3] is not None:
            out.parts.append(" WHERE ")
            self.visit_condition(key[3], out)  # type: ignore[arg-type]
        order: tuple[tuple[ColumnMeta, bool], ...] = key[4]  # type: ignore[assignment]
        if order:
            out.parts.append(" ORDER BY " + ", ".join(self.order_item(c, d) for c, d in order))
        self.visit_limit_offset(key[5], key[6], out)  # type: ignore[arg-type]
        if key[7] is not None:
            out.parts.append(" " + self.lock_clause(meta, key[7]))  # type: ignore[arg-type]

    def index_column(self, col: ColumnMeta, *, holds_null: bool) -> str:
        """One column of CREATE INDEX, in the NULL order order_item() sorts it."""
        return self.quote_identifier(col.name)

    def order_item(self, col: ColumnMeta, descending: bool) -> str:
        # NULLs sort first ascending and last descending on every dialect.
        """One ORDER BY item."""
        return self.quote(col.name) + (" DESC" if descending else " ASC")

    def visit_limit_offset(self, limit: Node | None, offset: Node | None, out: _Out) -> None:
        """Write LIMIT and OFFSET."""
        if limit is not None:
            out.parts.append(" LIMIT ")
            self.visit_value(limit, out)
        if offset is not None:
            if limit is None:
                out.parts.append(self.offset_without_limit)
            out.parts.append(" OFFSET ")
            self.visit_value(offset, out)

    offset_without_limit = ""
    #: ON CONFLICT DO UPDATE must name the unique index or key it resolves
    conflict_update_needs_target = True

    def lock_clause(self, meta: ModelMeta, lock: tuple[object, ...]) -> str:
        """The row-lock clause of a select (FOR UPDATE / FOR SHARE ...)."""
        mode, skip_locked, no_wait, of = lock
        text = "FOR UPDATE" if mode == "update" else "FOR SHARE"
        if of:
            text += " OF " + ", ".join(self.quote(t) for t in of)  # type: ignore[attr-defined]
        if skip_locked:
            text += " SKIP LOCKED"
        elif no_wait:
            text += " NOWAIT"
        return text

    def check_returning(self, kind: str, meta: ModelMeta) -> None:
        """Raise DialectError when this database has no RETURNING for `kind`."""
        if kind not in self.supports_returning:
            raise DialectError(self.returning_error(kind, meta))

    def returning_error(self, kind: str, meta: ModelMeta) -> str:
        """The message of the DialectError for a RETURNING this database lacks."""
        return f"{self.name} has no {kind.upper()} ... RETURNING"

    def visit_returning(self, kind: str, meta: ModelMeta, returning: object, out: _Out) -> None:
        """Write RETURNING, when the statement asks for rows."""
        if returning is None:
            return
        self.check_returning(kind, meta)
        cols: tuple[ColumnMeta, ...] = meta.columns if returning == "*" else returning  # type: ignore[assignment]
        out.parts.append(" RETURNING " + self.column_list(cols))

    def visit_insert(self, key: Node, out: _Out) -> None:
        """Write an INSERT statement."""
        meta: ModelMeta = key[1]  # type: ignore[assignment]
        cols: tuple[ColumnMeta, ...] = key[2]  # type: ignore[assignment]
        rows = key[3]
        conflict: Node | None = key[4]  # type: ignore[assignment]
        out.parts.append(
            f"{self.insert_verb(conflict)} {self.quote(meta.table)} ({self.column_list(cols)}) "
            "VALUES "
        )
        if rows[0] == "params":  # type: ignore[index]
            n_rows: int = rows[1]  # type: ignore[index]
            width = len(cols)
            row_text = "(" + ", ".join([self.placeholder] * width) + ")"
            out.parts.append(", ".join([row_text] * n_rows))
            base = out.offset + rows[2]  # type: ignore[index]
            out.order.extend(range(base, base + n_rows * width))
            kinds = [c.kind for c in cols]
            out.kinds.extend(kinds * n_rows)
        else:
            value_rows: tuple[tuple[Node, ...], ...] = rows  # type: ignore[assignment]
            for r, row in enumerate(value_rows):
                out.parts.append(", (" if r else "(")
                for i, cell in enumerate(row):
                    if i:
                        out.parts.append(", ")
                    self.visit_value(cell, out)
                out.parts.append(")")
        if key[4] is not None:
            self.visit_conflict(meta, cols, key[4], out)  # type: ignore[arg-type]
        self.visit_returning("insert", meta, key[5], out)

    def insert_verb(self, conflict: Node | None) -> str:
        """How the INSERT starts (MySQL skips duplicates with INSERT IGNORE)."""
        return "INSERT INTO"

    def visit_conflict(self, meta: ModelMeta, cols: tuple[ColumnMeta, ...], conflict: Node,
                       out: _Out) -> None:
        """Write the upsert clause (ON CONFLICT ...)."""
        action = conflict[0]
        target: tuple[ColumnMeta, ...] | None = conflict[1]  # type: ignore[assignment]
        index_where: Node | None = conflict[2] if action == "nothing" else conflict[3]  # type: ignore[assignment]
        out.parts.append(" ON CONFLICT")
        if target is not None:
            out.parts.append(f" ({self.column_list(target)})")
            if index_where is not None:
                out.parts.append(" WHERE ")
                self.visit_condition(index_where, out)
        elif action == "update" and self.conflict_update_needs_target:
            raise DialectError(
                f"insert({meta.name}).on_conflict_do_update(None, ...): {self.name} needs a "
                "conflict target; pass the columns of the unique index or key that may "
                "conflict, e.g. on_conflict_do_update([\"id\"], {...})"
            )
        if action == "nothing":
            out.parts.append(" DO NOTHING")
            return
        out.parts.append(" DO UPDATE SET ")
        self.visit_assignments(conflict[2], out)  # type: ignore[arg-type]
        if conflict[4] is not None:
            # PostgreSQL: a bare column here is ambiguous between the table and EXCLUDED.
            out.parts.append(" WHERE ")
            out.qualifier = self.quote(meta.table)
            try:
                self.visit_condition(conflict[4], out)  # type: ignore[arg-type]
            finally:
                out.qualifier = None

    def visit_assignments(self, items: tuple[tuple[ColumnMeta, Node], ...], out: _Out) -> None:
        """Write `column = value, ...`."""
        for i, (col, value) in enumerate(items):
            out.parts.append((", " if i else "") + self.quote(col.name) + " = ")
            self.visit_value(value, out)

    def visit_update(self, key: Node, out: _Out) -> None:
        """Write an UPDATE statement."""
        meta: ModelMeta = key[1]  # type: ignore[assignment]
        out.parts.append(f"UPDATE {self.quote(meta.table)} SET ")
        self.visit_assignments(key[2], out)  # type: ignore[arg-type]
        self.visit_where_of(meta, key[3], out)  # type: ignore[arg-type]
        self.visit_returning("update", meta, key[4], out)

    def visit_delete(self, key: Node, out: _Out) -> None:
        """Write a DELETE statement."""
        meta: ModelMeta = key[1]  # type: ignore[assignment]
        out.parts.append(f"DELETE FROM {self.quote(meta.table)}")
        self.visit_where_of(meta, key[2], out)  # type: ignore[arg-type]
        self.visit_returning("delete", meta, key[3], out)

    def visit_where_of(self, meta: ModelMeta, where: Node | None, out: _Out) -> None:
        """The WHERE of an UPDATE or DELETE on `meta`'s table."""
        if where is not None:
            out.parts.append(" WHERE ")
            self.visit_condition(where, out)


def subqueries(node: object) -> list[Node]:
    """Every subquery key inside a condition tree."""
    found: list[Node] = []

    def walk(n: object) -> None:
        if isinstance(n, tuple) and n:
            if n[0] == "insub":
                found.append(n[2])
                walk(n[2][3])
            elif n[0] in ("and", "or"):
                for item in n[1]:
                    walk(item)
            elif n[0] == "not":
                walk(n[1])

    walk(node)
    return found


Checker = Callable[[Node], None]
