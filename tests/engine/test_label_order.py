"""order_by() a label that is also the SQL name of a fetched column (a model's `name=` or
naming, a joined table's column) sorts by the label on every database: PostgreSQL refused
`ORDER BY "pts"` as ambiguous, where MySQL and SQLite sorted by the label; ORDER BY names a
label by its position."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import Model, column, insert, join, select, sql


class Player(Model, table="eng_label_order_players", naming="camelCase"):
    id: int = column(primary_key=True)
    user_name: str = "x"
    score: int = column(default=0, name="pts")


class Team(Model, table="eng_label_order_teams"):
    id: int = column(primary_key=True)
    pts: int = 0


MODELS = (Player, Team)


@pytest.mark.asyncio
async def test_a_label_named_as_a_fetched_sql_column_orders_by_the_label(db: Any) -> None:
    await db.execute(insert(Player).values([{"id": 1, "user_name": "b", "score": 5},
                                            {"id": 2, "user_name": "a", "score": 1},
                                            {"id": 3, "user_name": "c", "score": 3}]))
    await db.execute(insert(Team).values([{"id": 1, "pts": 1}, {"id": 2, "pts": 9},
                                          {"id": 3, "pts": 4}]))
    rows = (await db.execute(select(Player, ["id", "score"]).add_columns(
        {"pts": sql.col("score") * -1}).order_by("pts"))).all()
    assert [(r.id, r.pts) for r in rows] == [(1, -5), (3, -3), (2, -1)]
    rows = (await db.execute(select(Player).add_columns(
        {"userName": sql.upper("user_name")}).order_by("userName", "desc"))).all()
    assert [r.userName for r in rows] == ["C", "B", "A"]
    rows = (await db.execute(join(Player, "p").inner_join(Team, "t", {"p.id": "t.id"})
                             .add_columns({"pts": sql.col("t.pts") - sql.col("p.score")})
                             .order_by("pts").limit(2))).all()
    assert [(r.p.id, r.pts) for r in rows] == [(1, -4), (3, 1)]


@pytest.mark.asyncio
async def test_a_column_whose_sql_name_is_a_label_orders_by_the_column(db: Any) -> None:
    # ORDER BY "pts" for Player.score sorted by the label "pts" (every database when the
    # column was not fetched, MySQL and SQLite when it was; PostgreSQL: ambiguous)
    await db.execute(insert(Player).values([{"id": 1, "score": 5}, {"id": 2, "score": 1},
                                            {"id": 3, "score": 3}]))
    flipped = {"pts": sql.col("score") * -1}
    for fetched in (["id", "score"], ["id"], None):
        query = select(Player) if fetched is None else select(Player, fetched)
        rows = (await db.execute(query.add_columns(flipped).order_by("score"))).all()
        assert [r.id for r in rows] == [2, 3, 1]
    grouped = (await db.execute(select(Player).aggregate(["score"], {"pts": sql.count()})
                                .order_by("score", "desc"))).all()
    assert [(r.score, r.pts) for r in grouped] == [(5, 1), (3, 1), (1, 1)]


@pytest.mark.asyncio
async def test_a_set_operation_orders_by_the_field_it_names(db: Any) -> None:
    # the first statement's output names were "id", "pts", "pts": ORDER BY "pts" was
    # ambiguous on PostgreSQL and MySQL, and on SQLite sorted by the label for either field
    await db.execute(insert(Player).values([{"id": 1, "score": 5}, {"id": 2, "score": 1}]))
    first = select(Player, ["id", "score"]).add_columns({"pts": sql.col("score") * -1})
    both = first.union_all(select(Team, ["id", "pts", "id"]))
    await db.execute(insert(Team).values([{"id": 7, "pts": 3}]))
    rows = (await db.execute(both.order_by("score"))).all()
    assert [(r.id, r.score) for r in rows] == [(2, 1), (7, 3), (1, 5)]
    rows = (await db.execute(both.order_by("pts", "desc"))).all()
    assert [(r.id, r.pts) for r in rows] == [(7, 7), (2, -1), (1, -5)]
