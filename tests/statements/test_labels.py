"""Labels and aliases become row fields: they are plain identifiers, refused at build otherwise.

A row class holds one property per field; a field named like one of the row's special methods
once replaced it (`__getitem__` recursed until the interpreter died), so those cases run in a
child interpreter: a regression fails the test instead of killing the run.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tempest_typed import Model, ValidationError, column, join, select, sql
from tempest_typed.row import Row, row_class


class Book(Model, table="label_books"):
    id: int = column(primary_key=True)
    shelf: int = 0
    pages: int = 0


BAD = ["__getitem__", "__slots__", "__iter__", "__len__", "_index", "_fields", "_x",
       "class", "None", "not a name", "o.x", "", "1st", 7, None]


@pytest.mark.parametrize("label", BAD)
def test_an_aggregate_label_that_is_not_a_plain_identifier_is_refused_at_build(
        label: object) -> None:
    with pytest.raises(ValidationError, match=r"aggregate\(\) label .* becomes a row field"):
        select(Book).aggregate(["shelf"], {label: sql.count()})  # type: ignore[dict-item]  # the bad key is the test
    joined = join(Book, "b").inner_join(Book, "c", {"b.id": "c.id"})
    with pytest.raises(ValidationError, match=r"aggregate\(\) label"):
        joined.aggregate(["b.shelf"], {label: sql.count()})  # type: ignore[dict-item]  # the bad key is the test


@pytest.mark.parametrize("alias", BAD)
def test_a_join_alias_that_is_not_a_plain_identifier_is_refused_at_build(alias: object) -> None:
    with pytest.raises(ValidationError, match="becomes a row field"):
        join(Book, alias)  # type: ignore[arg-type]  # the bad alias is the test
    first = join(Book, "b")
    for add in (first.inner_join, first.left_join):
        with pytest.raises(ValidationError, match="becomes a row field"):
            add(Book, alias, {"b.id": f"{alias}.id"})  # type: ignore[arg-type]  # the bad alias is the test


def test_the_message_says_what_is_wrong_and_what_to_write() -> None:
    with pytest.raises(ValidationError) as caught:
        select(Book).aggregate([], {"class": sql.count()})
    assert str(caught.value) == (
        "Book: aggregate() label 'class' is a Python keyword (row.class cannot be written); a "
        "label becomes a row field (row.label): write a Python identifier, not a keyword, "
        "without a leading '_'"
    )
    with pytest.raises(ValidationError) as caught:
        join(Book, "b").left_join(Book, "_c", {"b.id": "_c.id"})
    assert str(caught.value) == (
        "join(b).left_join(): the alias '_c' starts with '_', as the row's own attributes do; "
        "an alias becomes a row field (row.alias) and qualifies columns ('alias.column'): "
        "write a Python identifier, not a keyword, without a leading '_'"
    )


def test_plain_labels_and_aliases_are_taken_even_when_they_name_a_tuple_method() -> None:
    select(Book).aggregate(["shelf"], {"count": sql.count(), "index": sql.max("pages")})
    join(Book, "count").inner_join(Book, "match", {"count.id": "match.id"})


@pytest.mark.parametrize("name", ["__getitem__", "_index"])
def test_having_and_order_by_name_only_labels_that_exist(name: str) -> None:
    grouped = select(Book).aggregate(["shelf"], {"n": sql.count()})
    with pytest.raises(ValidationError, match="the aggregate has no column"):
        grouped.having({name: {"gt": 1}})
    with pytest.raises(ValidationError, match="the aggregate has no column"):
        grouped.order_by(name)


def test_a_row_reads_fields_named_like_its_methods_and_private_names() -> None:
    cls = row_class(("count", "index", "_index", "_fields", "asdict_", "keys_"))
    row = tuple.__new__(cls, (1, 2, 3, 4, 5, 6))
    assert (row.count, row.index, row._index, row._fields) == (1, 2, 3, 4)
    assert row["_index"] == 3 and row[2] == 3
    assert row.keys() == ("count", "index", "_index", "_fields", "asdict_", "keys_")
    assert row.asdict()["_fields"] == 4
    assert list(row) == [1, 2, 3, 4, 5, 6] and len(row) == 6
    assert isinstance(row, Row)


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.mark.parametrize("name", ["__getitem__", "__iter__", "__slots__", "__len__", "__repr__"])
def test_a_row_never_takes_a_special_method_name_as_a_field(name: str) -> None:
    done = _run(f"""
        from tempest_typed import ValidationError
        from tempest_typed.row import row_class
        try:
            row_class(("a", {name!r}))
        except ValidationError as exc:
            print("refused:", exc)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"refused: a row cannot have a field named {name!r}")


def test_a_dunder_label_is_refused_before_any_row_is_read() -> None:
    # Before labels were checked, reading this row's `shelf` recursed in C (SIGSEGV).
    done = _run("""
        from tempest_typed import Model, ValidationError, column, create_engine, insert, select, sql

        class Book(Model, table="books"):
            id: int = column(primary_key=True)
            shelf: int = 0

        engine = create_engine("sqlite:///:memory:")
        engine.create_all(Book)
        engine.execute(insert(Book).values({"shelf": 1}))
        try:
            q = select(Book).aggregate(["shelf"], {"__getitem__": sql.count()})
            print(engine.execute(q).one().shelf)
        except ValidationError as exc:
            print("refused:", exc)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused: Book: aggregate() label '__getitem__' starts with")


def test_a_model_attribute_named_like_a_special_method_is_refused_when_the_model_is_defined() -> None:
    # A Row of it (a partial select, returning) would break: the model refuses it first.
    done = _run("""
        from tempest_typed import Model, ValidationError, column

        try:
            class Odd(Model, table="odd"):
                id: int = column(primary_key=True)
                __len__: int = 0
        except ValidationError as exc:
            print("refused:", exc)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused: Odd.__len__: a column's attribute cannot be a dunder")


def test_a_name_postgresql_would_cut_is_refused() -> None:
    # a label, an alias and a named select's name are SQL names: past 63 bytes PostgreSQL cut
    # them, and two alike up to there failed ("is ambiguous", "specified more than once");
    # MySQL refused a named select's name of more than 64 characters
    from tempest_typed import model, row

    from ..models import Account

    assert row._MAX_NAME_BYTES == model.MAX_IDENTIFIER_BYTES
    long = "a" * 60 + "_one"
    kept = "é" * 31 + "a"  # 63 bytes
    cut = r"is longer than the 63 bytes of a name PostgreSQL keeps"
    with pytest.raises(ValidationError, match=cut):
        select(Account, ["id"]).add_columns({long: sql.col("balance")})
    with pytest.raises(ValidationError, match=cut):
        select(Account).aggregate(["owner"], {long: sql.count()})
    with pytest.raises(ValidationError, match=cut):
        join(Account, long)
    with pytest.raises(ValidationError, match=cut):
        sql.cte(long, select(Account, ["id"]))
    select(Account, ["id"]).add_columns({kept: sql.col("balance")})
    sql.cte(kept, select(Account, ["id"]))
