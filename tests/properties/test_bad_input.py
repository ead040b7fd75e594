"""Bad input: whatever is fed to a builder, the only error is ValidationError, and what builds
runs.

Arbitrary nested dicts, lists, sets, bytes, NaN, huge ints, naive datetimes, instances of
other models, conditions, subqueries and sql.* expressions are passed to every builder method
(where, set, values, order_by, select columns, returning, the upsert clauses, as_subquery,
limit/offset, the lock clauses, and_/or_/not_). Building raises ValidationError or gives a
statement; compiling that statement for each dialect gives SQL or raises ValidationError or
DialectError; running it on PostgreSQL, MariaDB and SQLite succeeds or meets a genuine
constraint (IntegrityError). Any other outcome is a bug of the builder: input it should have
refused with a message, or SQL a database rejects.

Statements whose text comes from the caller (sql.raw, sql.expr) are compiled but not held to
the database: that text is the caller's to keep portable (README).
"""

from __future__ import annotations

import datetime as dt
import math
import uuid
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any, Literal

import pytest
from hypothesis import event, given, note
from hypothesis import strategies as st

from tempest_typed import (
    DialectError,
    Engine,
    IntegrityError,
    Model,
    QueryExecutionError,
    ValidationError,
    and_,
    column,
    create_engine,
    delete,
    insert,
    not_,
    or_,
    select,
    sql,
    update,
)
from tempest_typed.model import meta_of
from tempest_typed.statements.nodes import OPERATORS

DIALECTS = ("postgresql", "sqlite", "mysql", "mariadb")


class Kitchen(Model, table="prop_bad_kitchen"):
    """Every column kind, with names that need quoting."""

    id: int = column(primary_key=True)
    name: str = column(name="select")
    note: str | None = column(name='a"b%s', default=None)
    code: str | None = column(name="code?", unique=True, default=None)
    n: int | None = None
    x: float | None = None
    d: Decimal | None = None
    flag: bool | None = None
    blob: bytes | None = None
    at: dt.datetime | None = None
    day: dt.date | None = None
    uid: uuid.UUID | None = None
    state: Literal["queued", "sent"] | None = None
    doc: dict[str, Any] | None = None


class Other(Model, table="prop_bad_other"):
    """A second model: its instances and subqueries do not belong in Kitchen's statements."""

    id: int = column(primary_key=True)
    label: str


ATTRS = tuple(c.attr for c in meta_of(Kitchen).columns)
ROWS = [
    {"id": 1, "name": "a", "code": "x", "n": 1, "x": 1.5, "d": Decimal("2.5"), "flag": True,
     "at": dt.datetime(2020, 1, 1, tzinfo=dt.UTC), "day": dt.date(2020, 1, 1),
     "uid": uuid.UUID(int=1), "state": "queued", "doc": {"k": [1]}},
    {"id": 2, "name": "b"},
]


@pytest.fixture(scope="module")
def kitchen(engines: dict[str, Engine]) -> Iterator[dict[str, Engine]]:
    """Kitchen and Other on the three databases, holding a few rows."""
    for engine in engines.values():
        engine.drop_all(Kitchen, Other)
        engine.create_all(Kitchen, Other)
        engine.execute(insert(Kitchen).values([{**ROWS[0]}, {**ROWS[1]}]))
        engine.execute(insert(Other).values({"id": 1, "label": "o"}))
    try:
        yield engines
    finally:
        for engine in engines.values():
            engine.drop_all(Kitchen, Other)


# -- junk -----------------------------------------------------------------------------------------

_chars = st.characters(codec=None, categories=None)  # surrogates and NUL included
scalars = st.one_of(
    st.none(), st.booleans(),
    st.sampled_from((0, -1, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 10**40)) | st.integers(),
    st.floats(),  # NaN and infinities included
    st.text(_chars, max_size=6), st.sampled_from(ATTRS + OPERATORS + ("", "queued", "sent")),
    st.binary(max_size=4), st.decimals(), st.sampled_from((Decimal("NaN"), Decimal("-Infinity"),
                                                           Decimal("1E+100"))),
    st.datetimes(), st.datetimes(timezones=st.timezones() | st.just(dt.UTC)),
    st.sampled_from((dt.datetime.min.replace(tzinfo=dt.timezone(dt.timedelta(hours=3))),
                     dt.datetime.max.replace(tzinfo=dt.timezone(dt.timedelta(hours=-3))))),
    st.dates(), st.times(), st.timedeltas(), st.uuids(), st.complex_numbers(max_magnitude=2),
)


#: values of the right type at the edges of what a column holds
edges = st.one_of(
    st.sampled_from((2**63 - 1, -(2**63), 1e308, -0.0, 5e-324, Decimal("1E+100"),
                     Decimal("-1E-100"), Decimal(10**40), "x" * 300, "🙂", b"\x00" * 300,
                     dt.datetime(1, 1, 1, tzinfo=dt.UTC), dt.datetime(9999, 12, 31, tzinfo=dt.UTC),
                     dt.date(1, 1, 1), dt.date(9999, 12, 31), "queued", "sent",
                     {"big": 2**64, "deep": [[[[]]]], "é": "\u2028"}, [1.5, None, True])),
    st.integers(-(2**63), 2**63 - 1), st.text(max_size=3), st.uuids(),
)


_KIND_EDGES: dict[str, st.SearchStrategy[Any]] = {
    "int": st.sampled_from((2**63 - 1, -(2**63), 0)) | st.integers(),
    "float": st.sampled_from((1e308, -0.0, 5e-324, 7)) | st.floats(),
    "decimal": st.sampled_from((Decimal("1E+30"), Decimal("-1E-30"), Decimal(10**34), 3))
    | st.decimals(),
    "str": st.sampled_from(("x" * 255, "🙂", "a\u2028b", "' OR 1=1 --")) | st.text(max_size=4),
    "bytes": st.sampled_from((b"\x00" * 300, b"")) | st.binary(max_size=4),
    "bool": st.booleans(),
    "datetime": st.sampled_from((dt.datetime(1000, 1, 1, tzinfo=dt.UTC),
                                 dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=dt.UTC),
                                 dt.datetime(1, 1, 1, tzinfo=dt.UTC))) | st.datetimes(
        timezones=st.just(dt.UTC)),
    "date": st.sampled_from((dt.date(1, 1, 1), dt.date(9999, 12, 31))) | st.dates(),
    "uuid": st.uuids(),
    "literal": st.sampled_from(("queued", "sent", "other")),
    "json": st.sampled_from(({"big": 2**63 - 1, "deep": [[[[]]]], "é": "\u2028"}, [1.5, None])),
}
#: per column, values of its type at the edges of what it holds (or just outside them)
typed = {c.attr: _KIND_EDGES[c.kind] for c in meta_of(Kitchen).columns}


def _subqueries() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from(ATTRS).map(lambda a: select(Kitchen).as_subquery(a)),
        st.sampled_from(ATTRS).map(lambda a: select(Kitchen).order_by("id").limit(1)
                                   .as_subquery(a)),
        st.just(select(Other).as_subquery("id")), st.just(select(Other).as_subquery("label")),
    )


objects = st.one_of(
    st.builds(object), st.sampled_from((Kitchen, Other, int, len, Ellipsis, NotImplemented)),
    st.just(Kitchen(id=9, name="k")), st.just(Other(id=9, label="o")),
    st.just(select(Kitchen)), st.just(update(Kitchen)),
    _subqueries(),
    st.sampled_from((sql.now(), sql.now(plus=1.5), sql.raw("1"), sql.expr("{}", 1))),
    st.sampled_from((*ATTRS, "nope")).map(sql.excluded),
    st.sampled_from(ATTRS).map(lambda a: and_({a: None})),
    st.sampled_from(ATTRS).map(lambda a: or_({a: {"is_null": False}}, {"id": 1})),
    st.sampled_from(ATTRS).map(lambda a: not_({a: None})),
)

_hashable = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=4),
                      st.sampled_from(ATTRS), st.binary(max_size=3))
junk = st.recursive(
    scalars | objects,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.tuples(inner, inner), st.sets(_hashable, max_size=3),
        st.frozensets(_hashable, max_size=2),
        st.dictionaries(st.sampled_from(ATTRS + OPERATORS) | _hashable, inner, max_size=3),
    ),
    max_leaves=6,
)
#: where-shaped junk: real columns and operators, with anything as operand
where_junk = st.one_of(
    st.dictionaries(st.sampled_from(ATTRS), edges | junk, min_size=1, max_size=3),
    st.fixed_dictionaries({}, optional={a: typed[a] for a in ATTRS}),
    st.dictionaries(st.sampled_from(ATTRS),
                    st.dictionaries(st.sampled_from(OPERATORS), edges | junk | st.lists(edges),
                                    min_size=1, max_size=2),
                    min_size=1, max_size=2),
    junk,
)


@st.composite
def conditions(draw: st.DrawFn) -> Callable[[], Any]:
    """A where input, maybe wrapped in and_/or_/not_ when it is called (they validate it)."""
    items = [draw(where_junk), *draw(st.lists(where_junk, max_size=2))]
    wrap = draw(st.sampled_from(("", "and", "or", "not")))
    if wrap == "not":
        return lambda: not_(items[0])
    if wrap:
        return lambda: and_(*items) if wrap == "and" else or_(*items)
    return lambda: items[0]


def maybe(condition: Callable[[], Any] | None) -> Any:
    """The where input of a drawn condition, or None."""
    return None if condition is None else condition()


def columns_junk() -> st.SearchStrategy[Any]:
    """Column lists: real names, unknown ones, repeated ones, or not a list at all."""
    return st.one_of(st.lists(st.sampled_from(ATTRS) | junk, max_size=3),
                     st.lists(st.sampled_from(ATTRS), min_size=1, max_size=4), junk)


def row_junk() -> st.SearchStrategy[Any]:
    """values() input: rows with required columns and anything in the cells, or not rows."""
    base = st.fixed_dictionaries({"id": st.integers(100, 200) | junk, "name": st.just("z") | junk},
                                 optional={a: typed[a] | typed[a] | junk for a in ATTRS
                                           if a not in ("id", "name")})
    clean = st.fixed_dictionaries({"id": st.integers(100, 200), "name": st.just("z")},
                                  optional={a: typed[a] for a in ATTRS if a not in ("id", "name")})
    return st.one_of(clean, st.lists(clean, min_size=1, max_size=3), base,
                     st.lists(base, min_size=1, max_size=3), junk,
                     st.just(Kitchen(id=150, name="m")), st.just(Other(id=150, label="m")))


# -- building -------------------------------------------------------------------------------------


Step = Callable[[Any], Any]


@st.composite
def steps(draw: st.DrawFn, kind: str) -> list[tuple[str, Step]]:
    """Builder calls with junk arguments, for a statement of `kind`."""
    common: dict[str, st.SearchStrategy[Step]] = {
        "where": st.lists(conditions(), min_size=1, max_size=2).map(
            lambda cs: lambda s: s.where(*(c() for c in cs))),
        "returning": st.lists(st.sampled_from(ATTRS) | junk, max_size=2).map(
            lambda cs: lambda s: s.returning(*cs)),
    }
    by_kind: dict[str, dict[str, st.SearchStrategy[Step]]] = {
        "select": {
            "where": common["where"],
            "order_by": st.tuples(st.sampled_from(ATTRS) | junk,
                                  st.sampled_from(("asc", "desc")) | junk).map(
                lambda a: lambda s: s.order_by(*a)),
            "limit": (st.integers(0, 3) | junk).map(lambda n: lambda s: s.limit(n)),
            "offset": (st.integers(0, 3) | junk).map(lambda n: lambda s: s.offset(n)),
            "for_update": st.tuples(junk, junk, junk).map(
                lambda a: lambda s: s.for_update(skip_locked=a[0], no_wait=a[1], of=a[2])),
        },
        "update": {
            "set": (st.fixed_dictionaries({}, optional={a: typed[a] | junk for a in ATTRS})
                    .filter(bool) | junk).map(lambda v: lambda s: s.set(v)),
            "where": common["where"], "returning": common["returning"],
            "unguarded": st.just(lambda s: s.unguarded()),
        },
        "delete": {"where": common["where"], "returning": common["returning"]},
        "insert": {
            "values": row_junk().map(lambda v: lambda s: s.values(v)),
            "do_nothing": st.tuples(st.none() | columns_junk(), st.none() | conditions()).map(
                lambda a: lambda s: s.on_conflict_do_nothing(a[0], where=maybe(a[1]))),
            "do_update": st.tuples(
                st.none() | columns_junk(),
                st.dictionaries(st.sampled_from(ATTRS), junk, min_size=1, max_size=2) | junk,
                st.none() | conditions(), st.none() | conditions(),
            ).map(lambda a: lambda s: s.on_conflict_do_update(
                a[0], a[1], index_where=maybe(a[2]), update_where=maybe(a[3]))),
            "returning": common["returning"],
        },
    }
    options = by_kind[kind]
    names = draw(st.lists(st.sampled_from(sorted(options)), min_size=1, max_size=4))
    if kind == "insert" and draw(st.booleans()):
        names = ["values", *names]
    return [(name, draw(options[name])) for name in names]


def start(kind: str, columns: Any) -> Any:
    """A fresh statement of `kind` (select takes the junk column list)."""
    if kind == "select":
        return select(Kitchen) if columns is None else select(Kitchen, columns)
    return {"update": update, "delete": delete, "insert": insert}[kind](Kitchen)


def caller_text(node: object) -> bool:
    """True when the statement tree holds SQL the caller wrote (sql.raw or sql.expr)."""
    if isinstance(node, tuple):
        if node and node[0] in ("raw", "expr"):
            return True
        return any(caller_text(item) for item in node)
    return False


# -- running --------------------------------------------------------------------------------------


class _Rollback(Exception):
    pass


#: storage limits of a database that the README documents, which the builder cannot see when
#: it checks a value (it does not know the dialect yet): MySQL's DECIMAL(65, 30), and the
#: VARCHAR(255) of an indexed str column without max_length
DOCUMENTED_LIMITS = {"mysql": (1264, 1406)}


def documented_limit(name: str, exc: QueryExecutionError) -> bool:
    """True when the database refused a value beyond one of its documented limits."""
    code = getattr(exc.__cause__, "args", (None,))[0]
    return code in DOCUMENTED_LIMITS.get(name, ())


def run_everywhere(engines: dict[str, Engine], stmt: Any) -> None:
    """Run a statement on each database, rolled back; fail on an error the builder allowed."""
    checked = not caller_text(stmt._key())
    for name, engine in engines.items():
        try:
            stmt.compile(engine.dialect)
        except DialectError:
            continue
        try:
            with engine.transaction() as tx:
                result = tx.execute(stmt)
                if engine.dialect.shape(stmt).result is not None:
                    result.all()
                tx.execute(select(Kitchen)).all()  # what was written reads back
                raise _Rollback
        except (_Rollback, ValidationError, IntegrityError):
            pass
        except QueryExecutionError as exc:
            if checked and not documented_limit(name, exc):
                raise AssertionError(f"{name} rejected a statement the builder accepted: "
                                     f"{exc}") from exc


@given(data=st.data())
def test_bad_input_is_a_validation_error_and_what_builds_runs(
        kitchen: dict[str, Engine], data: st.DataObject) -> None:
    kind = data.draw(st.sampled_from(("select", "update", "delete", "insert")), label="kind")
    columns = data.draw(st.none() | columns_junk(), label="columns") if kind == "select" else None
    try:
        stmt = start(kind, columns)
    except ValidationError:
        return
    as_subquery = kind == "select" and data.draw(st.integers(0, 4)) == 0
    for name, step in data.draw(steps(kind), label="steps"):
        try:
            stmt = step(stmt)
        except ValidationError:
            pass
        else:
            note(f"{name} -> {stmt!r}")
    if as_subquery:
        column_ = data.draw(st.sampled_from(ATTRS) | junk, label="as_subquery")
        try:
            sub = stmt.as_subquery(column_)
            stmt = select(Kitchen).where({column_: {"in": sub}})
        except ValidationError:
            return
    compiled_somewhere = False
    for dialect in DIALECTS:
        try:
            compiled = stmt.compile(dialect)
        except (ValidationError, DialectError):
            continue
        compiled_somewhere = True
        assert isinstance(compiled.sql, str)
    event(f"{kind}: {'compiled' if compiled_somewhere else 'refused'}")
    if compiled_somewhere:
        run_everywhere(kitchen, stmt)


@pytest.mark.parametrize(("build", "message"), [
    (lambda: update(Kitchen).set({"x": math.nan}), "not a finite number"),
    (lambda: update(Kitchen).set({"x": -math.inf}), "not a finite number"),
    (lambda: insert(Kitchen).values({"id": 1, "name": "a", "x": math.inf}), "not a finite"),
    (lambda: select(Kitchen).where({"d": Decimal("NaN")}), "not a finite number"),
    (lambda: insert(Kitchen).values({"id": 2**63, "name": "a"}), "64-bit range"),
    (lambda: select(Kitchen).where({"x": {"gt": 2**70}}), "outside the 64-bit integers every database binds.*pass it as a float"),
    (lambda: select(Kitchen).limit(2**63), "limit"),
    (lambda: insert(Kitchen).values({"id": 1, "name": "a\x00b"}), "NUL"),
    (lambda: select(Kitchen).where({"name": {"like": "\ud800%"}}), "not valid Unicode"),
    (lambda: update(Kitchen).set({"doc": {"a": {1, 2}}}), "not a JSON value"),
    (lambda: update(Kitchen).set({"doc": {1: "a"}}), "is not a string"),
    (lambda: update(Kitchen).set({"doc": [math.nan]}), "not a JSON number"),
    (lambda: update(Kitchen).set({"at": dt.datetime.min.replace(
        tzinfo=dt.timezone(dt.timedelta(hours=3)))}), "exist in UTC"),
    (lambda: update(Kitchen).set({"n": sql.now()}), r"sql.now\(\) is a timestamp"),
    (lambda: update(Kitchen).set({"day": sql.now()}), r"sql.now\(\) is a timestamp"),
    (lambda: insert(Kitchen).values({"id": 1, "name": "a"}).on_conflict_do_update(
        ["id"], {"n": sql.excluded("name")}), r"sql.excluded\('name'\) is str"),
    (lambda: insert(Kitchen).values({"id": 1, "name": "a"}).on_conflict_do_nothing(["name"]),
     "not a unique key"),
    (lambda: insert(Kitchen).values({"id": 1, "name": "a"}).on_conflict_do_nothing(
        ["id", "id"]), "names the column 'id' twice"),
    (lambda: update(Kitchen).set({"n": 1}).unguarded().returning("n", "n"),
     "names the column 'n' twice"),
    (lambda: select(Kitchen).for_update(of=object()), "takes a model or a list of models"),
])
def test_values_no_database_can_take_are_validation_errors(build: Callable[[], Any],
                                                           message: str) -> None:
    # Each was found by the property above: a driver error, another exception, or a database
    # refusing the statement.
    with pytest.raises(ValidationError, match=message):
        build()


def test_a_datetime_before_year_1000_reads_back_from_sqlite(sqlite_url: str) -> None:
    engine = create_engine(sqlite_url)
    try:
        engine.create_all(Kitchen)
        early = dt.datetime(1, 1, 1, 0, 0, 0, 5, tzinfo=dt.UTC)
        engine.execute(insert(Kitchen).values({"id": 1, "name": "a", "at": early}))
        assert engine.execute(select(Kitchen, ["at"])).scalar() == early
    finally:
        engine.close()
