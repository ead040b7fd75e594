"""Models declared `slots=True` (instances without a `__dict__`, what a large `all()` keeps
lean) read, write, join and stream as any model does, on both engines and the three
databases (the `db` fixture)."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import Model, column, insert, join, select, update

pytestmark = pytest.mark.asyncio


class Team(Model, table="eng_slot_teams", slots=True):
    id: int = column(primary_key=True)
    name: str = column(max_length=50, unique=True)


class Player(Model, table="eng_slot_players", slots=True):
    id: int = column(primary_key=True)
    team_id: int = column(references="eng_slot_teams.id")
    name: str
    goals: int = 0
    note: str | None = None


MODELS = (Team, Player)


async def seed(db: Any, players: int = 30) -> None:
    await db.execute(insert(Team).values([Team(name="red"), Team(name="blue")]))
    teams = {t.name: t.id for t in (await db.execute(select(Team))).all()}
    await db.execute(insert(Player).values([
        Player(team_id=teams["red" if n % 2 else "blue"], name=f"p{n:02}", goals=n)
        for n in range(players)]))


async def test_rows_are_slotted_instances(db: Any) -> None:
    await seed(db)
    rows = (await db.execute(select(Player).order_by("name"))).all()
    assert [(r.name, r.goals, r.note) for r in rows[:2]] == [("p00", 0, None), ("p01", 1, None)]
    assert len(rows) == 30 and all(type(r) is Player for r in rows)
    assert not hasattr(rows[0], "__dict__")
    first = (await db.execute(select(Player).where({"name": "p07"}))).first()
    assert first is not None and first.goals == 7
    first.goals = 70  # a slot is written as an attribute is
    assert first.goals == 70


async def test_returning_and_updates_give_slotted_instances(db: Any) -> None:
    if db.dialect.name in ("mysql", "mariadb"):
        pytest.skip("MySQL and MariaDB have no UPDATE ... RETURNING")
    await seed(db, players=4)
    changed = (await db.execute(
        update(Player).set({"note": "star"}).where({"goals": {"gte": 2}}).returning())).all()
    assert sorted(p.name for p in changed) == ["p02", "p03"]
    assert all(p.note == "star" and not hasattr(p, "__dict__") for p in changed)
    added = (await db.execute(insert(Player).values(
        Player(team_id=changed[0].team_id, name="new")).returning())).all()
    assert [(p.name, p.goals, p.note) for p in added] == [("new", 0, None)]
    assert isinstance(added[0].id, int)


async def test_a_join_fills_two_slotted_models_per_row(db: Any) -> None:
    await seed(db, players=6)
    rows = (await db.execute(
        join(Player, "p").inner_join(Team, "t", {"p.team_id": "t.id"})
        .where({"t.name": "red"}).order_by("p.name"))).all()
    assert [(r.p.name, r.t.name) for r in rows] == [("p01", "red"), ("p03", "red"),
                                                   ("p05", "red")]
    assert all(type(r.p) is Player and type(r.t) is Team for r in rows)


async def test_many_rows_written_and_read_back_whole(db: Any) -> None:
    # enough rows for the bulk paths (COPY on PostgreSQL, chunked inserts elsewhere)
    await seed(db, players=2_500)
    rows = (await db.execute(select(Player).order_by("goals"))).all()
    assert [r.goals for r in rows] == list(range(2_500))
    assert [r.name for r in rows[-2:]] == ["p2498", "p2499"]
