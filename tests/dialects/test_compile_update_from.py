"""UPDATE ... FROM (picked rows) RETURNING their columns: the ordered one-statement batch
claim. PostgreSQL writes it; SQLite (whose RETURNING reads only the updated table) and MySQL
refuse it with DialectError naming the two-step way out."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import DialectError, Update, ValidationError, select, sql, update

from ..models import Outbound


def picked_update() -> Update[Any, Any]:
    pick = (select(Outbound, ["id"]).where({"status": "queued"}).order_by("next_attempt_at")
            .limit(10).for_update(skip_locked=True))
    return (update(Outbound).set({"status": "sending", "attempts": sql.raw("attempts + 1")})
            .returning("id", "attempts")._from_picked(pick, "id", ["next_attempt_at"]))


def test_postgresql_updates_from_the_picked_rows_and_returns_their_due_time() -> None:
    compiled = picked_update().compile("postgresql")
    table = '"outbound_messages"'
    assert compiled.sql == (
        f'UPDATE {table} SET "status" = %s, "attempts" = attempts + 1 FROM (SELECT "id", '
        f'"next_attempt_at" FROM {table} WHERE "status" = %s ORDER BY "next_attempt_at" ASC '
        f'LIMIT 10 FOR UPDATE SKIP LOCKED) AS "picked" WHERE {table}."id" = "picked"."id" '
        f'RETURNING {table}."id", {table}."attempts", '
        '"picked"."next_attempt_at" AS "picked_next_attempt_at"')
    # the set's values, then the picking select's
    assert compiled.params == ("sending", "queued")
    fields = compiled.shape.result
    assert isinstance(fields, tuple)
    assert [f.name for f in fields] == ["id", "attempts",
                                                       "picked_next_attempt_at"]


@pytest.mark.parametrize("dialect", ["sqlite", "mysql", "mariadb"])
def test_the_other_databases_refuse_it_naming_the_two_steps(dialect: str) -> None:
    with pytest.raises(DialectError, match=r"select the rows first \(for_update\(\)"):
        picked_update().compile(dialect)


def test_picked_rows_replace_where_and_come_from_the_same_model() -> None:
    pick = select(Outbound, ["id"]).limit(1)
    with pytest.raises(ValidationError, match="the picked rows replace where"):
        update(Outbound).set({"status": "sent"}).where({"consumer": "c"})._from_picked(pick, "id", [])
    from ..models import Account  # another model

    with pytest.raises(ValidationError, match=r"pick rows with select\(Outbound\)"):
        update(Outbound).set({"status": "sent"})._from_picked(select(Account, ["id"]), "id", [])
