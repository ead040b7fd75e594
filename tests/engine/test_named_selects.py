"""A named select never hides a table: one named like a model's table is refused.

A recursive named select gives the same rows on every database: the step's columns are
matched to the base's by name, the base's text holds the step's longer values, a base with
its own limit is written so that every database takes it, and a step that could run forever
or change the rows' types is refused while the statement is built."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from tempest_typed import Model, ValidationError, column, insert, join, select, sql


class Node(Model, table="eng_nodes"):
    id: int = column(primary_key=True)
    parent_id: int | None = None
    name: str = column(max_length=5)
    title: str = column(max_length=100, default="")
    weight: float = 0.0
    price: Decimal = column(default=Decimal("0.00"), precision=5, scale=2)


MODELS = (Node,)

ROWS = [
    {"id": 1, "parent_id": None, "name": "root", "title": "r", "weight": 1.5,
     "price": Decimal("600.00")},
    {"id": 2, "parent_id": 1, "name": "child", "title": "a title longer than five",
     "weight": 0.5},
    {"id": 3, "parent_id": 2, "name": "leaf", "title": "ünïcode leaf"},
]


def _down(t: Any) -> Any:
    return join(Node, "n").inner_join(t, "t", {"n.parent_id": "t.id"})


@pytest.mark.asyncio
async def test_the_step_s_columns_are_matched_by_name(db: Any) -> None:
    await db.execute(insert(Node).values(ROWS))
    base = select(Node, ["id", "name"]).where({"id": 1}).add_columns({"depth": sql.value(0)})
    tree = sql.recursive_cte("tree", base, lambda t: _down(t).project(
        {"depth": sql.col("t.depth") + 1, "name": "n.name", "id": "n.id"}))
    rows = (await db.execute(select(tree).order_by("id"))).all()
    assert [tuple(r) for r in rows] == [(1, "root", 0), (2, "child", 1), (3, "leaf", 2)]


@pytest.mark.asyncio
async def test_the_base_s_text_and_decimals_hold_the_step_s_values(db: Any) -> None:
    await db.execute(insert(Node).values(ROWS))
    # the base's name is VARCHAR(5), its label a one-letter value: the step's longer titles
    # were refused (PostgreSQL: another type and collation; MariaDB: "Data too long")
    base = select(Node, ["id", "name"]).where({"id": 1}).add_columns({"label": sql.value("r")})
    tree = sql.recursive_cte("tree", base, lambda t: _down(t).project(
        {"id": "n.id", "name": "n.title", "label": "n.title"}))
    rows = (await db.execute(select(tree).order_by("id"))).all()
    assert [tuple(r) for r in rows] == [
        (1, "root", "r"), (2, "a title longer than five", "a title longer than five"),
        (3, "ünïcode leaf", "ünïcode leaf")]
    # the text keeps the columns' byte-order comparisons
    found = (await db.execute(select(tree, ["id"]).where({"name": "ROOT"}))).all()
    assert found == []
    if db.dialect.name == "sqlite":
        return  # no arithmetic on a Decimal there (stored as text)
    # a NUMERIC(5, 2) base column holds the step's larger values
    priced = sql.recursive_cte(
        "priced", select(Node, ["id", "price"]).where({"id": 1}),
        lambda t: _down(t).project({"id": "n.id", "price": sql.col("t.price") * 2}))
    rows = (await db.execute(select(priced).order_by("id"))).all()
    assert [tuple(r) for r in rows] == [
        (1, Decimal("600.00")), (2, Decimal("1200.00")), (3, Decimal("2400.00"))]


@pytest.mark.asyncio
async def test_a_base_with_its_own_order_and_limit(db: Any) -> None:
    await db.execute(insert(Node).values(ROWS))
    base = select(Node, ["id"]).order_by("id").limit(1).add_columns({"depth": sql.value(0)})
    tree = sql.recursive_cte("tree", base, lambda t: _down(t).project(
        {"id": "n.id", "depth": sql.col("t.depth") + 1}))
    rows = (await db.execute(select(tree).order_by("id"))).all()
    assert [tuple(r) for r in rows] == [(1, 0), (2, 1), (3, 2)]


def test_steps_that_cannot_be_run_are_refused() -> None:
    base = select(Node, ["id", "name"]).where({"id": 1}).add_columns({"depth": sql.value(0)})
    with pytest.raises(ValidationError, match=r"matched to the base's by name; the base has id, "
                                              r"name, depth, the step id, title, depth"):
        sql.recursive_cte("tree", base, lambda t: _down(t).project(
            {"id": "n.id", "title": "n.title", "depth": sql.col("t.depth") + 1}))
    with pytest.raises(ValidationError, match=r"does not read the table being defined.*without "
                                              r"end: join the table step\(\) is given"):
        sql.recursive_cte("tree", base, lambda t: select(Node, ["id", "name"]).add_columns(
            {"depth": sql.value(1)}))
    with pytest.raises(ValidationError, match=r"left-joins the table being defined"):
        sql.recursive_cte("tree", base, lambda t: join(Node, "n").left_join(
            t, "t", {"n.parent_id": "t.id"}).project(
                {"id": "n.id", "name": "n.name", "depth": sql.value(1)}))
    with pytest.raises(ValidationError, match=r"the step takes no order_by\(\), limit\(\)"):
        sql.recursive_cte("tree", base, lambda t: _down(t).project(
            {"id": "n.id", "name": "n.name", "depth": sql.value(1)}).limit(1))
    with pytest.raises(ValidationError, match=r"the step cannot aggregate\(\)"):
        sql.recursive_cte("tree", base, lambda t: _down(t).aggregate(
            ["n.id", "n.name"], {"depth": sql.count()}))
    weighed = select(Node, ["id"]).where({"id": 1}).add_columns({"w": sql.value(0)})
    with pytest.raises(ValidationError, match=r"column 'w' is int in the base but float in the "
                                              r"step; the rows are typed by the base, so make "
                                              r"the base's column a float"):
        sql.recursive_cte("tree", weighed, lambda t: _down(t).project(
            {"id": "n.id", "w": sql.col("t.w") + sql.col("n.weight")}))


@pytest.mark.asyncio
async def test_a_named_select_is_never_named_like_a_table(db: Any) -> None:
    await db.execute(insert(Node).values(ROWS))
    # named "eng_nodes", it hid the table: the union read it twice (PostgreSQL, MariaDB),
    # or SQLite refused a circular reference
    for name in ("eng_nodes", "ENG_Nodes"):
        with pytest.raises(ValidationError, match=r"is the table of the model Node; the named "
                                                  r"select would hide that table.*give it a "
                                                  r"name no table has"):
            sql.cte(name, select(Node, ["id"]).where({"id": 1}))
    first = sql.cte("first_node", select(Node, ["id"]).where({"id": 1}))
    rows = (await db.execute(select(first).union_all(select(Node, ["id"])))).all()
    assert sorted(r.id for r in rows) == [1, 1, 2, 3]


@pytest.mark.asyncio
async def test_a_named_select_with_values_joined_under_two_aliases(db: Any) -> None:
    await db.execute(insert(Node).values(ROWS))
    # its WITH is written once, its bound value once: the statement carried it per alias and
    # both went to the driver ("the query has 1 placeholders but 2 parameters were passed")
    heavy = sql.cte("heavy", select(Node, ["id", "parent_id"]).where({"weight": {"gt": 0.1}}))
    pairs = (join(heavy, "a").inner_join(heavy, "b", {"a.id": "b.parent_id"})
             .project({"up": "a.id", "down": "b.id"}))
    assert [tuple(r) for r in (await db.execute(pairs)).all()] == [(1, 2)]


@pytest.mark.asyncio
async def test_a_named_select_s_computed_column_under_a_label(db: Any) -> None:
    await db.execute(insert(Node).values(ROWS))
    # SUM of an int column is a numeric on PostgreSQL and MariaDB: read back as an int when
    # selected as it is, it came back a Decimal under a label (a join's project(),
    # add_columns())
    sums = sql.cte("sums", select(Node).aggregate(["name"], {"total": sql.sum("id"),
                                                             "mean": sql.avg("id")}))
    projected = (await db.execute(join(sums, "s").project({"n": "s.name", "t": "s.total",
                                                           "m": "s.mean"})
                                  .order_by("n"))).all()
    added = (await db.execute(select(sums, ["name"]).add_columns({"t": sql.col("total")})
                              .order_by("name"))).all()
    assert [tuple(r) for r in projected] == [("child", 2, 2.0), ("leaf", 3, 3.0),
                                             ("root", 1, 1.0)]
    assert [type(r.t) for r in projected] == [int, int, int]
    assert [type(r.m) for r in projected] == [float, float, float]
    assert [(r.name, r.t, type(r.t)) for r in added] == [
        ("child", 2, int), ("leaf", 3, int), ("root", 1, int)]


@pytest.mark.asyncio
async def test_a_recursive_select_that_reads_another_named_select(db: Any) -> None:
    await db.execute(insert(Node).values(ROWS))
    # the named select its base and step read went in a WITH inside each member of the
    # UNION ALL, which no database parses; it is written beside the recursive one
    light = sql.cte("light", select(Node, ["id", "parent_id", "name"])
                    .where({"weight": {"lt": 5.0}}))
    base = select(light, ["id", "name"]).where({"id": 1}).add_columns({"depth": sql.value(0)})
    tree = sql.recursive_cte("tree", base, lambda t: join(light, "n").inner_join(
        t, "t", {"n.parent_id": "t.id"}).project(
        {"id": "n.id", "name": "n.name", "depth": sql.col("t.depth") + 1}))
    rows = (await db.execute(select(tree).order_by("id"))).all()
    assert [tuple(r) for r in rows] == [(1, "root", 0), (2, "child", 1), (3, "leaf", 2)]
    both = (await db.execute(join(tree, "t").inner_join(light, "l", {"t.id": "l.id"})
                             .project({"id": "t.id", "p": "l.parent_id"}).order_by("id"))).all()
    assert [tuple(r) for r in both] == [(1, None), (2, 1), (3, 2)]
    other = sql.cte("light", select(Node, ["id", "parent_id", "name"])
                    .where({"weight": {"lt": 1.0}}))
    with pytest.raises(ValidationError, match="two different selects are named 'light'"):
        sql.recursive_cte("tree", base, lambda t: join(other, "n").inner_join(
            t, "t", {"n.parent_id": "t.id"}).project(
            {"id": "n.id", "name": "n.name", "depth": sql.col("t.depth") + 1}))
    with pytest.raises(ValidationError, match="two different selects are named 'light'"):
        join(tree, "t").inner_join(other, "l", {"t.id": "l.id"})
