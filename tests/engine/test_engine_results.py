"""Result methods, and what a row is: a model instance, or a Row with attribute and item access."""

from __future__ import annotations

import pytest

from tempest_typed import (
    Engine,
    Model,
    MultipleResultsError,
    NoResultError,
    Row,
    TempestError,
    column,
    delete,
    insert,
    select,
    sql,
    update,
)

from .conftest import Fresh, Item


@pytest.fixture
def three(fresh: Fresh) -> Engine:
    engine = fresh(Item)
    engine.execute(insert(Item).values([
        {"name": "a", "qty": 1}, {"name": "b", "qty": 2, "note": "x"}, {"name": "c", "qty": 3},
    ]))
    return engine


def test_all_returns_every_row_in_order(three: Engine) -> None:
    rows = three.execute(select(Item).order_by("name")).all()
    assert [r.name for r in rows] == ["a", "b", "c"]
    assert three.execute(select(Item).where({"name": "zz"})).all() == []


def test_a_whole_model_select_yields_model_instances(three: Engine) -> None:
    item = three.execute(select(Item).where({"name": "b"})).one()
    assert type(item) is Item
    assert (item.name, item.qty, item.note) == ("b", 2, "x")
    assert isinstance(item.id, int)
    assert item == Item(id=item.id, name="b", qty=2, note="x")


def test_a_partial_select_yields_rows_with_attribute_and_item_access(three: Engine) -> None:
    row = three.execute(select(Item, ["name", "qty"]).where({"name": "b"})).one()
    assert isinstance(row, Row) and isinstance(row, tuple)
    assert row.name == row["name"] == row[0] == "b"
    assert row.qty == row["qty"] == row[1] == 2
    assert row.keys() == ("name", "qty")
    assert row.asdict() == {"name": "b", "qty": 2}
    name, qty = row
    assert (name, qty) == ("b", 2)


def test_reading_a_column_a_row_did_not_fetch_says_what_it_fetched(three: Engine) -> None:
    row = three.execute(select(Item, ["name"]).where({"name": "a"})).one()
    with pytest.raises(AttributeError, match="no column 'qty'; it fetched name"):
        _ = row.qty
    with pytest.raises(KeyError, match="no column 'qty'; it fetched name"):
        _ = row["qty"]


def test_first_is_the_first_row_or_none(three: Engine) -> None:
    first = three.execute(select(Item, ["name"]).order_by("name", "desc")).first()
    assert first is not None and first.name == "c"
    assert three.execute(select(Item).where({"name": "zz"})).first() is None


def test_one_wants_exactly_one_row(three: Engine) -> None:
    assert three.execute(select(Item).where({"name": "a"})).one().qty == 1
    with pytest.raises(NoResultError):
        three.execute(select(Item).where({"name": "zz"})).one()
    with pytest.raises(MultipleResultsError, match="3 rows"):
        three.execute(select(Item)).one()


def test_one_or_none_allows_no_row_but_not_several(three: Engine) -> None:
    assert three.execute(select(Item).where({"name": "zz"})).one_or_none() is None
    found = three.execute(select(Item).where({"name": "c"})).one_or_none()
    assert found is not None and found.qty == 3
    with pytest.raises(MultipleResultsError):
        three.execute(select(Item)).one_or_none()


def test_scalar_is_the_first_column_of_the_only_row(three: Engine) -> None:
    assert three.execute(select(Item, ["qty"]).where({"name": "b"})).scalar() == 2
    item_id = three.execute(select(Item).where({"name": "b"})).scalar()
    assert isinstance(item_id, int)  # a model's first column
    # the error names the call that was made (it said one(), which the caller never wrote),
    # and what reads such rows
    with pytest.raises(NoResultError, match=r"(?s)^scalar\(\) found no row.*first\(\) or one_or_none"):
        three.execute(select(Item, ["qty"]).where({"name": "zz"})).scalar()
    with pytest.raises(MultipleResultsError, match=r"(?s)^scalar\(\) found 3 rows.*scalars\(\)"):
        three.execute(select(Item, ["qty"])).scalar()


def test_scalars_is_the_first_column_of_every_row(three: Engine) -> None:
    assert three.execute(select(Item, ["qty", "name"]).order_by("qty")).scalars() == [1, 2, 3]
    assert three.execute(select(Item, ["note"]).order_by("qty")).scalars() == [None, "x", None]


def test_rows_affected_counts_matched_rows(three: Engine) -> None:
    engine = three
    assert engine.execute(insert(Item).values({"name": "d"})).rows_affected() == 1
    # Setting a value a row already has still counts it (MySQL is asked for matched rows).
    assert engine.execute(update(Item).set({"qty": 1}).where({"qty": {"lte": 2}})
                          ).rows_affected() == 3
    assert engine.execute(update(Item).set({"qty": sql.raw("qty + 1")})
                          .where({"name": "zz"})).rows_affected() == 0
    assert engine.execute(delete(Item).where({"name": {"in": ["a", "b"]}})).rows_affected() == 2
    assert engine.execute(select(Item)).rows_affected() == 2


def test_a_statement_without_rows_says_how_to_fetch_them(three: Engine) -> None:
    result = three.execute(update(Item).set({"qty": 0}).where({"name": "a"}))
    with pytest.raises(TempestError, match=r"returning\(\.\.\.\)"):
        result.all()


def test_returning_everything_yields_model_instances(three: Engine) -> None:
    engine = three
    inserted = engine.execute(insert(Item).values({"name": "d", "qty": 4}).returning()).one()
    assert type(inserted) is Item and inserted.name == "d" and isinstance(inserted.id, int)
    if engine.dialect.name != "mariadb":
        updated = engine.execute(update(Item).set({"qty": 5}).where({"name": "d"})
                                 .returning()).all()
        assert [(i.name, i.qty) for i in updated] == [("d", 5)]
    deleted = engine.execute(delete(Item).where({"name": "d"}).returning()).all()
    assert [type(i) for i in deleted] == [Item] and deleted[0].id == inserted.id


def test_returning_some_columns_yields_rows(three: Engine) -> None:
    engine = three
    rows = engine.execute(insert(Item).values([{"name": "d"}, {"name": "e"}])
                          .returning("id", "name")).all()
    assert sorted(r.name for r in rows) == ["d", "e"]
    assert all(r["id"] == r.id and isinstance(r.id, int) for r in rows)
    gone = engine.execute(delete(Item).where({"name": "e"}).returning("name")).scalars()
    assert gone == ["e"]


def test_a_result_is_iterable_and_has_a_length(three: Engine) -> None:
    result = three.execute(select(Item, ["name"]).order_by("name"))
    assert len(result) == 3
    assert [r.name for r in result] == ["a", "b", "c"]


def test_rows_of_one_statement_shape_share_one_row_builder(three: Engine) -> None:
    engine = three
    stmt = select(Item, ["name"]).where({"qty": {"gte": 1}})
    first = engine.execute(stmt).all()
    prepared = engine._prepared_for(stmt)
    again = engine.execute(select(Item, ["name"]).where({"qty": {"gte": 2}})).all()
    assert engine._prepared_for(select(Item, ["name"]).where({"qty": {"gte": 3}})) is prepared
    assert type(first[0]) is type(again[0])


def test_hand_written_sql_without_parameters_may_contain_a_percent_sign(three: Engine) -> None:
    q = three.dialect.quote
    found = three.execute_sql(f"SELECT {q('name')} FROM {q('eng_items')} "
                              f"WHERE {q('name')} LIKE 'a%' OR {q('name')} = '100%'")
    assert found.scalars() == ["a"]


def test_returning_that_matches_nothing_is_an_empty_list(three: Engine) -> None:
    assert three.execute(delete(Item).where({"name": "zz"}).returning()).all() == []
    assert three.execute(delete(Item).where({"name": "zz"}).returning("id")).scalars() == []


class Guarded(Model, table="res_guarded"):
    """A model whose class runs code on every attribute store."""

    id: int = column(primary_key=True)
    name: str

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{name} is read-only")


def test_rows_are_made_in_the_fetched_list_and_without_the_models_own_setattr() -> None:
    from tempest_typed.engine.result import row_builder

    meta = Guarded.__tempest_meta__
    build = row_builder(meta, {})
    assert build is not None
    fetched = [(1, "a"), (2, "b")]
    rows = build(fetched)
    assert rows is fetched  # made in place: no second list of the whole result
    assert [(r.id, r.name) for r in rows] == [(1, "a"), (2, "b")]
    assert [(r.id, r.name) for r in build(((3, "c"),))] == [(3, "c")]  # a tuple of rows too
