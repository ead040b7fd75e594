"""The nodes the builders make on their fast paths are the nodes their types describe, and the
shared bare builders stay as they were made."""

from __future__ import annotations

from typing import Any

from tempest_typed import select, sql, update
from tempest_typed.statements.nodes import InSubquery, Lock, SelectQuery, UpdateStatement
from tempest_typed.statements.where import Subquery

from ..models import Account, Outbound


def _claim_subquery() -> Subquery[Any, Any]:
    return (select(Outbound).where({"status": "queued"}).order_by("next_attempt_at")
            .limit(10).for_update(skip_locked=True).as_subquery("id"))


def test_fast_made_nodes_equal_the_nodes_their_constructors_make() -> None:
    sub = _claim_subquery()
    key = sub.key
    assert type(key) is SelectQuery
    assert key == SelectQuery(*key[:-1])
    assert key.tag == "select"
    assert key.lock == Lock("update", True, False, ())
    stmt = (update(Outbound).set({"status": "sending", "updated_at": sql.now()})
            .where({"id": {"in": sub}}).returning())
    node = stmt._key()
    assert type(node) is UpdateStatement
    assert node == UpdateStatement(*node[:-1])
    condition = node.where
    assert type(condition) is InSubquery
    assert condition == InSubquery(*condition[:-1])
    assert condition.query is key


def test_the_shared_bare_builders_are_left_as_they_were() -> None:
    assert select(Account) is select(Account)
    assert update(Account) is update(Account)
    before = select(Account).compile().sql
    select(Account).where({"owner": "a"}).order_by("id").limit(1).for_update()
    select(Account, ["id"]).where({"owner": "b"})
    update(Account).set({"owner": "c"}).where({"id": 1})
    assert select(Account).compile().sql == before
    assert select(Account, ["id"]) is not select(Account, ["id"])
    assert select(Account, ["id"]).compile().sql == 'SELECT "id" FROM "accounts"'
