"""Rows that give no column are rows of defaults, in each dialect's spelling."""

from __future__ import annotations

from datetime import datetime

import pytest

from tempest_typed import DialectError, Model, ValidationError, column, insert, select, sql


class Stamp(Model, table="stamps"):
    id: int = column(primary_key=True)
    created: datetime = column(server_default=sql.now())


class Coded(Model, table="coded"):
    code: str = column(primary_key=True, server_default=sql.raw("'x'"))


class Named(Model, table="named"):
    id: int = column(primary_key=True)
    name: str


def test_one_row_of_defaults() -> None:
    for stmt in (insert(Stamp).values({}), insert(Stamp).values(Stamp())):
        assert stmt.compile("postgresql").sql == 'INSERT INTO "stamps" DEFAULT VALUES'
        assert stmt.compile("sqlite").sql == 'INSERT INTO "stamps" DEFAULT VALUES'
        assert stmt.compile("mysql").sql == "INSERT INTO `stamps` () VALUES ()"
        assert stmt.compile("postgresql").params == ()
        assert stmt.row_count == 1
    returning = insert(Stamp).values({}).returning("id")
    assert returning.compile("postgresql").sql == (
        'INSERT INTO "stamps" DEFAULT VALUES RETURNING "id"')
    assert returning.compile("mariadb").sql == (
        "INSERT INTO `stamps` () VALUES () RETURNING `id`")


def test_several_rows_of_defaults() -> None:
    stmt = insert(Stamp).values([{}, {}])
    assert stmt.row_count == 2
    assert stmt.compile("postgresql").sql == (
        'INSERT INTO "stamps" ("id") VALUES (DEFAULT), (DEFAULT)')
    # SQLite's VALUES has no DEFAULT: NULL in the rowid alias takes the next id
    assert stmt.compile("sqlite").sql == 'INSERT INTO "stamps" ("id") VALUES (NULL), (NULL)'
    assert stmt.compile("mysql").sql == "INSERT INTO `stamps` () VALUES (), ()"
    appended = insert(Stamp).values({}).values([Stamp(), {}])
    assert appended.compile("mysql").sql == "INSERT INTO `stamps` () VALUES (), (), ()"


def test_rows_of_defaults_with_a_conflict_clause() -> None:
    stmt = insert(Stamp).values({}).on_conflict_do_nothing()
    assert stmt.compile("postgresql").sql == (
        'INSERT INTO "stamps" DEFAULT VALUES ON CONFLICT DO NOTHING')
    # DEFAULT VALUES takes no ON CONFLICT on SQLite
    assert stmt.compile("sqlite").sql == (
        'INSERT INTO "stamps" ("id") VALUES (NULL) ON CONFLICT DO NOTHING')
    assert stmt.compile("mysql").sql == "INSERT IGNORE INTO `stamps` () VALUES ()"


def test_sqlite_needs_a_column_whose_null_is_its_default_for_several() -> None:
    assert insert(Coded).values({}).compile("sqlite").sql == 'INSERT INTO "coded" DEFAULT VALUES'
    assert insert(Coded).values([{}, {}]).compile("postgresql").sql == (
        'INSERT INTO "coded" ("code") VALUES (DEFAULT), (DEFAULT)')
    with pytest.raises(DialectError, match=r"insert\(Coded\)\.values\(\): several rows of "
                                           r"defaults only: .*insert the rows one at a time"):
        insert(Coded).values([{}, {}]).compile("sqlite")
    with pytest.raises(DialectError, match="a row with on_conflict"):
        insert(Coded).values({}).on_conflict_do_nothing().compile("sqlite")


def test_a_required_column_is_still_required() -> None:
    with pytest.raises(ValidationError, match=r"insert\(Named\)\.values\(\) is missing "
                                              r"required column\(s\) 'name'"):
        insert(Named).values({})
    with pytest.raises(ValidationError, match="missing required column"):
        insert(Named).values([{}, {}])


def test_rows_of_defaults_and_rows_with_values_do_not_mix() -> None:
    with pytest.raises(ValidationError, match="give every row the same columns"):
        insert(Stamp).values([{}, {"id": 3}])
    with pytest.raises(ValidationError, match="the rows already given set"):
        insert(Stamp).values({}).values({"id": 3})
    with pytest.raises(ValidationError, match="the rows already given set"):
        insert(Stamp).values({"id": 3}).values({})


def test_the_row_count_of_an_insert_from_a_select_is_known_when_it_runs() -> None:
    stmt = insert(Stamp).from_select(select(Stamp, ["created"]))
    with pytest.raises(ValidationError, match=r"read rows_affected\(\) of its result"):
        stmt.row_count  # noqa: B018
    assert insert(Stamp).row_count == 0
