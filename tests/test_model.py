"""Models: annotated dataclasses and the metadata every later layer reads."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any, ClassVar, Literal
from uuid import UUID

import pytest

from tempest_typed import UNSET, Index, Model, ValidationError, column, insert, select, sql, update
from tempest_typed.model import _short, meta_of

from .models import Account, Everything, Keyed, Outbound, Snake

NOW = datetime(2024, 1, 1, tzinfo=UTC)


def describe(model: type[Model]) -> list[tuple[str, str, str, bool, bool, bool]]:
    """(attr, sql name, kind, nullable, primary key, required on insert) per column."""
    return [(c.attr, c.name, c.kind, c.nullable, c.primary_key, c.required)
            for c in meta_of(model).columns]


def test_outbound_metadata_in_declaration_order() -> None:
    meta = meta_of(Outbound)
    assert meta.table == "outbound_messages"
    assert describe(Outbound) == [
        ("id", "id", "uuid", False, True, False),
        ("consumer", "consumer", "str", False, False, True),
        ("idempotency_key", "idempotency_key", "str", True, False, False),
        ("status", "status", "literal", False, False, False),
        ("attempts", "attempts", "int", False, False, False),
        ("next_attempt_at", "next_attempt_at", "datetime", False, False, True),
        ("updated_at", "updated_at", "datetime", True, False, False),
    ]
    assert [c.attr for c in meta.primary_key] == ["id"]
    assert meta.by_attr["status"].literal_values == ("queued", "sending", "sent", "failed")
    assert [c.position for c in meta.columns] == list(range(7))


def test_every_column_kind() -> None:
    kinds = {c.attr: (c.kind, c.nullable) for c in meta_of(Everything).columns}
    assert kinds == {
        "id": ("int", False), "name": ("str", False), "label": ("str", True),
        "code": ("str", False), "state": ("literal", False), "count": ("int", False),
        "ratio": ("float", False), "price": ("decimal", False), "active": ("bool", False),
        "payload": ("bytes", False), "at": ("datetime", True), "day": ("date", True),
        "ref": ("uuid", True), "doc": ("json", True), "created_at": ("datetime", False),
    }
    assert meta_of(Everything).by_attr["code"].max_length == 12


def test_required_on_insert() -> None:
    # Required: not nullable and no default of any kind (Python, factory, server, identity).
    assert [c.attr for c in meta_of(Everything).columns if c.required] == ["name"]
    assert [c.attr for c in meta_of(Keyed).columns if c.required] == ["code", "name"]
    everything = meta_of(Everything).by_attr
    assert everything["id"].autoincrement
    assert everything["created_at"].server_default is not None
    assert not meta_of(Keyed).by_attr["code"].autoincrement


def test_indexes_with_their_where() -> None:
    unique, claim = meta_of(Outbound).indexes
    assert (unique.name, unique.columns, unique.unique) == (
        "outbound_idempotency_unique", ("consumer", "idempotency_key"), True)
    assert unique.where == {"idempotency_key": {"is_null": False}}
    assert (claim.name, claim.columns, claim.unique, claim.where) == (
        "outbound_claim", ("status", "next_attempt_at"), False, None)
    indexed = {c.attr for c in meta_of(Outbound).columns if c.indexed}
    assert indexed == {"id", "consumer", "idempotency_key", "status", "next_attempt_at"}


def test_default_table_name_is_the_class_name_in_snake_case() -> None:
    class HTTPRequestLog(Model):
        id: int = column(primary_key=True)

    assert meta_of(HTTPRequestLog).table == "http_request_log"
    assert meta_of(Snake).table == "snake"


@pytest.mark.parametrize(("naming", "names"), [
    ("preserve", ["nextAttemptAt", "updated_at", "Kind"]),
    ("snake_case", ["next_attempt_at", "updated_at", "kind"]),
    ("camelCase", ["nextAttemptAt", "updatedAt", "Kind"]),
    (lambda name: "c_" + name.lower(), ["c_nextattemptat", "c_updated_at", "c_kind"]),
])
def test_naming(naming: Any, names: list[str]) -> None:
    class Named(Model, naming=naming):
        nextAttemptAt: int
        updated_at: int = 0
        Kind: str = column(default="k")

    assert [c.name for c in meta_of(Named).columns] == names
    assert [c.attr for c in meta_of(Named).columns] == ["nextAttemptAt", "updated_at", "Kind"]


def test_column_name_overrides_naming() -> None:
    class Renamed(Model, naming="snake_case"):
        firstName: str = column(name="given_name")
        lastName: str

    assert [c.name for c in meta_of(Renamed).columns] == ["given_name", "last_name"]


def test_snake_case_model_of_the_seed() -> None:
    assert describe(Snake) == [
        ("id", "id", "int", False, True, False),
        ("nextAttemptAt", "next_attempt_at", "datetime", False, False, True),
        ("updatedAt", "updated_at", "datetime", True, False, False),
    ]


def test_class_vars_and_unannotated_attributes_are_not_columns() -> None:
    class Plain(Model):
        x: int
        limit: ClassVar[int] = 3
        helper = "not a column"

    assert [c.attr for c in meta_of(Plain).columns] == ["x"]


# -- constructor ------------------------------------------------------------------------------


def test_constructor_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        Outbound("billing", NOW)  # type: ignore[misc]


def test_defaults_and_factories() -> None:
    one = Outbound(consumer="c", next_attempt_at=NOW)
    two = Outbound(consumer="c", next_attempt_at=NOW)
    assert (one.status, one.attempts, one.idempotency_key, one.updated_at) == (
        "queued", 0, None, None)
    assert isinstance(one.id, UUID)
    assert one.id != two.id  # a factory runs per instance


def test_database_filled_columns_default_to_unset() -> None:
    account = Account(owner="a")
    assert account.id is UNSET
    assert not UNSET
    assert repr(UNSET) == "UNSET"
    everything = Everything(name="n")
    assert everything.created_at is UNSET


def test_a_key_the_database_cannot_fill_can_be_left_out_but_not_inserted() -> None:
    assert Keyed(name="a").code is UNSET  # checked when inserted (see test_validation)


def test_a_model_is_a_dataclass() -> None:
    assert dataclasses.is_dataclass(Outbound)
    a = Account(id=1, owner="a")
    assert a == Account(id=1, owner="a")
    assert "owner='a'" in repr(a)


def test_mutable_default_needs_a_factory() -> None:
    with pytest.raises(ValidationError, match="use default_factory"):
        class Bad(Model):
            tags: list[str] = []  # noqa: RUF012

    class Good(Model):
        tags: list[str] = column(default_factory=list)

    assert Good().tags == []
    assert meta_of(Good).by_attr["tags"].kind == "json"


# -- mistakes in a model are reported where it is defined -------------------------------------


@pytest.mark.parametrize(("annotation", "message"), [
    ("set[int]", "unsupported column type set[int]; use one of str, int, float, bool, Decimal"),
    ("object", "(or mark the attribute ClassVar to keep it out of the table)"),
    ("int | str", "a column has one type (optionally `| None`)"),
    ("Literal[1, 2]", "a Literal column is an enum of strings"),
])
def test_unsupported_annotation(annotation: str, message: str) -> None:
    namespace: dict[str, Any] = {"Model": Model, "Literal": Literal}
    source = f"class Bad(Model):\n    x: {annotation}\n"
    code = compile(source, "<model>", "exec", dont_inherit=True)  # annotations evaluated
    with pytest.raises(ValidationError) as err:
        exec(code, namespace)
    assert str(err.value).startswith("Bad.x: ")
    assert message in str(err.value)


def test_unknown_naming() -> None:
    with pytest.raises(ValidationError, match="naming='kebab' is not one of 'preserve'"):
        class Bad(Model, naming="kebab"):  # type: ignore[arg-type]
            x: int


def test_two_columns_with_one_sql_name() -> None:
    with pytest.raises(ValidationError, match=re.escape("give one of them column(name=...)")):
        class Bad(Model, naming="snake_case"):
            fooBar: int
            foo_bar: int


def test_index_on_an_unknown_column() -> None:
    with pytest.raises(ValidationError, match="Bad has no column 'y' in Index 'i'"):
        class Bad(Model):
            x: int
            __indexes__ = (Index("i", ["y"]),)


def test_index_where_on_an_unknown_column() -> None:
    with pytest.raises(ValidationError, match="Bad has no column 'z' in Index 'i' where="):
        class Bad(Model):
            x: int
            __indexes__ = (Index("i", ["x"], where={"z": 1}),)


def test_index_columns_is_a_list() -> None:
    with pytest.raises(ValidationError, match="write \\['x'\\]"):
        Index("i", "x")
    with pytest.raises(ValidationError, match="needs at least one column"):
        Index("i", [])


def test_column_options() -> None:
    with pytest.raises(ValidationError, match="default or default_factory, not both"):
        column(default=1, default_factory=int)
    with pytest.raises(ValidationError, match="must be a positive int"):
        column(max_length=0)
    with pytest.raises(ValidationError, match="max_length applies to str and bytes columns"):
        class Bad(Model):
            x: int = column(max_length=3)


def test_a_model_without_columns() -> None:
    with pytest.raises(ValidationError, match="Empty declares no column"):
        class Empty(Model):
            pass


def test_server_default_keeps_the_expression() -> None:
    assert meta_of(Everything).by_attr["created_at"].server_default is sql.now()


def test_a_forward_reference_is_checked_at_first_use() -> None:
    class Later(Model):
        x: NotYetDefined  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(ValidationError, match="Later: cannot resolve an annotation"):
        meta_of(Later)


# bool is a subclass of int and datetime of date, so type checkers let them pass as a number
# or a date; the builder refuses them with the words of the mypy plugin's report.
BOOL_FOR_NUMBER = "a bool is not a number here (write 1 or 0)"
DATETIME_FOR_DATE = "a datetime is not a date (pass its .date())"


@pytest.mark.parametrize(("build", "message"), [
    (lambda: update(Everything).set({"count": True}).unguarded(),
     "Everything.count expects int, got bool True in set(): " + BOOL_FOR_NUMBER),
    (lambda: update(Everything).set({"ratio": False}).unguarded(),
     "Everything.ratio expects float, got bool False in set(): " + BOOL_FOR_NUMBER),
    (lambda: insert(Everything).values({"name": "a", "price": True}),
     "Everything.price expects Decimal, got bool True in values(): " + BOOL_FOR_NUMBER),
    (lambda: select(Everything).where({"count": {"in": [1, True]}}),
     "Everything.count expects int, got bool True in where() `in`: " + BOOL_FOR_NUMBER),
    (lambda: select(Everything).where({"day": NOW}),
     "Everything.day expects date | None, got datetime " + _short(NOW) + " in where(): "
     + DATETIME_FOR_DATE),
    (lambda: select(Everything).where({"day": {"in": [NOW]}}),
     "Everything.day expects date | None, got datetime " + _short(NOW) + " in where() `in`: "
     + DATETIME_FOR_DATE),
])
def test_a_bool_for_a_number_and_a_datetime_for_a_date_are_refused(
        build: Any, message: str) -> None:
    with pytest.raises(ValidationError) as info:
        build()
    assert str(info.value) == message


@pytest.mark.parametrize(("options", "message"), [
    ({"scale": 2}, "column(scale=2) needs precision= too: the total number of digits, e.g. "
     "column(precision=12, scale=2)"),
    ({"precision": 0}, "column(precision=0) must be an int from 1 to 65 (the most digits "
     "MySQL's DECIMAL holds)"),
    ({"precision": 66}, "column(precision=66) must be an int from 1 to 65 (the most digits "
     "MySQL's DECIMAL holds)"),
    ({"precision": "10"}, "column(precision='10') must be an int from 1 to 65 (the most digits "
     "MySQL's DECIMAL holds)"),
    ({"precision": 40, "scale": 31}, "column(scale=31) must be an int from 0 to 30 (the most "
     "digits after the point MySQL's DECIMAL holds)"),
    ({"precision": 10, "scale": -1}, "column(scale=-1) must be an int from 0 to 30 (the most "
     "digits after the point MySQL's DECIMAL holds)"),
    ({"precision": 5, "scale": 6}, "column(precision=5, scale=6): the scale (digits after the "
     "point) cannot exceed the precision (all digits)"),
])
def test_a_decimal_size_must_be_one_every_dialect_has(options: dict[str, Any],
                                                      message: str) -> None:
    with pytest.raises(ValidationError) as info:
        column(**options)
    assert str(info.value) == message


def test_a_decimal_size_applies_to_decimal_columns_only() -> None:
    with pytest.raises(ValidationError, match=re.escape(
            "Sized.count: precision= and scale= apply to Decimal columns only; annotate it "
            "`Decimal` or drop them")):
        class Sized(Model):
            id: int = column(primary_key=True)
            count: int = column(precision=5)


def test_a_decimal_size_is_in_the_metadata() -> None:
    from decimal import Decimal

    class Priced(Model):
        id: int = column(primary_key=True)
        price: Decimal = column(precision=12, scale=2)
        whole: Decimal = column(precision=7, default=Decimal(0))
        loose: Decimal = Decimal(0)

    cols = meta_of(Priced).by_attr
    assert [(cols[a].precision, cols[a].scale) for a in ("price", "whole", "loose")] == [
        (12, 2), (7, 0), (None, None)]


# -- composite keys ---------------------------------------------------------------------------


class PostTag(Model, table="model_post_tags"):
    """A many-to-many link table: its two references are its key."""

    post_id: int = column(primary_key=True)
    tag_id: int = column(primary_key=True)


def test_a_composite_key_has_no_identity_and_needs_each_column() -> None:
    meta = meta_of(PostTag)
    assert [c.attr for c in meta.primary_key] == ["post_id", "tag_id"]
    assert [(c.autoincrement, c.required) for c in meta.columns] == [(False, True), (False, True)]
    assert PostTag(post_id=1, tag_id=2) == PostTag(post_id=1, tag_id=2)
    with pytest.raises(TypeError, match="tag_id"):
        PostTag(post_id=1)  # type: ignore[call-arg]  # the missing argument is the point
    with pytest.raises(ValidationError, match="missing required column"):
        insert(PostTag).values({"post_id": 1})


def test_a_lone_int_key_stays_an_identity() -> None:
    class Alone(Model, table="alone"):
        id: int = column(primary_key=True)
        name: str

    assert Alone(name="x").id is UNSET
    assert meta_of(Alone).by_attr["id"].autoincrement
    assert not meta_of(Alone).by_attr["id"].required


def test_a_composite_key_with_an_inherited_column() -> None:
    class Base(Model, table="inherited_keys"):
        tenant: str = column(primary_key=True)

    class Scoped(Base, table="inherited_keys"):
        id: int = column(primary_key=True)

    assert [c.attr for c in meta_of(Scoped).primary_key] == ["tenant", "id"]
    assert not meta_of(Scoped).by_attr["id"].autoincrement
    with pytest.raises(TypeError, match="'id'"):
        Scoped(tenant="a")  # type: ignore[call-arg]  # the missing argument is the point


# -- server defaults --------------------------------------------------------------------------

ACCEPTED = ("a server_default is a literal of the column's type (str, int, float, bool or "
            "Decimal values), sql.now() for a datetime column, or sql.raw()/sql.expr() written "
            "as they are")


@pytest.mark.parametrize(("annotation", "default", "message"), [
    ("int", "'abc'", "M.x expects int, got str 'abc' in server_default="),
    ("int", "True", "M.x expects int, got bool True in server_default=: "),
    ("bool", "1", "M.x expects bool, got int 1 in server_default="),
    ("str", "5", "M.x expects str, got int 5 in server_default="),
    ("Literal['a', 'b']", "'c'", "M.x expects Literal['a', 'b'], got str 'c' in server_default="),
    ("int", "2**70", "M.x: 1180591620717411303424 is outside the 64-bit range"),
    ("float", "float('nan')", "M.x: nan is not a finite number"),
    # an int too large to bind, for a float column: the way out is a float, not a Decimal
    # column (it said "the 64-bit range of an int column ... use a Decimal column")
    ("float", "2**63", "M.x: the int 9223372036854775808 is outside the 64-bit integers every "
     "database binds [-9223372036854775808, 9223372036854775807]; pass it as a float "
     "(float(9223372036854775808)) for this float column"),
    ("Decimal", "Decimal('1.234')", None),
    ("date", "sql.now()", "M.x server_default=sql.now(): the current timestamp is a datetime, "
     "and M.x is date; "),
    ("int", "sql.now()", "the current timestamp is a datetime, and M.x is int"),
    ("UUID", "UUID(int=1)", "M.x server_default=UUID UUID('00000000-0000-0000-0000-000000000001')"
     " has no literal in DDL; "),
    ("dict[str, int]", "{'a': 1}", "has no literal in DDL"),
    ("int", "sql.col('id')", "is not a value a table can default to"),
    ("str", "sql.expr('lower({})', b'x')", "M.x server_default=sql.expr(): bytes b'x' has no "
     "literal in DDL; DDL takes str, int, float, bool or Decimal values only"),
])
def test_a_server_default_must_be_a_value_of_the_columns_type(
        annotation: str, default: str, message: str | None) -> None:
    source = (f"class M(Model, table='m'):\n    id: int = column(primary_key=True)\n"
              f"    x: {annotation} = column(server_default={default}"
              f"{', precision=5, scale=2' if annotation == 'Decimal' else ''})\n")
    # The names the string annotations use resolve in this module.
    with pytest.raises(ValidationError) as info:
        exec(source, {"__name__": __name__, **globals()})
    text = str(info.value)
    assert text.endswith(ACCEPTED) or "sql.expr()" in text, text
    if message is None:
        assert "has 3 digits after the point, and the column keeps 2" in text
    else:
        assert message in text


def test_server_defaults_of_the_columns_type_are_accepted() -> None:
    class Defaults(Model, table="server_defaults_ok"):
        id: int = column(primary_key=True)
        n: int = column(server_default=0)
        ratio: float = column(server_default=1)
        price: Decimal = column(server_default=Decimal("9.90"), precision=5, scale=2)
        state: Literal["a", "b"] = column(server_default="b")
        flag: bool = column(server_default=False)
        at: datetime = column(server_default=sql.now())
        raw: str = column(server_default=sql.raw("'x'"))
        expr: int = column(server_default=sql.expr("{} + {}", 1, 2))

    assert meta_of(Defaults).by_attr["state"].server_default == "b"


# -- references -------------------------------------------------------------------------------


class RefUser(Model, table="ref_users"):
    id: int = column(primary_key=True)
    email: str = column(unique=True)
    name: str
    manager_id: int | None = column(default=None, references="ref_users.id")
    ref: UUID = column(default_factory=lambda: UUID(int=0))


@pytest.mark.parametrize(("annotation", "reference", "message"), [
    ("int", "ref_users.idd", "RefUser (table 'ref_users') has no column 'idd' (its SQL names: "
     "id, email, name, manager_id, ref)"),
    ("str", "ref_users.id", "RefUser.id is int and M.x is str: a foreign key joins values of "
     "one type"),
    ("int", "ref_users.name", "RefUser.name is str and M.x is int"),
    ("str", "ref_users.name", "RefUser.name is neither the primary key nor unique"),
    ("int", "m.nope", "M (table 'm') has no column 'nope'"),
])
def test_a_reference_to_a_model_already_defined_is_checked(
        annotation: str, reference: str, message: str) -> None:
    source = (f"class M(Model, table='m'):\n    id: int = column(primary_key=True)\n"
              f"    x: {annotation} = column(references={reference!r})\n")
    with pytest.raises(ValidationError) as info:
        exec(source, {"Model": Model, "column": column})
    assert str(info.value).startswith(f"M.x references={reference!r}: {message}")


def test_references_that_fit_and_references_to_tables_no_model_defines() -> None:
    class Order(Model, table="ref_orders"):
        id: int = column(primary_key=True)
        user_id: int = column(references="ref_users.id")
        email: str = column(references="ref_users.email")
        parent_id: int | None = column(default=None, references="ref_orders.id")
        elsewhere: int = column(references="not_a_model_yet.id")  # create_all() checks it

    assert meta_of(Order).by_attr["elsewhere"].references == "not_a_model_yet.id"


def test_a_reference_passes_when_one_model_of_the_table_has_the_column() -> None:
    # Two releases of one table's model: a reference fits either.
    class V1(Model, table="ref_releases"):
        id: int = column(primary_key=True)

    class V2(Model, table="ref_releases"):
        id: int = column(primary_key=True)
        code: str = column(unique=True)

    class Pointer(Model, table="ref_pointers"):
        id: int = column(primary_key=True)
        code: str = column(references="ref_releases.code")

    assert meta_of(V1).table == meta_of(V2).table == "ref_releases"
    assert meta_of(Pointer).by_attr["code"].references == "ref_releases.code"


# -- index names and predicates ---------------------------------------------------------------


@pytest.mark.parametrize(("names", "message"), [
    (("dup", "dup"), "Index 'dup': the name is already the name of Index 'dup'"),
    (("Dup", "dup"), "Index 'dup': the name is already the name of Index 'Dup'"),
    (("idx_table",), "Index 'idx_table': the name is already the table 'idx_table'"),
])
def test_an_index_name_used_twice_in_one_model_is_refused(names: tuple[str, ...],
                                                          message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        class Twice(Model, table="idx_table"):
            id: int = column(primary_key=True)
            a: int = 0
            __indexes__ = tuple(Index(name, ["a"]) for name in names)


@pytest.mark.parametrize(("value", "message"), [
    (UUID(int=1), "UUID UUID('00000000-0000-0000-0000-000000000001') has no literal in DDL"),
    (date(2024, 1, 1), "date datetime.date(2024, 1, 1) has no literal in DDL"),
])
def test_an_index_predicate_value_with_no_ddl_literal_is_refused(value: object,
                                                                 message: str) -> None:
    annotation = type(value)
    with pytest.raises(ValidationError) as info:
        class Pred(Model, table="pred"):
            id: int = column(primary_key=True)
            x: annotation | None = None  # type: ignore[valid-type]  # a type chosen per case
            __indexes__ = (Index("pred_x", ["id"], where={"x": value}),)
    assert str(info.value) == (
        f"Pred Index 'pred_x' where=: {message}; CREATE INDEX ... WHERE takes no bound "
        "parameter, so an index predicate compares with str, int, float, bool or Decimal "
        "values only")


def test_a_default_that_no_insert_could_write_is_refused_when_defined() -> None:
    with pytest.raises(ValidationError, match=r"BadT\.v expects datetime, got naive datetime "
                                              r".* in default=\. Pass an aware datetime"):
        class BadT(Model, table="bad_default_t"):
            id: int = column(primary_key=True)
            v: datetime = datetime(2024, 1, 1)
    with pytest.raises(ValidationError, match=r"BadS\.v holds at most 3 characters, got 7; "
                                              r"raise column\(max_length=\.\.\.\)"):
        class BadS(Model, table="bad_default_s"):
            id: int = column(primary_key=True)
            v: str = column(max_length=3, default="toolong")
    with pytest.raises(ValidationError, match=r"BadD\.v: Decimal\('1\.234'\) has 3 digits after "
                                              r"the point, .* in default=; round it"):
        class BadD(Model, table="bad_default_d"):
            id: int = column(primary_key=True)
            v: Decimal = column(precision=5, scale=2, default=Decimal("1.234"))
    with pytest.raises(ValidationError, match=r"BadL\.v expects Literal\['a', 'b'\], got str "
                                              r"'c' in default="):
        class BadL(Model, table="bad_default_l"):
            id: int = column(primary_key=True)
            v: Literal["a", "b"] = "c"  # type: ignore[assignment]  # refused at run time too

    class Fine(Model, table="fine_defaults"):
        id: int = column(primary_key=True)
        v: datetime = datetime(2024, 1, 1, tzinfo=UTC)
        d: Decimal = column(precision=5, scale=2, default=Decimal("1.50"))
        s: str = column(max_length=3, default="abc")
        n: int | None = None
    assert meta_of(Fine).column("d", "test").has_default
