"""A batch of model instances takes the column-at-a-time path dicts take, and binds what the
general path binds: the columns left unset in every row (an identity) left out, the rest in
table order; anything else (a mix, a value to check or copy) goes the general way."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tempest_typed import ValidationError, insert

from ..models import Account, Outbound

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_instances_bind_what_their_dicts_bind() -> None:
    batch = [Outbound(consumer="c", idempotency_key=f"k{i}", next_attempt_at=NOW)
             for i in range(5)]
    as_dicts = [{c: getattr(m, c) for c in ("id", "consumer", "idempotency_key", "status",
                                            "attempts", "next_attempt_at", "updated_at")}
                for m in batch]
    a, b = insert(Outbound).values(batch).compile(), insert(Outbound).values(as_dicts).compile()
    assert (a.sql, a.params) == (b.sql, b.params)


def test_an_identity_left_unset_everywhere_is_left_out() -> None:
    batch = [Account(owner=f"o{i}", balance=i) for i in range(3)]
    compiled = insert(Account).values(batch).compile()
    assert '"id"' not in compiled.sql.split("VALUES")[0]
    mixed = [Account(id=7, owner="a", balance=1), Account(owner="b", balance=2)]
    with pytest.raises(ValidationError, match="sets columns"):
        insert(Account).values(mixed)


def test_a_json_value_of_an_instance_is_still_copied() -> None:
    from ..models import Everything

    doc: dict[str, object] = {"a": 1}
    rows = [Everything(id=i, name="n", doc=doc) for i in range(3)]
    stmt = insert(Everything).values(rows)
    doc["a"] = 2
    assert all(p != {"a": 2} for p in stmt.compile().params)
