"""SQL names a database would cut or merge are refused when the model is defined.

PostgreSQL keeps 63 bytes of a name (NAMEDATALEN - 1) and cuts the rest without a word: two
tables that differ after byte 63 became one table, and a long column name broke the next
create_all() with a SchemaError (the catalog held the cut name). The limit is in bytes of
UTF-8, not characters; MySQL's limit of 64 characters is never the tighter one, so one rule
covers both. A name with a NUL would cut the statement itself.
"""

from __future__ import annotations

import pytest

from tempest_typed import Index, Model, ValidationError, column
from tempest_typed.model import MAX_IDENTIFIER_BYTES, meta_of
from tempest_typed.queue import message_model

LIMIT = "63 bytes PostgreSQL keeps"


def test_the_limit_is_postgresqls_63_bytes() -> None:
    assert MAX_IDENTIFIER_BYTES == 63


def test_a_table_name_of_63_bytes_is_kept_and_one_of_64_refused() -> None:
    class Kept(Model, table="t" * 63):
        id: int = column(primary_key=True)

    assert meta_of(Kept).table == "t" * 63
    with pytest.raises(ValidationError) as info:
        class Cut(Model, table="t" * 64):
            id: int = column(primary_key=True)
    assert str(info.value) == (
        f"Cut: table=: the SQL name {'t' * 64!r} is 64 bytes of UTF-8, longer than the 63 "
        "bytes PostgreSQL keeps (it would cut the rest, and two names alike up to there would "
        "name one object); shorten it")


def test_the_limit_counts_bytes_of_utf8_not_characters() -> None:
    # 32 characters, 64 bytes: PostgreSQL would keep 31 and a half of them.
    name = "é" * 32
    with pytest.raises(ValidationError, match=f"is 64 bytes of UTF-8, longer than the {LIMIT}"):
        class Accented(Model, table=name):
            id: int = column(primary_key=True)

    class Fits(Model, table="é" * 31):  # 62 bytes
        id: int = column(primary_key=True)

    assert meta_of(Fits).table == "é" * 31


def test_a_long_default_table_name_from_the_class_name_is_refused() -> None:
    with pytest.raises(ValidationError, match=LIMIT):
        class AModelWhoseClassNameMakesATableNameLongerThanPostgresqlKeepsWhole(Model):
            id: int = column(primary_key=True)


def test_column_names_from_attributes_naming_and_name_are_checked() -> None:
    long = "c" * 64
    with pytest.raises(ValidationError, match=rf"^Wide\.{long}: the SQL name .*{LIMIT}"):
        exec(f"class Wide(Model, table='wide'):\n    id: int = column(primary_key=True)\n"
             f"    {long}: int = 0", {"Model": Model, "column": column})
    with pytest.raises(ValidationError, match=rf"^Named\.short: the SQL name .*{LIMIT}"):
        class Named(Model, table="named"):
            id: int = column(primary_key=True)
            short: int = column(name="ü" * 40)
    with pytest.raises(ValidationError, match=rf"^Renamed\.x: the SQL name .*{LIMIT}"):
        class Renamed(Model, table="renamed", naming=lambda attr: attr * 70):
            id: int = column(primary_key=True, name="id")
            x: int = 0


def test_index_names_are_checked_where_the_index_is_written() -> None:
    with pytest.raises(ValidationError, match=f"^Index\\(\\): the SQL name .*{LIMIT}"):
        Index("i" * 64, ["id"])
    assert Index("i" * 63, ["id"]).name == "i" * 63


@pytest.mark.parametrize(("name", "message"), [
    ("", "an SQL name is a non-empty string, got ''"),
    (7, "an SQL name is a non-empty string, got 7"),
    ("a\x00b", "holds a NUL character"),
    ("a\ud800", "is not valid Unicode"),
])
def test_empty_non_string_nul_and_broken_names_are_refused(name: object, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        class Odd(Model, table=name):  # type: ignore[arg-type]  # the wrong types are the point
            id: int = column(primary_key=True)
    with pytest.raises(ValidationError, match=message):
        class OddColumn(Model, table="odd_column"):
            id: int = column(primary_key=True, name=name)  # type: ignore[arg-type]  # as above
    with pytest.raises(ValidationError, match=message):
        Index(name, ["id"])  # type: ignore[arg-type]  # as above


def test_the_queues_long_table_names_keep_their_hashed_index_names() -> None:
    # The queue derives its index names from the table name and hashes what would not fit.
    model = message_model("q" * 60)
    names = [index.name for index in meta_of(model).indexes]
    assert all(len(n.encode()) <= MAX_IDENTIFIER_BYTES for n in names)
    assert len(set(names)) == 3
    with pytest.raises(ValidationError, match=LIMIT):
        message_model("q" * 64)


def test_a_dunder_attribute_is_no_column() -> None:
    with pytest.raises(ValidationError, match=r"dunder name; rename the attribute"):
        class Odd(Model, table="odd_dunder"):
            id: int = column(primary_key=True)
            __len__: int = 0
    class Kept(Model, table="kept_dunder"):
        id: int = column(primary_key=True)
        length: int = column(name="__len__", default=0)
    assert [c.name for c in Kept.__tempest_meta__.columns] == ["id", "__len__"]


# -- names another model holds ----------------------------------------------------------------
# PostgreSQL and SQLite name tables and indexes in one namespace: CREATE TABLE (or INDEX) IF
# NOT EXISTS of a name an object of the other kind holds was skipped without a word, so a
# unique index could never exist. SQLite (and MySQL where it folds table names) compares
# names without case, PostgreSQL keeps a quoted name's: two spellings were one table on one
# database and two on another.

ONE_NAMESPACE = ("PostgreSQL and SQLite name tables and indexes in one namespace, where "
                 "CREATE ... IF NOT EXISTS would skip one of the two without a word")


def test_an_index_named_like_another_models_table_is_refused() -> None:
    class Owner(Model, table="ident_owners"):
        id: int = column(primary_key=True)

    with pytest.raises(ValidationError) as info:
        class Shadow(Model, table="ident_shadows"):
            id: int = column(primary_key=True)
            n: int = 0
            __indexes__ = (Index("Ident_Owners", ["n"]),)
    assert str(info.value) == (
        "Shadow Index 'Ident_Owners': the name is the table of Owner ('ident_owners'), and "
        f"{ONE_NAMESPACE}; give the index another name")
    assert meta_of(Owner).table == "ident_owners"


def test_a_table_named_like_another_models_index_is_refused() -> None:
    class Indexed(Model, table="ident_indexed"):
        id: int = column(primary_key=True)
        n: int = 0
        __indexes__ = (Index("ident_indexed_n", ["n"], unique=True),)

    with pytest.raises(ValidationError) as info:
        class Late(Model, table="IDENT_INDEXED_N"):
            id: int = column(primary_key=True)
    assert str(info.value) == (
        "Late: table='IDENT_INDEXED_N' is the name of Indexed Index 'ident_indexed_n' (table "
        f"'ident_indexed'), and {ONE_NAMESPACE}; give the table or the index another name")
    assert [i.name for i in meta_of(Indexed).indexes] == ["ident_indexed_n"]


def test_two_tables_whose_names_differ_only_in_case_are_refused() -> None:
    class Lower(Model, table="ident_people"):
        id: int = column(primary_key=True)

    with pytest.raises(ValidationError) as info:
        class Upper(Model, table="Ident_People"):
            id: int = column(primary_key=True)
    assert str(info.value).startswith(
        "Upper: table='Ident_People' differs only in case from Lower's table 'ident_people': "
        "SQLite (and MySQL where it folds table names) takes the two for one table, "
        "PostgreSQL for two")
    assert str(info.value).endswith("spell both alike, or give one of them a name of its own")
    assert meta_of(Lower).table == "ident_people"


def test_two_columns_whose_names_differ_only_in_case_are_refused() -> None:
    with pytest.raises(ValidationError) as info:
        class Cased(Model, table="ident_cased"):
            id: int = column(primary_key=True)
            label: str = column(name="Label")
            other: str = column(name="LABEL")
    assert str(info.value) == (
        "Cased.other: SQL name 'LABEL' differs only in case from 'Label', the SQL name of "
        "'label' (SQLite and MySQL compare column names without case: one column to them); "
        "give one of them column(name=...)")
    with pytest.raises(ValidationError, match=r"^Twice\.b: SQL name 'a' is already used by "
                                              r"'a'; give one of them column\(name=\.\.\.\)$"):
        class Twice(Model, table="ident_twice"):
            a: int = column(primary_key=True)
            b: int = column(name="a")


def test_models_of_one_table_share_its_name_and_its_indexes_names() -> None:
    # Releases of one model, and the queue's message models, are several models of a table.
    def release(extra: bool) -> type[Model]:
        class Release(Model, table="ident_releases"):
            id: int = column(primary_key=True)
            n: int = 0
            __indexes__ = (Index("ident_releases_n", ["n"]),)

        if not extra:
            return Release

        class Wider(Release, table="ident_releases"):
            m: int = 0

        return Wider

    first, second = release(False), release(True)
    assert meta_of(first).table == meta_of(second).table == "ident_releases"
    assert [i.name for i in meta_of(second).indexes] == ["ident_releases_n"]


def test_a_model_gone_since_holds_no_name() -> None:
    def define(table: str, index: str) -> None:
        class Gone(Model, table=table):
            id: int = column(primary_key=True)
            n: int = 0
            __indexes__ = (Index(index, ["n"]),)

    define("ident_gone", "ident_gone_n")
    # Only a live model counts: the one above went with the function's frame.
    class Taker(Model, table="ident_gone_n"):
        id: int = column(primary_key=True)
        __indexes__ = (Index("ident_gone", ["id"]),)

    assert meta_of(Taker).table == "ident_gone_n"
