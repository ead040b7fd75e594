"""Text made of bound values alone (sql.value, a CASE of them) sorts, groups and folds as the
text columns do, byte for byte, on every database: MariaDB gave it the connection's collation,
which ignores case (GROUP BY, DISTINCT and UNION merged 'b' and 'B', ORDER BY put 'a' before
'B'), and PostgreSQL the database's default one, whose upper() and lower() fold letters that
the columns' "C" collation leaves as they are."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import Model, column, insert, join, select, sql


class Word(Model, table="eng_text_values_words"):
    id: int = column(primary_key=True)
    text: str


MODELS = (Word,)

WORDS = {1: "b", 2: "B", 3: "a", 4: "_x", 5: "é", 6: "Z", 7: "b"}


def spelled() -> Any:
    """The row's word, as a CASE of bound values."""
    return sql.case(*(({"id": i}, sql.value(w)) for i, w in WORDS.items()))


@pytest.mark.asyncio
async def test_text_of_values_alone_behaves_as_a_column(db: Any) -> None:
    await db.execute(insert(Word).values([{"id": i, "text": w} for i, w in WORDS.items()]))
    in_bytes = sorted(WORDS.items(), key=lambda item: (item[1].encode(), item[0]))
    rows = (await db.execute(select(Word, ["id"]).add_columns({"w": spelled()})
                             .order_by("w").order_by("id"))).all()
    assert [(r.id, r.w) for r in rows] == in_bytes
    groups = (await db.execute(select(Word).aggregate([{"w": spelled()}], {"n": sql.count()})
                               .order_by("w"))).all()
    assert [(g.w, g.n) for g in groups] == [("B", 1), ("Z", 1), ("_x", 1), ("a", 1), ("b", 2),
                                            ("é", 1)]
    distinct = (await db.execute(select(Word, ["id"]).where({"id": {"in": [1, 2]}})
                                 .add_columns({"w": spelled(), "k": sql.value(0)})
                                 .union(select(Word, ["id"]).where({"id": 7})
                                        .add_columns({"w": sql.value("B"), "k": sql.value(0)}))
                                 .order_by("id").order_by("w"))).all()
    assert [(r.id, r.w) for r in distinct] == [(1, "b"), (2, "B"), (7, "B")]
    named = sql.cte("eng_text_values_spelled", select(Word, ["id"]).add_columns({"w": spelled()}))
    least = (await db.execute(select(named).aggregate([], {"lo": sql.min("w"),
                                                           "hi": sql.max("w")}))).one()
    assert (least.lo, least.hi) == ("B", "é")
    # upper()/lower() of a value fold what they fold of a column holding it
    folded = (await db.execute(select(Word, ["id"]).where({"id": 5}).add_columns({
        "col_up": sql.upper("text"), "val_up": sql.upper(sql.value("é")),
        "col_low": sql.lower(sql.upper("text")), "val_low": sql.lower(sql.value("É")),
    }))).one()
    assert folded.val_up == folded.col_up
    assert folded.val_low == ("é" if folded.col_up == "É" else "É")


@pytest.mark.asyncio
async def test_a_named_select_of_values_is_looked_up_exactly(db: Any) -> None:
    # MariaDB matched 'b' = 'B' and 'b' = 'b ' there (its connection collation pads spaces)
    await db.execute(insert(Word).values([{"id": i, "text": w} for i, w in WORDS.items()]))
    named = sql.cte("eng_text_values_named", select(Word, ["id"]).add_columns({
        "w": sql.case(({"id": 2}, sql.value("b ")), ({"id": 3}, sql.value("B")),
                      else_=sql.value("b"))}))
    for condition in ({"w": "b"}, {"w": {"in": ["b", "x"]}}, {"w": {"like": "b"}}):
        rows = (await db.execute(select(named, ["id"]).where(condition).order_by("id"))).all()
        assert [r.id for r in rows] == [1, 4, 5, 6, 7]
    pairs = (await db.execute(join(Word, "word").inner_join(named, "n", {"word.text": "n.w"})
                              .order_by("word.id").order_by("n.id"))).all()
    assert {(r.word.id, r.n.id) for r in pairs} == {(i, j) for i in (1, 7)
                                                    for j in (1, 4, 5, 6, 7)} | {(2, 3)}
