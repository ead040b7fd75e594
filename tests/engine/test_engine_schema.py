"""create_all() and check_schema() compare an existing table with its model, on every database.

A table made from an older model is not silently kept: SchemaError lists every difference
(a missing or extra column, a changed type, a changed nullability) with the statement that
fixes it. Tables create_all() made compare equal. Tables are made and dropped in
foreign-key order, whatever order the models are given in.
"""

from __future__ import annotations

import sqlite3
import sys
from datetime import datetime
from decimal import Decimal
from typing import Literal
from uuid import UUID, uuid4

import pytest

from tempest_typed import (
    Engine,
    Model,
    QueryExecutionError,
    SchemaError,
    TempestError,
    column,
    insert,
    select,
    sql,
)
from tempest_typed.engine.schema import dependency_order

from .conftest import Child, Claim, Fresh, Item, Outbound, Parent, Typed


class Contact(Model, table="eng_contacts"):
    """The table as an app's first release made it."""

    id: int = column(primary_key=True)
    name: str
    email: str = column(max_length=200)
    age: int | None = None


class ContactV2(Model, table="eng_contacts"):
    """The next release's model: one column more, and every other kind of change."""

    id: int = column(primary_key=True)
    name: str
    email: str | None = column(default=None, max_length=200)  # now nullable
    age: float | None = None                                  # now a float
    phone: str | None = None                                  # new


class Defaults(Model, table="eng_schema_defaults"):
    """Server defaults, a unique key, a literal and a UUID key: they compare equal too."""

    id: UUID = column(primary_key=True, default_factory=uuid4)
    code: str = column(max_length=20, unique=True)
    state: Literal["a", "bb", "ccc"] = "a"
    created_at: datetime = column(server_default=sql.now())
    total: Decimal = Decimal(0)
    raw: bytes | None = None


def test_tables_create_all_made_compare_equal_to_their_models(fresh: Fresh) -> None:
    models = (Typed, Item, Outbound, Parent, Child, Claim, Defaults)
    engine = fresh(*models)
    engine.check_schema(*models)
    engine.create_all(*models)  # again: the tables exist and match, nothing to do


def test_a_model_that_gained_a_column_is_refused_instead_of_reading_its_name(
        fresh: Fresh) -> None:
    # The case: on SQLite, select() returned phone='phone' for every row.
    engine = fresh(Contact)
    engine.execute(insert(Contact).values({"name": "Ann", "email": "ann@example.com"}))
    with pytest.raises(SchemaError) as info:
        engine.create_all(ContactV2)
    phone = [d for d in info.value.differences if d.column == "phone"]
    assert [d.problem for d in phone] == ["missing column"]
    assert "ADD COLUMN" in phone[0].fix and "ContactV2.phone" in phone[0].fix
    assert "phone" in str(info.value) and "eng_contacts" in str(info.value)


def test_every_difference_is_listed_with_its_fix(fresh: Fresh) -> None:
    engine = fresh(Contact)

    class ContactV3(Model, table="eng_contacts"):
        id: int = column(primary_key=True)
        name: str | None = None   # was NOT NULL
        email: str = column(max_length=200)
        age: str | None = None    # was an int
        phone: str                # new, required

    with pytest.raises(SchemaError) as info:
        engine.check_schema(ContactV3, ContactV2)
    found = {(d.table, d.column, d.problem) for d in info.value.differences}
    assert found == {
        ("eng_contacts", "name", "changed nullability"),
        ("eng_contacts", "age", "changed type"),
        ("eng_contacts", "phone", "missing column"),
        ("eng_contacts", "email", "changed nullability"),
        ("eng_contacts", "age", "changed type"),
        ("eng_contacts", "phone", "missing column"),
    }
    assert len(info.value.differences) == 6
    required_phone = next(d for d in info.value.differences
                          if d.column == "phone" and "ContactV3" in d.fix)
    assert "NOT NULL DEFAULT" in required_phone.fix  # rows already there need a value


def test_an_extra_column_is_a_difference(fresh: Fresh) -> None:
    engine = fresh(ContactV2)
    with pytest.raises(SchemaError) as info:
        engine.check_schema(Contact)
    extra = [d for d in info.value.differences if d.problem == "extra column"]
    assert [d.column for d in extra] == ["phone"]
    assert "DROP COLUMN" in extra[0].fix


def test_the_fix_for_a_changed_type_is_the_dialects_statement(fresh: Fresh) -> None:
    engine = fresh(Contact)
    with pytest.raises(SchemaError) as info:
        engine.check_schema(ContactV2)
    age = next(d for d in info.value.differences if d.column == "age")
    expected = {"postgresql": "ALTER COLUMN", "sqlite": "rebuild the table",
                "mysql": "MODIFY COLUMN", "mariadb": "MODIFY COLUMN"}[engine.dialect.name]
    assert expected in age.fix
    if engine.dialect.name != "sqlite":
        # the fix, run, makes the table match (on SQLite the fix is a rebuild)
        engine.execute_sql(age.fix.split(";")[0])
        email = next(d for d in info.value.differences if d.column == "email")
        engine.execute_sql(email.fix.split(";")[0])
        phone = next(d for d in info.value.differences if d.column == "phone")
        engine.execute_sql(phone.fix.split(";")[0])
        engine.check_schema(ContactV2)


def test_create_all_creates_nothing_when_an_existing_table_differs(fresh: Fresh) -> None:
    engine = fresh(Contact)
    engine.drop_all(Item)
    with pytest.raises(SchemaError):
        engine.create_all(Item, ContactV2)
    with pytest.raises(SchemaError) as info:
        engine.check_schema(Item)  # create_all made no table before it refused
    assert [d.problem for d in info.value.differences] == ["missing table"]
    assert "create_all(Item)" in info.value.differences[0].fix


def test_schema_error_is_a_tempest_error(fresh: Fresh) -> None:
    engine = fresh(Contact)
    with pytest.raises(TempestError):
        engine.check_schema(ContactV2)


@pytest.mark.skipif(sys.version_info < (3, 12) or not hasattr(sqlite3, "SQLITE_DBCONFIG_DQS_DML"),
                    reason="sqlite3 can turn the double-quoted string fallback off from 3.12")
def test_sqlite_reads_an_unknown_double_quoted_name_as_an_error(sqlite_url: str) -> None:
    from tempest_typed import create_engine

    with create_engine(sqlite_url) as engine:
        engine.execute_sql("CREATE TABLE eng_dqs (id INTEGER PRIMARY KEY)")
        engine.execute_sql("INSERT INTO eng_dqs (id) VALUES (1)")
        with pytest.raises(QueryExecutionError, match="no such column"):
            engine.execute_sql('SELECT "phone" FROM eng_dqs')


# -- foreign-key order ------------------------------------------------------------------------


class Grandchild(Model, table="eng_grandchildren"):
    """References a child, which references a parent."""

    id: int = column(primary_key=True)
    child_id: int = column(references="eng_children.id")


class Tree(Model, table="eng_tree"):
    """A self-reference puts no constraint on the order."""

    id: int = column(primary_key=True)
    parent_id: int | None = column(default=None, references="eng_tree.id")


def test_models_are_ordered_parents_first_whatever_order_they_are_given_in() -> None:
    assert dependency_order([Grandchild, Child, Parent]) == [Parent, Child, Grandchild]
    assert dependency_order([Child, Item, Parent]) == [Item, Parent, Child]
    assert dependency_order([Parent, Child]) == [Parent, Child]
    assert dependency_order([Tree, Child]) == [Tree, Child]  # Child's parent is not given


def test_drop_all_drops_children_first_whatever_the_argument_order(engine: Engine) -> None:
    try:
        engine.drop_all(Grandchild, Child, Parent)
        engine.create_all(Grandchild, Child, Parent)  # parents first, or REFERENCES fails
        engine.execute(insert(Parent).values({"id": 1, "name": "p"}))
        engine.execute(insert(Child).values({"id": 1, "parent_id": 1}))
        engine.execute(insert(Grandchild).values({"id": 1, "child_id": 1}))
        engine.drop_all(Parent, Child, Grandchild)  # a parent named first
        with pytest.raises(SchemaError, match="missing table"):
            engine.check_schema(Parent)
        engine.create_all(Parent, Child, Tree)
        assert engine.execute(select(Parent)).all() == []
    finally:
        engine.drop_all(Grandchild, Child, Parent, Tree)
