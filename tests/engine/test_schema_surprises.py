"""create_all() and check_schema() say what the database would otherwise do without a word.

- An index name is one object per schema on PostgreSQL and SQLite: a second
  `CREATE INDEX IF NOT EXISTS` of the name, on another table, was skipped, so a unique index
  never existed. The models given together, the catalog, and each index once created are
  checked; an index of the name on the same table but with other columns, uniqueness or
  predicate is a difference too. MySQL names indexes per table: only the models given
  together (a portable rule) and the table's own indexes count there.
- A table's name borne by an object of another kind (an index, a view, a sequence):
  `CREATE TABLE IF NOT EXISTS` skipped the table without a word.
- `references="table.col"` naming nothing: a forward reference, or a table that is not a
  model, is checked against the models given and the catalog.
Run on both engines where the statements differ in nothing but waiting (the contract's
adapter), on the three databases.
"""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import (
    Index,
    Model,
    QueryExecutionError,
    SchemaError,
    column,
    insert,
)
from tempest_typed.model import meta_of

pytestmark = pytest.mark.asyncio


def per_schema(db: Any) -> bool:
    """True where index names are per schema (PostgreSQL, SQLite); MySQL names them per table."""
    return db.dialect.name in ("postgresql", "sqlite")


# -- index names ------------------------------------------------------------------------------


class Account(Model, table="eng_sx_accounts"):
    id: int = column(primary_key=True)
    email: str = column(max_length=100)

    __indexes__ = (Index("eng_sx_email_unique", ["email"], unique=True),)


class Invite(Model, table="eng_sx_invites"):
    """Another table whose unique index has the same name as Account's."""

    id: int = column(primary_key=True)
    email: str = column(max_length=100)

    __indexes__ = (Index("eng_sx_email_unique", ["email"], unique=True),)


class AccountByName(Model, table="eng_sx_accounts"):
    """Account's table, whose index of the same name has another column."""

    id: int = column(primary_key=True)
    email: str = column(max_length=100)
    name: str = column(max_length=100, default="")

    __indexes__ = (Index("eng_sx_email_unique", ["name"], unique=True),)


class AccountNotUnique(Model, table="eng_sx_accounts"):
    """Account's table, whose index of the same name is not unique."""

    id: int = column(primary_key=True)
    email: str = column(max_length=100)

    __indexes__ = (Index("eng_sx_email_unique", ["email"]),)


async def test_two_models_given_together_with_one_index_name_create_nothing(db: Any) -> None:
    with pytest.raises(SchemaError) as info:
        await db.create_all(Account, Invite)
    (difference,) = info.value.differences
    assert (difference.table, difference.problem) == ("eng_sx_invites", "index name taken")
    assert difference.actual == ("eng_sx_email_unique is also the name of Account Index "
                                 "'eng_sx_email_unique' (table eng_sx_accounts), given in the "
                                 "same call")
    # the same on MySQL, where the two would not clash: a model set is portable or it is not
    with pytest.raises(SchemaError):
        await db.check_schema(Account, Invite)
    await db.create_all(Account)  # nothing was created: the table is made now
    await db.check_schema(Account)


async def test_an_index_of_the_name_on_another_table_is_a_schema_error(db: Any) -> None:
    await db.create_all(Account)
    if not per_schema(db):
        await db.create_all(Invite)  # per table on MySQL: the second index is made
        await db.execute(insert(Invite).values({"email": "a@x"}))
        with pytest.raises(Exception, match="Duplicate entry"):
            await db.execute(insert(Invite).values({"email": "a@x"}))
        return
    with pytest.raises(SchemaError) as info:
        await db.create_all(Invite)
    (difference,) = info.value.differences
    assert (difference.table, difference.column, difference.problem) == (
        "eng_sx_invites", None, "index name taken")
    assert difference.expected == "UNIQUE INDEX eng_sx_email_unique (email)"
    assert difference.actual == "eng_sx_email_unique is an index of the table eng_sx_accounts"
    assert "give Invite Index 'eng_sx_email_unique' another name" in difference.fix
    assert "eng_sx_invites" in str(info.value) and "eng_sx_accounts" in str(info.value)
    with pytest.raises(SchemaError, match="index name taken"):
        await db.check_schema(Invite)


@pytest.mark.parametrize(("model", "expected"), [
    (AccountByName, "UNIQUE INDEX eng_sx_email_unique (name)"),
    (AccountNotUnique, "INDEX eng_sx_email_unique (email)"),
])
async def test_an_index_of_the_name_on_the_same_table_that_differs(
        db: Any, model: type[Model], expected: str) -> None:
    await db.create_all(Account)
    if model is AccountByName:
        q = db.dialect.quote_identifier
        ddl = db.dialect.column_type(meta_of(AccountByName).by_attr["name"])
        await db.execute_sql(f"ALTER TABLE {q('eng_sx_accounts')} ADD COLUMN {q('name')} {ddl} "
                             "NOT NULL DEFAULT ''")
    for check in (db.create_all, db.check_schema):
        with pytest.raises(SchemaError) as info:
            await check(model)
        (difference,) = info.value.differences
        assert (difference.problem, difference.expected, difference.actual) == (
            "changed index", expected, "UNIQUE INDEX eng_sx_email_unique (email)")
        assert difference.fix.startswith("DROP INDEX ")


class Flagged(Model, table="eng_sx_flagged"):
    id: int = column(primary_key=True)
    n: int = 0
    s: str | None = column(default=None, max_length=20)
    flag: bool = False
    ratio: float = 0.0

    # One partial index per construct of the where language: made by create_all, each must
    # compare equal to the model afterwards (PostgreSQL prints a predicate back its own way).
    __indexes__ = (
        Index("eng_sx_eq", ["n"], where={"s": "it's"}),
        Index("eng_sx_ops", ["n"], where={"n": {"gt": 1, "lte": 9, "ne": 5}}),
        Index("eng_sx_between", ["n"], where={"n": {"between": (1, 5)}}),
        Index("eng_sx_in", ["n"], where={"n": {"in": [1, 2]}, "s": {"not_in": ["a", "b"]}}),
        Index("eng_sx_null", ["n"], where={"s": None}),
        Index("eng_sx_bool", ["n"], where={"flag": True, "ratio": {"lt": -0.5}}),
        Index("eng_sx_unique", ["s"], unique=True, where={"s": {"is_null": False}}),
    )


class FlaggedLike(Model, table="eng_sx_flagged"):
    """LIKE in a partial index: PostgreSQL only (SQLite's LIKE with case_sensitive_like on is
    not deterministic, which it refuses in an index)."""

    id: int = column(primary_key=True)
    n: int = 0
    s: str | None = column(default=None, max_length=20)
    flag: bool = False
    ratio: float = 0.0

    __indexes__ = (
        Index("eng_sx_like", ["s"], where={"s": {"like": "a%", "startswith": "a_"}}),
        Index("eng_sx_ilike", ["s"], where={"s": {"icontains": "b%"}}),
    )


class FlaggedOtherPredicate(Model, table="eng_sx_flagged"):
    id: int = column(primary_key=True)
    n: int = 0
    s: str | None = column(default=None, max_length=20)
    flag: bool = False
    ratio: float = 0.0

    __indexes__ = (Index("eng_sx_ops", ["n"], where={"n": {"gt": 2}}),)


async def test_partial_indexes_compare_equal_and_another_predicate_differs(db: Any) -> None:
    await db.create_all(Flagged)
    await db.create_all(Flagged)
    await db.check_schema(Flagged)
    if db.dialect.name == "postgresql":
        await db.create_all(FlaggedLike)
        await db.create_all(FlaggedLike)
        await db.check_schema(FlaggedLike)
    if not per_schema(db):
        await db.check_schema(FlaggedOtherPredicate)  # MySQL keeps no predicate
        return
    with pytest.raises(SchemaError) as info:
        await db.create_all(FlaggedOtherPredicate)
    (difference,) = info.value.differences
    assert difference.problem == "changed index"
    assert difference.expected == 'INDEX eng_sx_ops (n) WHERE "n" > 2'


class Keyed(Model, table="eng_sx_keyed"):
    """An index named as PostgreSQL names the table's primary key constraint."""

    id: int = column(primary_key=True)
    name: str = column(max_length=20, default="")

    __indexes__ = (Index("eng_sx_keyed_pkey", ["name"], unique=True),)


class Coded(Model, table="eng_sx_coded"):
    """An index named as MySQL names the index of a unique column."""

    id: int = column(primary_key=True)
    code: str = column(max_length=20, unique=True)
    other: str = column(max_length=20, default="")

    __indexes__ = (Index("code", ["other"]),)


async def test_a_name_the_database_gives_its_own_index_is_refused_before_creating(
        db: Any) -> None:
    # Neither exists before create_all(): PostgreSQL would make eng_sx_keyed_pkey with the
    # table and skip the CREATE INDEX IF NOT EXISTS; MySQL would make `code` for the unique
    # column and refuse the CREATE INDEX with error 1061, which create_all() takes for
    # "already done". Found before anything is created: no table is left behind.
    for model, clashes in ((Keyed, "postgresql"), (Coded, "mariadb")):
        if db.dialect.name == clashes:
            with pytest.raises(SchemaError) as info:
                await db.create_all(model)
            (difference,) = info.value.differences
            assert difference.problem == "index name taken"
            assert difference.actual.endswith(
                "made for the table's key or a unique column"), difference.actual
            with pytest.raises(QueryExecutionError):
                await db.execute_sql(f"SELECT 1 FROM {meta_of(model).table}")
        else:
            await db.create_all(model)
            await db.check_schema(model)


class Shadow(Model, table="eng_sx_shadow"):
    """An index named like a table of the database no model defines (a model's table is
    refused when the model is defined: tests/test_model_identifiers.py)."""

    id: int = column(primary_key=True)
    n: int = 0

    __indexes__ = (Index("eng_sx_plain", ["n"]),)


async def test_an_index_named_like_a_table(db: Any) -> None:
    await db.execute_sql("CREATE TABLE eng_sx_plain (x INT PRIMARY KEY)")
    try:
        if not per_schema(db):
            await db.create_all(Shadow)
            await db.check_schema(Shadow)
            return
        for check in (db.create_all, db.check_schema):
            with pytest.raises(SchemaError) as info:
                await check(Shadow)
            # check_schema() also finds the table missing
            assert [(d.problem, d.actual) for d in info.value.differences
                    if d.problem != "missing table"] == [("index name taken",
                                                          "the table eng_sx_plain")]
    finally:
        await db.execute_sql("DROP TABLE IF EXISTS eng_sx_plain")


class Taken(Model, table="eng_sx_taken"):
    """A table whose name an object of another kind, made by hand, bears."""

    id: int = column(primary_key=True)
    code: str = column(max_length=20)

    __indexes__ = (Index("eng_sx_taken_code", ["code"], unique=True),)


#: kind -> (the statements that make an object of the kind named eng_sx_taken, and drop it)
TAKERS = {
    "index": (["CREATE TABLE eng_sx_plain (x INT PRIMARY KEY)",
               "CREATE INDEX eng_sx_taken ON eng_sx_plain (x)"],
              ["DROP TABLE IF EXISTS eng_sx_plain"]),
    "view": (["CREATE VIEW eng_sx_taken AS SELECT 1 AS x"], ["DROP VIEW IF EXISTS eng_sx_taken"]),
    "sequence": (["CREATE SEQUENCE eng_sx_taken"], ["DROP SEQUENCE IF EXISTS eng_sx_taken"]),
}


@pytest.mark.parametrize("kind", list(TAKERS))
async def test_a_table_name_another_kind_of_object_bears(db: Any, kind: str) -> None:
    # CREATE TABLE IF NOT EXISTS took the object for the table and skipped it without a
    # word (a view's columns were even compared as the table's on SQLite and MySQL).
    if kind == "sequence" and db.dialect.name == "sqlite":
        pytest.skip("SQLite has no sequence")
    make, drop = TAKERS[kind]
    dropped = False
    try:
        for sql in make:
            await db.execute_sql(sql)
        if kind == "index" and not per_schema(db):
            await db.create_all(Taken)  # MySQL names indexes per table: no clash
            await db.check_schema(Taken)
            return
        for check in (db.create_all, db.check_schema):
            with pytest.raises(SchemaError, match="table name taken") as info:
                await check(Taken)
            (difference,) = info.value.differences
            assert (difference.table, difference.column, difference.problem,
                    difference.expected, difference.actual) == (
                "eng_sx_taken", None, "table name taken", "a table", f"the {kind} eng_sx_taken")
            q = db.dialect.quote_identifier
            assert difference.fix.startswith(f"DROP {kind.upper()} {q('eng_sx_taken')}, or "
                                             "give Taken another table=: tables and ")
        for sql in drop:
            await db.execute_sql(sql)
        dropped = True
        await db.create_all(Taken)  # nothing of the model was made before: it is made now
        await db.check_schema(Taken)
    finally:
        if not dropped:  # (the fixture drops the model's table)
            for sql in drop:
                await db.execute_sql(sql)


async def test_a_trigger_bears_no_table_or_index_name_on_sqlite(db: Any) -> None:
    # SQLite keeps triggers in sqlite_master beside tables and indexes, in a namespace of
    # their own: one named like an index was reported as taking the index's name.
    if db.dialect.name != "sqlite":
        pytest.skip("the trigger statement is SQLite's")
    await db.execute_sql("CREATE TABLE eng_sx_plain (x INT PRIMARY KEY)")
    try:
        for name in ("eng_sx_taken", "eng_sx_taken_code"):
            await db.execute_sql(f"CREATE TRIGGER {name} AFTER INSERT ON eng_sx_plain "
                                 "BEGIN SELECT 1; END")
        await db.create_all(Taken)
        await db.check_schema(Taken)
    finally:
        await db.execute_sql("DROP TABLE IF EXISTS eng_sx_plain")  # its triggers with it


async def test_check_schema_reports_a_missing_index(db: Any) -> None:
    await db.create_all(Account)
    q = db.dialect.quote_identifier
    on = f" ON {q('eng_sx_accounts')}" if db.dialect.name == "mariadb" else ""
    await db.execute_sql(f"DROP INDEX {q('eng_sx_email_unique')}{on}")
    with pytest.raises(SchemaError) as info:
        await db.check_schema(Account)
    (difference,) = info.value.differences
    assert (difference.problem, difference.actual) == ("missing index", "no such index")
    await db.create_all(Account)  # makes it
    await db.check_schema(Account)


# -- references -------------------------------------------------------------------------------


class Comment(Model, table="eng_sx_comments"):
    """Defined before the model it references: checked by create_all()."""

    id: int = column(primary_key=True)
    article_id: int = column(references="eng_sx_articles.id")


class CommentOnTitle(Model, table="eng_sx_comments"):
    id: int = column(primary_key=True)
    article_id: int = column(references="eng_sx_articles.title")


class Article(Model, table="eng_sx_articles"):
    id: int = column(primary_key=True)
    title: str


class Legacy(Model, table="eng_sx_legacy_links"):
    """References a table no model defines."""

    id: int = column(primary_key=True)
    code: str = column(max_length=10, references="eng_sx_legacy.code")


class LegacyMistyped(Model, table="eng_sx_legacy_links"):
    id: int = column(primary_key=True)
    code: str = column(max_length=10, references="eng_sx_legacy.kode")


async def test_a_forward_reference_is_checked_against_the_models_given(db: Any) -> None:
    with pytest.raises(SchemaError) as info:
        await db.create_all(Comment)
    (difference,) = info.value.differences
    assert (difference.table, difference.column, difference.problem, difference.expected,
            difference.actual) == ("eng_sx_comments", "article_id", "unknown reference",
                                   "eng_sx_articles.id", "no table eng_sx_articles")
    assert "give create_all() the model of eng_sx_articles too" in difference.fix
    with pytest.raises(SchemaError) as info:
        await db.create_all(CommentOnTitle, Article)
    (difference,) = info.value.differences
    assert difference.actual.startswith("Article.title is str and CommentOnTitle.article_id is "
                                        "int")
    await db.create_all(Comment, Article)
    await db.drop_all(Comment)
    await db.create_all(Comment)  # the table exists now: the catalog has it


async def test_a_reference_to_a_table_that_is_not_a_model(db: Any) -> None:
    q = db.dialect.quote_identifier
    try:
        ddl = db.dialect.column_type(meta_of(Legacy).by_attr["code"])  # MySQL: one collation
        await db.execute_sql(f"CREATE TABLE {q('eng_sx_legacy')} ({q('code')} {ddl} PRIMARY KEY)")
        with pytest.raises(SchemaError) as info:
            await db.create_all(LegacyMistyped)
        (difference,) = info.value.differences
        assert difference.actual == "eng_sx_legacy has no column kode (its columns: code)"
        await db.create_all(Legacy)
        await db.check_schema(Legacy)
    finally:
        await db.drop_all(Legacy)
        await db.execute_sql(f"DROP TABLE IF EXISTS {q('eng_sx_legacy')}")


ALL = (Account, Invite, Flagged, Keyed, Coded, Shadow, Taken, Comment, Article, Legacy)
#: the `db` fixture drops these before and after each test, and creates none
MODELS, CREATE_MODELS = ALL, False
