"""UPDATE ... FROM (picked rows) RETURNING their columns: the ordered one-statement batch
claim. PostgreSQL writes it; SQLite (whose RETURNING reads only the updated table) and MySQL
refuse it with DialectError naming the two-step way out."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest

from tempest_typed import DialectError, Update, ValidationError, select, sql, update
from tempest_typed.dialects import get_dialect

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
    fields = get_dialect("postgresql").shape(picked_update()).result
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


# -- settling other rows first: the queue's acks and its next claim in one statement ----------


A1, A2 = UUID(int=1), UUID(int=2)


def settling_update() -> Update[Any, Any]:
    settle = update(Outbound).set({"status": "sent"}).where(
        {"id": {"in": [A1, A2]}, "consumer": "mail"})
    return picked_update()._settling_first(settle)


def test_postgresql_settles_first_and_counts_what_it_settled_in_one_statement() -> None:
    compiled = settling_update().compile("postgresql")
    table = '"outbound_messages"'
    assert compiled.sql == (
        f'WITH "settled" AS (UPDATE {table} SET "status" = %s WHERE "id" IN (%s, %s) AND '
        '"consumer" = %s RETURNING 1), "changed" AS ('
        f'UPDATE {table} SET "status" = %s, "attempts" = attempts + 1 FROM (SELECT "id", '
        f'"next_attempt_at" FROM {table} WHERE "status" = %s ORDER BY "next_attempt_at" ASC '
        f'LIMIT 10 FOR UPDATE SKIP LOCKED) AS "picked" WHERE {table}."id" = "picked"."id" '
        f'RETURNING {table}."id", {table}."attempts", '
        '"picked"."next_attempt_at" AS "picked_next_attempt_at") '
        'SELECT "one"."settled", "changed".* FROM (SELECT count(*) AS "settled" FROM '
        '"settled") AS "one" LEFT JOIN "changed" ON TRUE')
    # the settling update's values first, as the text binds them
    assert compiled.params == ("sent", A1, A2, "mail", "sending", "queued")
    fields = get_dialect("postgresql").shape(settling_update()).result
    assert isinstance(fields, tuple)
    assert [f.name for f in fields] == ["settled", "id", "attempts", "picked_next_attempt_at"]


def test_the_names_of_the_with_never_hide_the_table() -> None:
    from tempest_typed.queue import message_model

    model = message_model("settled")
    pick = select(model, ["id"]).limit(1).for_update(skip_locked=True)
    stmt = (update(model).set({"status": "sending"}).returning("id")
            ._from_picked(pick, "id", []))
    settle = update(model).set({"status": "sent"}).where({"consumer": "c"})
    text = stmt._settling_first(settle).compile("postgresql").sql
    assert text.startswith('WITH "settled_" AS (UPDATE "settled" SET')
    assert 'SELECT count(*) AS "settled" FROM "settled_") AS "one"' in text


@pytest.mark.parametrize("dialect", ["sqlite", "mysql", "mariadb"])
def test_the_other_databases_refuse_settling_first_too(dialect: str) -> None:
    with pytest.raises(DialectError, match=r"select the rows first \(for_update\(\)"):
        settling_update().compile(dialect)


def test_settling_first_takes_a_guarded_update_of_the_same_table_before_picked_rows() -> None:
    from ..models import Account

    settle = update(Outbound).set({"status": "sent"}).where({"consumer": "c"})
    with pytest.raises(ValidationError, match="settle first only before picked rows"):
        update(Outbound).set({"status": "sent"})._settling_first(settle)
    with pytest.raises(ValidationError, match="settle first only before picked rows"):
        settling_update()._settling_first(settle)
    for wrong in (update(Outbound).set({"status": "sent"}).unguarded(),
                  settle.returning(),
                  update(Account).set({"owner": "n"}).where({"id": 1})):
        with pytest.raises(ValidationError, match="by a where\\(\\), with no returning"):
            picked_update()._settling_first(wrong)
