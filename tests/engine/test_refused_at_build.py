"""Statements a builder refuses while they are built, checked against the databases: what
is refused never reaches one (the rows stay as they were), and the way out the message
names runs on every database."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import (
    Model,
    ValidationError,
    and_,
    column,
    delete,
    insert,
    not_,
    or_,
    select,
    update,
)


class Gadget(Model, table="eng_gadgets"):
    id: int = column(primary_key=True)
    name: str
    kind: str = "plain"
    doc: dict[str, object] | None = None


MODELS = (Gadget,)


async def _three(db: Any) -> None:
    await db.execute(insert(Gadget).values([
        {"id": 1, "name": "a", "kind": "x"}, {"id": 2, "name": "b", "kind": "y"},
        {"id": 3, "name": "c", "kind": "x", "doc": {"k": 1}}]))


@pytest.mark.asyncio
async def test_an_empty_and_never_reaches_the_database(db: Any) -> None:
    await _three(db)
    for build in (lambda: delete(Gadget).where(and_()),
                  lambda: update(Gadget).set({"kind": "z"}).where(and_()),
                  lambda: delete(Gadget).where(or_({"id": 1}, and_())),
                  lambda: delete(Gadget).where(not_(and_()))):
        with pytest.raises(ValidationError, match=r"and_\(\) needs at least one condition"):
            await db.execute(build())
    rows = (await db.execute(select(Gadget, ["id", "kind"]).order_by("id"))).all()
    assert [(r.id, r.kind) for r in rows] == [(1, "x"), (2, "y"), (3, "x")]


@pytest.mark.asyncio
async def test_a_json_column_is_refused_where_it_would_be_compared(db: Any) -> None:
    await _three(db)
    refused = (lambda: select(Gadget).where(
                   {"doc": {"in": select(Gadget, ["doc"]).as_subquery("doc")}}),
               lambda: select(Gadget, ["doc"]).distinct(),
               lambda: select(Gadget).order_by("doc"))
    for build in refused:
        with pytest.raises(ValidationError, match="is a JSON column"):
            await db.execute(build())
    # the ways out the messages name
    kinds = (await db.execute(select(Gadget, ["kind"]).distinct().order_by("kind"))).all()
    assert [r.kind for r in kinds] == ["x", "y"]
    with_doc = (await db.execute(select(Gadget, ["id"]).where(
        {"doc": {"is_null": False}}).order_by("id"))).all()
    assert [r.id for r in with_doc] == [3]
