"""String columns compare the same way on every database: by code point, case and trailing
spaces significant (PostgreSQL COLLATE "C", MySQL/MariaDB binary no-pad, SQLite BINARY)."""

from __future__ import annotations

import pytest

from tempest_typed import Engine, Index, Model, column, insert, select

from .conftest import Fresh

WORDS = ["a", "A", "a ", "aa", "b", "B", "e", "é", "É", "ß", "ss", "", "_", "z"]


class Word(Model, table="eng_words"):
    """The same text in a bounded (VARCHAR) column and an unbounded (TEXT) one."""

    id: int = column(primary_key=True)
    short: str = column(max_length=20)
    long: str

    __indexes__ = (Index("eng_words_short", ["short"], unique=True),)


@pytest.fixture
def words(fresh: Fresh) -> Engine:
    engine = fresh(Word)
    engine.execute(insert(Word).values([
        {"id": i, "short": w, "long": w} for i, w in enumerate(WORDS)]))
    return engine


def found(engine: Engine, column: str, condition: object) -> list[str]:
    return sorted(engine.execute(select(Word, [column]).where({column: condition})).scalars())


@pytest.mark.parametrize("column", ["short", "long"])
def test_equality_is_case_sensitive_and_trailing_spaces_count(words: Engine,
                                                              column: str) -> None:
    assert found(words, column, "a") == ["a"]
    assert found(words, column, "A") == ["A"]
    assert found(words, column, "a ") == ["a "]
    assert found(words, column, "é") == ["é"]
    assert found(words, column, "ss") == ["ss"]  # not ß
    assert found(words, column, {"in": ["b", "B "]}) == ["b"]


def test_a_unique_index_tells_case_and_trailing_spaces_apart(words: Engine) -> None:
    # 'a', 'A' and 'a ' all went into the unique index above without a conflict.
    assert len(found(words, "short", {"in": ["a", "A", "a "]})) == 3


@pytest.mark.parametrize("column", ["short", "long"])
def test_order_is_code_point_order(words: Engine, column: str) -> None:
    ordered = words.execute(select(Word, [column]).order_by(column)).scalars()
    assert ordered == sorted(WORDS)


@pytest.mark.parametrize("column", ["short", "long"])
def test_like_is_case_sensitive_and_ilike_folds_ascii_case(words: Engine, column: str) -> None:
    assert found(words, column, {"like": "a%"}) == ["a", "a ", "aa"]
    assert found(words, column, {"ilike": "a"}) == ["A", "a"]
    assert found(words, column, {"ilike": "B%"}) == ["B", "b"]
    assert found(words, column, {"like": "\\_"}) == ["_"]  # an escaped wildcard


@pytest.mark.parametrize("column", ["short", "long"])
def test_ilike_folds_non_ascii_case_on_mariadb_only(words: Engine, column: str) -> None:
    # The one remaining difference: LOWER() on MySQL/MariaDB folds every letter, while
    # PostgreSQL's "C" collation and SQLite's lower() fold ASCII letters only.
    folds = words.dialect.name in ("mysql", "mariadb")
    assert found(words, column, {"ilike": "é"}) == (["É", "é"] if folds else ["é"])
