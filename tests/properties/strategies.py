"""Hypothesis strategies: models built at run time, their rows, and statements over them.

A generated model has an `id: int` primary key (always given on insert, so every database
holds the same ids) and up to six more columns of any supported kind, nullable or not, whose
SQL names are reserved words or hold quotes, spaces, `%`, `?` and non-ASCII letters. Values
reach the edges each database must agree on: empty strings, NULL, the ends of BIGINT and of
DECIMAL(65, 30), microseconds, non-ASCII text, nested JSON.

Ranges are those every database can store (see README, "Differences between databases"):
no NUL character in text (PostgreSQL rejects it), datetimes and dates within 1000-9999
(MariaDB's DATETIME(6)/DATE), decimals within DECIMAL(65, 30), no NaN or infinity, JSON
numbers as integers (jsonb rewrites floats), and text columns that are unique or indexed
hold at most 255 characters on MySQL (VARCHAR(255)).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import unicodedata
import uuid
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any, Literal

from hypothesis import strategies as st

from tempest_typed import Model, and_, column, not_, or_, select, sql

KINDS = ("str", "int", "float", "bool", "decimal", "bytes", "datetime", "date", "uuid",
         "literal", "json")
ORDERED = frozenset({"int", "float", "decimal", "datetime", "date"})
TEXT = frozenset({"str", "literal"})

_PYTHON_TYPES: dict[str, object] = {
    "str": str, "int": int, "float": float, "bool": bool, "decimal": Decimal, "bytes": bytes,
    "datetime": dt.datetime, "date": dt.date, "uuid": uuid.UUID, "json": dict,
}

# -- names --------------------------------------------------------------------------------------

RESERVED = ("select", "order", "from", "group", "table", "user", "key", "where", "limit",
            "index", "values", "desc", "check", "primary", "default", "all", "and", "not",
            "null", "when", "column", "Order", "SELECT")
TRICKY = ('a"b', "a`b", "a'b", "two words", "a%s", "100%", "a?b", "é", "naïve", "日本語",
          "Straße", "ünïcødé", "x;drop", "a.b", "[x]", "$1", "-", "a\\b", "ÅÄÖ")

_NAME_CHARS = st.characters(
    min_codepoint=32, max_codepoint=0xFFFF,  # MariaDB identifiers are in the BMP
    blacklist_categories=("Cs", "Cc", "Cn", "Co"),
)
_NAME_TEXT = st.text(_NAME_CHARS, min_size=1, max_size=12).filter(
    lambda s: s == s.strip() and len(s.encode()) <= 40
)


def name_key(name: str) -> str:
    """How MariaDB compares column names: case and accent insensitive."""
    decomposed = unicodedata.normalize("NFKD", name.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


sql_names = st.one_of(st.sampled_from(RESERVED), st.sampled_from(TRICKY), _NAME_TEXT)

# -- values -------------------------------------------------------------------------------------

INT_EDGES = (0, 1, -1, 2**31 - 1, -(2**31), 2**53 + 1, 2**63 - 1, -(2**63))
DECIMAL_EDGES = tuple(Decimal(s) for s in (
    "0", "-0", "1", "-1", "0.5", "1E-30", "-1E-30", "1E+34", "123.450", "1E+5",
    "99999999999999999999999999999999999.999999999999999999999999999999",
    "-99999999999999999999999999999999999.999999999999999999999999999999",
))
STR_EDGES = ("", " ", "a ", " a", "'", '"', "\\", "%", "_", "a%b", "a_b", "é", "É", "日本",
             "🙂", "NULL", "ß", "İ", "\n", "a\tb")
_TEXT_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
_ZONES = (dt.UTC, dt.timezone(dt.timedelta(hours=5, minutes=30)),
          dt.timezone(dt.timedelta(hours=-8)))


def _decimal_from(digits: int, places: int) -> Decimal:
    # From text, exactly: scaleb() would round to the context's 28 digits (up to 1E+35).
    return Decimal(f"{digits}E-{places}")


decimals = st.one_of(
    st.sampled_from(DECIMAL_EDGES),
    st.builds(_decimal_from, st.integers(-(10**12), 10**12), st.integers(0, 6)),
    st.integers(0, 30).flatmap(lambda places: st.builds(
        _decimal_from, st.integers(-(10 ** (35 + places) - 1), 10 ** (35 + places) - 1),
        st.just(places))),
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63) | st.text(_TEXT_CHARS, max_size=8),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(_TEXT_CHARS, max_size=6), inner, max_size=3),
    max_leaves=8,
)


@dataclasses.dataclass(frozen=True)
class ColumnSpec:
    """One generated column: its Python attribute, SQL name and kind."""

    attr: str
    name: str
    kind: str
    nullable: bool
    unique: bool = False
    literal_values: tuple[str, ...] = ()


@dataclasses.dataclass
class ModelSpec:
    """A generated model class and what was generated to build it."""

    model: type[Model]
    table: str
    columns: tuple[ColumnSpec, ...]

    def column(self, attr: str) -> ColumnSpec:
        """The generated column of an attribute."""
        return next(c for c in self.columns if c.attr == attr)


def scalar_values(col: ColumnSpec) -> st.SearchStrategy[Any]:
    """Non-NULL values a column can hold on every database."""
    kind = col.kind
    base: st.SearchStrategy[Any]
    if kind == "str":
        base = st.sampled_from(STR_EDGES) | st.text(_TEXT_CHARS, max_size=12)
    elif kind == "int":
        base = st.sampled_from(INT_EDGES) | st.integers(-(2**63), 2**63 - 1) | st.integers(-5, 5)
    elif kind == "float":
        base = st.sampled_from((0.0, -0.0, 1.5, -2.25, 1e300, -1e-300, 0.1)) | st.floats(
            allow_nan=False, allow_infinity=False, allow_subnormal=False)
    elif kind == "bool":
        base = st.booleans()
    elif kind == "decimal":
        base = decimals
    elif kind == "bytes":
        base = st.sampled_from((b"", b"\x00", b"\xff", b"a\x00b")) | st.binary(max_size=12)
    elif kind == "datetime":
        base = st.datetimes(min_value=dt.datetime(1001, 1, 2), max_value=dt.datetime(9998, 12, 30),
                            timezones=st.sampled_from(_ZONES))
    elif kind == "date":
        base = st.dates(min_value=dt.date(1000, 1, 1), max_value=dt.date(9999, 12, 31))
    elif kind == "uuid":
        base = st.uuids()
    elif kind == "literal":
        base = st.sampled_from(col.literal_values)
    else:
        base = st.one_of(
            st.dictionaries(st.text(_TEXT_CHARS, max_size=6), json_values, max_size=3),
            st.lists(json_values, max_size=3),
        )
    return base


def values_of(col: ColumnSpec) -> st.SearchStrategy[Any]:
    """Values a column can hold, NULL included when it is nullable."""
    base = scalar_values(col)
    return (st.none() | base) if col.nullable else base


# -- models -------------------------------------------------------------------------------------

_tables = itertools.count()


def build_model(table: str, columns: Sequence[ColumnSpec]) -> type[Model]:
    """A Model subclass for the table, with `id` first and then the generated columns."""
    annotations: dict[str, object] = {"id": int}
    namespace: dict[str, object] = {"id": column(primary_key=True)}
    for col in columns:
        if col.kind == "literal":
            annotation: object = Literal[col.literal_values]  # type: ignore[valid-type]
        else:
            annotation = _PYTHON_TYPES[col.kind]
        annotations[col.attr] = annotation | None if col.nullable else annotation  # type: ignore[operator]
        namespace[col.attr] = column(name=col.name, unique=col.unique)
    namespace["__annotations__"] = annotations
    namespace["__module__"] = __name__
    cls_name = f"Generated{next(_tables)}"
    return type(cls_name, (Model,), namespace, table=table)  # type: ignore[call-arg]


literal_sets = st.lists(
    st.one_of(st.sampled_from(("queued", "sent", "it's", "a\\b", "100%", "é")),
              st.text(_TEXT_CHARS, min_size=1, max_size=6)),
    min_size=1, max_size=4, unique=True,
).map(tuple)


@st.composite
def column_specs(draw: st.DrawFn, max_columns: int = 6) -> tuple[ColumnSpec, ...]:
    """Up to `max_columns` columns with distinct SQL names (as MariaDB compares them)."""
    names = draw(st.lists(sql_names, min_size=1, max_size=max_columns,
                          unique_by=name_key).filter(lambda ns: "id" not in map(name_key, ns)))
    specs = []
    for i, name in enumerate(names):
        kind = draw(st.sampled_from(KINDS))
        literals = draw(literal_sets) if kind == "literal" else ()
        specs.append(ColumnSpec(attr=f"c{i}", name=name, kind=kind, nullable=draw(st.booleans()),
                                literal_values=literals))
    return tuple(specs)


@st.composite
def models(draw: st.DrawFn, prefix: str = "prop_", allow_unique: bool = True) -> ModelSpec:
    """A freshly built model whose table name starts with `prefix`."""
    cols = list(draw(column_specs()))
    if allow_unique and draw(st.booleans()):
        i = draw(st.integers(0, len(cols) - 1))
        if cols[i].kind not in ("json", "bool", "literal"):
            cols[i] = dataclasses.replace(cols[i], unique=True)
    suffix = draw(st.one_of(st.just(""), st.sampled_from(("Order", " x", '"q"', "é", "`b`", "%"))))
    # A name never used before: psycopg prepares repeated statements, and a table created
    # again under the same name with other columns would not match the prepared plan.
    table = f"{prefix}{next(_tables)}{suffix}"
    return ModelSpec(build_model(table, cols), table, tuple(cols))


@st.composite
def rows_for(draw: st.DrawFn, spec: ModelSpec, ids: Sequence[int],
             max_size: int = 8) -> list[dict[str, Any]]:
    """Rows with the given ids; unique columns get distinct values."""
    rows: list[dict[str, Any]] = []
    seen: dict[str, set[object]] = {c.attr: set() for c in spec.columns if c.unique}
    for i in ids[:max_size]:
        row: dict[str, Any] = {"id": i}
        for col in spec.columns:
            value = draw(values_of(col))
            if col.unique and value is not None:
                key = unique_key(col, value)
                if key in seen[col.attr]:
                    value = None if col.nullable else _fresh_unique(col, i)
                seen[col.attr].add(unique_key(col, value))
            row[col.attr] = value
        rows.append(row)
    return rows


def unique_key(col: ColumnSpec, value: object) -> object:
    """The value as a unique index compares it."""
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC)
    if isinstance(value, float) and value == 0:
        return 0.0
    return value


def _fresh_unique(col: ColumnSpec, i: int) -> object:
    """A value no generated row holds: made from the row id, out of the generated ranges."""
    fresh: dict[str, Callable[[int], object]] = {
        "str": lambda n: f"\u2063unique{n}", "int": lambda n: 2**62 + n,
        "float": lambda n: 1e200 + n * 1e190, "decimal": lambda n: Decimal(10**34 + n),
        "bytes": lambda n: b"\xfe\xfe" + str(n).encode(),
        "datetime": lambda n: dt.datetime(9999, 1, 1, 0, 0, 0, 7, tzinfo=dt.UTC) + dt.timedelta(seconds=n),
        "date": lambda n: dt.date(9000, 1, 1) + dt.timedelta(days=n),
        "uuid": lambda n: uuid.UUID(int=n),
    }
    return fresh[col.kind](i)


# -- where trees --------------------------------------------------------------------------------


def _pick_value(draw: st.DrawFn, col: ColumnSpec, rows: Sequence[dict[str, Any]]) -> Any:
    """A non-NULL value for a comparison: often one a row holds, so that something matches."""
    existing = [r[col.attr] for r in rows if r[col.attr] is not None]
    if existing and draw(st.booleans()):
        return draw(st.sampled_from(existing))
    return draw(scalar_values(col))


def _escape(text: str) -> str:
    """Text matched literally by LIKE (backslash is the escape on every dialect)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _pattern(draw: st.DrawFn, col: ColumnSpec, rows: Sequence[dict[str, Any]]) -> str:
    """A LIKE pattern: part of a held value with % and _ around or inside."""
    base = str(_pick_value(draw, col, rows))
    cut = draw(st.integers(0, len(base)))
    head, tail = base[:cut], base[cut:]
    head = _escape(head) if draw(st.booleans()) else head.replace("\\", "\\\\")
    return draw(st.sampled_from((f"{head}%", f"%{head}", f"%{head}%", head,
                                 f"{head}_%", "%", "_", f"%{_escape(tail[:2])}%")))


def _leaf(draw: st.DrawFn, spec: ModelSpec, rows: Sequence[dict[str, Any]],
          subqueries: bool) -> dict[str, Any]:
    cols: list[ColumnSpec] = [ColumnSpec("id", "id", "int", False), *spec.columns]
    col = draw(st.sampled_from(cols))
    ops = ["is_null"]
    if col.kind != "json":
        ops += ["value", "eq", "ne", "in", "not_in"]
    if col.kind in ORDERED:
        ops += ["lt", "lte", "gt", "gte", "between"]
    if col.kind in TEXT:
        ops += ["like", "ilike"]
    if col.nullable:
        ops += ["null"]
    op = draw(st.sampled_from(ops))
    if op == "value":
        return {col.attr: _pick_value(draw, col, rows)}
    if op == "null":
        return {col.attr: None}
    if op == "is_null":
        return {col.attr: {"is_null": draw(st.booleans())}}
    if op in ("eq", "ne"):
        value = None if col.nullable and draw(st.integers(0, 5)) == 0 else _pick_value(draw, col, rows)
        return {col.attr: {op: value}}
    if op in ("lt", "lte", "gt", "gte"):
        return {col.attr: {op: _pick_value(draw, col, rows)}}
    if op == "between":
        low, high = _pick_value(draw, col, rows), _pick_value(draw, col, rows)
        return {col.attr: {"between": [low, high]}}
    if op in ("like", "ilike"):
        return {col.attr: {op: _pattern(draw, col, rows)}}
    # in / not_in: a list (empty, short or large) or a subquery of a column of the same kind
    same_kind = [c for c in cols if c.kind == col.kind or {c.kind, col.kind} <= TEXT]
    if subqueries and draw(st.integers(0, 3)) == 0:
        other = draw(st.sampled_from(same_kind))
        sub = select(spec.model)
        if draw(st.booleans()):
            sub = sub.where(draw(conditions(spec, rows, depth=1, subqueries=False)))
        if draw(st.integers(0, 3)) == 0:
            sub = sub.order_by("id").limit(draw(st.integers(0, 3)))
        return {col.attr: {op: sub.as_subquery(other.attr)}}
    size = draw(st.sampled_from((0, 1, 2, 3, 5, 300)))
    if size == 300 and col.kind not in ("bool", "literal"):
        items = [_pick_value(draw, col, rows), *_many(col, size)]
    else:
        items = [_pick_value(draw, col, rows) for _ in range(min(size, 5))]
    return {col.attr: {op: items}}


def _many(col: ColumnSpec, n: int) -> list[Any]:
    """n distinct values of a column's kind (a large `in` list)."""
    make: dict[str, Callable[[int], object]] = {
        "int": lambda i: 10**9 + i, "float": lambda i: i + 0.25,
        "decimal": lambda i: Decimal(i).scaleb(-2), "str": lambda i: f"v{i}",
        "bytes": lambda i: str(i).encode(), "uuid": lambda i: uuid.UUID(int=i + 1),
        "datetime": lambda i: dt.datetime(2000, 1, 1, tzinfo=dt.UTC) + dt.timedelta(microseconds=i),
        "date": lambda i: dt.date(2000, 1, 1) + dt.timedelta(days=i),
    }
    return [make[col.kind](i) for i in range(n)]


@st.composite
def conditions(draw: st.DrawFn, spec: ModelSpec, rows: Sequence[dict[str, Any]],
               depth: int = 3, subqueries: bool = True) -> Any:
    """A where input: a dict, or and_/or_/not_ over nested ones."""
    if depth <= 0 or draw(st.integers(0, 2)) == 0:
        leaf = _leaf(draw, spec, rows, subqueries)
        if draw(st.integers(0, 4)) == 0:
            more = _leaf(draw, spec, rows, subqueries)
            if not set(more) & set(leaf):
                leaf = {**leaf, **more}
        return leaf
    combinator = draw(st.sampled_from(("and", "or", "not")))
    if combinator == "not":
        return not_(draw(conditions(spec, rows, depth - 1, subqueries)))
    items = draw(st.lists(conditions(spec, rows, depth - 1, subqueries), min_size=1, max_size=3))
    return and_(*items) if combinator == "and" else or_(*items)


# -- assignments --------------------------------------------------------------------------------


@st.composite
def assignments(draw: st.DrawFn, spec: ModelSpec, rows: Sequence[dict[str, Any]],
                upsert: bool = False) -> dict[str, Any]:
    """set() values for some columns: fresh values, NULL, or expressions."""
    chosen = draw(st.lists(st.sampled_from(spec.columns), min_size=1, max_size=3,
                           unique_by=lambda c: c.attr))
    out: dict[str, Any] = {}
    for col in chosen:
        options = ["value"]
        if col.kind == "int" and not upsert:
            # In an upsert, PostgreSQL reads a bare `id` as ambiguous (table or EXCLUDED).
            options += ["raw", "expr"]
        if col.kind in ("str", "int", "bool"):
            options += ["expr_value"]
        if upsert:
            options += ["excluded"]
        how = draw(st.sampled_from(options))
        if how == "raw":
            out[col.attr] = sql.raw("id * 2")
        elif how == "expr":
            out[col.attr] = sql.expr("id + {}", draw(st.integers(-1000, 1000)))
        elif how == "expr_value":
            out[col.attr] = sql.expr("{}", draw(scalar_values(col)))
        elif how == "excluded":
            out[col.attr] = sql.excluded(col.attr)
        else:
            value = draw(values_of(col))
            if col.unique and value is not None:
                value = None if col.nullable else _fresh_unique(col, 7000)
            out[col.attr] = value
    return out


# -- statements ---------------------------------------------------------------------------------


@dataclasses.dataclass
class Case:
    """One generated statement, with the spelling MySQL/MariaDB need when it differs."""

    kind: str
    statement: Any
    #: the statement for MySQL/MariaDB when theirs must differ (an upsert without a target)
    mysql_statement: Any = None
    #: the statement's rows come in a defined order (select ... order_by)
    ordered: bool = False
    #: the statement uses ilike (whose case folding differs beyond ASCII)
    uses_ilike: bool = False


def _uses_ilike(condition: object) -> bool:
    return "'ilike'" in repr(condition)


@st.composite
def selects(draw: st.DrawFn, spec: ModelSpec, rows: Sequence[dict[str, Any]]) -> Case:
    """A select of all or some columns, filtered, ordered with `id` last, limited."""
    attrs = ["id", *(c.attr for c in spec.columns)]
    if draw(st.booleans()):
        stmt = select(spec.model)
    else:
        stmt = select(spec.model, draw(st.lists(st.sampled_from(attrs), min_size=1, max_size=4,
                                                unique=True)))
    where = None
    if draw(st.integers(0, 4)):
        where = draw(conditions(spec, rows))
        stmt = stmt.where(where)
    orderable = [c.attr for c in spec.columns if c.kind != "json"]
    for attr in draw(st.lists(st.sampled_from(orderable), max_size=2, unique=True)
                     if orderable else st.just([])):
        stmt = stmt.order_by(attr, draw(st.sampled_from(("asc", "desc"))))
    stmt = stmt.order_by("id", draw(st.sampled_from(("asc", "desc"))))
    if draw(st.booleans()):
        stmt = stmt.limit(draw(st.integers(0, 5)))
    if draw(st.booleans()):
        stmt = stmt.offset(draw(st.integers(0, 5)))
    return Case("select", stmt, ordered=True, uses_ilike=_uses_ilike(where))


@st.composite
def updates(draw: st.DrawFn, spec: ModelSpec, rows: Sequence[dict[str, Any]]) -> Case:
    """An update with values or expressions, filtered or unguarded, maybe returning."""
    from tempest_typed import update

    stmt = update(spec.model).set(draw(assignments(spec, rows)))
    where = None
    if draw(st.integers(0, 5)):
        where = draw(conditions(spec, rows))
        stmt = stmt.where(where)
    else:
        stmt = stmt.unguarded()
    if draw(st.integers(0, 3)) == 0:
        stmt = stmt.returning()
    return Case("update", stmt, uses_ilike=_uses_ilike(where))


@st.composite
def deletes(draw: st.DrawFn, spec: ModelSpec, rows: Sequence[dict[str, Any]]) -> Case:
    """A delete, filtered (rarely unguarded), maybe returning."""
    from tempest_typed import delete

    stmt = delete(spec.model)
    where = None
    if draw(st.integers(0, 6)):
        where = draw(conditions(spec, rows))
        stmt = stmt.where(where)
    else:
        stmt = stmt.unguarded()
    if draw(st.booleans()):
        stmt = stmt.returning(*draw(st.lists(st.sampled_from(["id", *(c.attr for c in spec.columns)]),
                                             max_size=2, unique=True)))
    return Case("delete", stmt, uses_ilike=_uses_ilike(where))


@st.composite
def inserts(draw: st.DrawFn, spec: ModelSpec, rows: Sequence[dict[str, Any]]) -> Case:
    """New rows, or rows whose ids may exist already, skipped or upserted."""
    from tempest_typed import insert

    has_unique = any(c.unique for c in spec.columns)
    mode = draw(st.sampled_from(("plain", "ignore", "upsert") if not has_unique
                                else ("plain", "ignore")))
    taken = {r["id"] for r in rows}
    if mode == "plain":
        ids = draw(st.lists(st.integers(1000, 1100), min_size=1, max_size=4, unique=True))
    else:
        ids = draw(st.lists(st.sampled_from(sorted(taken)) | st.integers(1000, 1100),
                            min_size=1, max_size=4, unique=True)) if taken else [1000]
    new_rows = draw(rows_for(spec, ids))
    if has_unique:
        for i, row in enumerate(new_rows):  # unique values no existing row holds
            for col in spec.columns:
                if col.unique and row[col.attr] is not None:
                    row[col.attr] = None if col.nullable else _fresh_unique(col, 5000 + i)
    stmt = insert(spec.model).values(new_rows)
    mysql_stmt = None
    if mode == "ignore":
        stmt = stmt.on_conflict_do_nothing()
    elif mode == "upsert":
        changes = draw(assignments(spec, rows, upsert=True))
        stmt, mysql_stmt = (stmt.on_conflict_do_update(["id"], changes),
                            stmt.on_conflict_do_update(None, changes))
    if draw(st.integers(0, 2)) == 0:
        stmt = stmt.returning()
        mysql_stmt = mysql_stmt.returning() if mysql_stmt is not None else None
    return Case("insert", stmt, mysql_statement=mysql_stmt)


def statements(spec: ModelSpec, rows: Sequence[dict[str, Any]]) -> st.SearchStrategy[Case]:
    """Any generated statement over a model holding `rows`."""
    return st.one_of(selects(spec, rows), selects(spec, rows), updates(spec, rows),
                     deletes(spec, rows), inserts(spec, rows))
