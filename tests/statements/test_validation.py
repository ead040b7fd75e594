"""Every mistake a builder can see is a ValidationError raised while the statement is built,
with a message that names the model, the column and the fix."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import pytest

from tempest_typed import (
    ValidationError,
    and_,
    delete,
    insert,
    join,
    not_,
    or_,
    select,
    sql,
    update,
)

from ..models import Account, Everything, Keyed, Outbound, Snake

NOW = datetime(2024, 1, 1, tzinfo=UTC)


def test_validation_error_is_a_value_error() -> None:
    assert issubclass(ValidationError, ValueError)


# -- unknown columns, wherever a name is written ---------------------------------------------

UNKNOWN_COLUMN_PLACES = [
    ("select()", lambda: select(Account, ["nope"])),
    ("where()", lambda: select(Account).where({"nope": 1})),
    ("where()", lambda: update(Account).set({"owner": "a"}).where({"nope": 1})),
    ("where()", lambda: delete(Account).where(or_({"id": 1}, {"nope": 1}))),
    ("order_by()", lambda: select(Account).order_by("nope")),
    ("set()", lambda: update(Account).set({"nope": 1})),
    ("values()", lambda: insert(Account).values({"owner": "a", "nope": 1})),
    ("on_conflict_do_nothing()",
     lambda: insert(Account).values({"owner": "a"}).on_conflict_do_nothing(["nope"])),
    ("on_conflict_do_update()",
     lambda: insert(Account).values({"owner": "a"}).on_conflict_do_update(["nope"], {"owner": "b"})),
    ("on_conflict_do_update() set",
     lambda: insert(Account).values({"owner": "a"}).on_conflict_do_update(["id"], {"nope": 1})),
    ("index_where=", lambda: insert(Account).values({"owner": "a"}).on_conflict_do_update(
        ["id"], {"owner": "b"}, index_where={"nope": 1})),
    ("update_where=", lambda: insert(Account).values({"owner": "a"}).on_conflict_do_update(
        ["id"], {"owner": "b"}, update_where={"nope": 1})),
    ("returning()", lambda: update(Account).set({"owner": "a"}).returning("nope")),
    ("returning()", lambda: delete(Account).unguarded().returning("id", "nope")),
    ("as_subquery()", lambda: select(Account).as_subquery("nope")),
    ("sql.excluded()", lambda: insert(Account).values({"owner": "a"}).on_conflict_do_update(
        ["id"], {"owner": sql.excluded("nope")})),
]


@pytest.mark.parametrize(("place", "build"), UNKNOWN_COLUMN_PLACES)
def test_unknown_column(place: str, build: Any) -> None:
    with pytest.raises(ValidationError) as err:
        build()
    text = str(err.value)
    assert "Account has no column 'nope'" in text
    assert place in text
    assert "(columns: id, owner, balance, closed)" in text


def test_unknown_column_suggests_the_near_miss() -> None:
    with pytest.raises(ValidationError, match="did you mean 'balance'"):
        select(Account).where({"balanse": 1})


def test_unknown_column_recognizes_the_sql_name() -> None:


    with pytest.raises(ValidationError,
                       match="'next_attempt_at' is the SQL name, write the attribute 'nextAttemptAt'"):
        select(Snake).order_by("next_attempt_at")


# -- operators --------------------------------------------------------------------------------


def test_unknown_operator_names_the_operators() -> None:
    with pytest.raises(ValidationError) as err:
        select(Account).where({"balance": {"greater": 1}})
    assert "Account.balance: unknown operator 'greater' in where()" in str(err.value)
    assert "eq, ne, lt, lte, gt, gte, between, in, not_in, is_null, like, ilike" in str(err.value)


def test_unknown_operator_suggests_the_near_miss() -> None:
    with pytest.raises(ValidationError, match="did you mean 'is_null'"):
        select(Account).where({"owner": {"isnull": True}})


@pytest.mark.parametrize(("where", "message"), [
    ({"balance": {"like": "1%"}}, "Account.balance is int: `like` applies to strings only"),
    ({"balance": {"ilike": "1%"}}, "Account.balance is int: `ilike` applies to strings only"),
    ({"closed": {"gt": True}}, "Account.closed is bool: `gt` applies to numbers, dates and times"),
    ({"owner": {"lt": "m"}}, "Account.owner is str: `lt` applies to numbers, dates and times"),
    ({"closed": {"between": [False, True]}}, "Account.closed is bool: `between` applies to"),
])
def test_operator_that_does_not_fit_the_column_type(where: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("(", r"\(")):
        select(Account).where(where)


@pytest.mark.parametrize(("where", "message"), [
    ({"balance": {"between": [1]}}, "`between` takes a pair [low, high]"),
    ({"balance": {"between": [1, None]}}, "`between`: bounds cannot be None"),
    ({"owner": {"is_null": "yes"}}, "`is_null` takes True or False"),
    ({"balance": {"lt": None}}, "`lt` None: None has no order"),
    ({"owner": {"like": 5}}, "`like` takes a pattern string"),
    ({"owner": {"like": sql.col("owner")}},
     "`like` takes a pattern string (a str, sql.raw() or sql.expr()), got sql.col('owner')"),
    ({"owner": {}}, "Account.owner: empty operator dict in where()"),
    ({}, "an empty where dict in where() matches every row"),
    ({"owner": ["a", "b"]}, 'write {"in": [...]} to match any of them'),
    ({"doc": {"gt": 1}}, "is a JSON column"),
])
def test_malformed_operands(where: dict[str, Any], message: str) -> None:
    model = Everything if "doc" in where else Account
    with pytest.raises(ValidationError) as err:
        select(model).where(where)
    assert message in str(err.value)


@pytest.mark.parametrize(("build", "message"), [
    (lambda: select(Everything).where(
        {"doc": {"in": select(Everything, ["doc"]).as_subquery("doc")}}),
     "Everything.doc is a JSON column: `in` does not apply"),
    (lambda: select(Everything).where(
        {"doc": {"not_in": select(Everything).as_subquery("doc")}}),
     "Everything.doc is a JSON column: `not_in` does not apply"),
    (lambda: select(Everything).order_by("doc"),
     "Everything.order_by('doc'): Everything.doc is a JSON column, which is not compared; "
     "order by another column"),
    (lambda: join(Everything, "e").order_by("e.doc", "desc"), "Everything.doc is a JSON column"),
    (lambda: select(Everything, ["id"]).add_columns(
        {"r": sql.row_number().over(order_by=["doc"])}),
     "a window partitions and orders by other columns"),
    (lambda: select(Everything, ["id"]).add_columns(
        {"r": sql.count().over(partition_by=["doc"])}),
     "a window partitions and orders by other columns"),
    (lambda: select(Everything).distinct(),
     "Everything.distinct(): 'doc' is a JSON column, which is not compared, so rows with it "
     "cannot be told apart the same way on every database; select the columns without it, "
     "or drop distinct()"),
    (lambda: select(Everything, ["id", "doc"]).distinct(), "'doc' is a JSON column"),
    (lambda: join(Everything, "e").distinct(), "'e.doc' is a JSON column"),
    (lambda: select(Everything, ["id"]).distinct().add_columns({"d": sql.col("doc")}),
     "'d' is a JSON column"),
])
def test_a_json_column_is_not_compared(build: Any, message: str) -> None:
    # PostgreSQL's json type has no equality and jsonb compares by value, where MySQL and
    # SQLite compare text: {"b": 1} and {"b": 1.0} are one row there, two here
    with pytest.raises(ValidationError) as err:
        build()
    assert message in str(err.value)
    assert select(Everything, ["id", "name"]).distinct().compile("postgresql").sql == (
        'SELECT DISTINCT "id", "name" FROM "everything"')


@pytest.mark.parametrize("build", [
    lambda: select(Account, ["owner"]).distinct().order_by("balance"),
    lambda: select(Account, ["owner"]).order_by("balance").distinct(),
    lambda: select(Account, ["owner"]).order_by("balance").distinct().add_columns(
        {"b": sql.col("closed")}),
    lambda: join(Account, "a").distinct().order_by("a.balance").project({"o": "a.owner"}),
])
def test_distinct_orders_only_by_what_it_fetches(build: Any) -> None:
    # PostgreSQL refuses it when it runs; MySQL and SQLite order by some row's value
    with pytest.raises(ValidationError, match=r"distinct\(\) with order_by\('(a\.)?balance'\), "
                                              r"which the select does not fetch: .*select "
                                              r"'(a\.)?balance' too, or drop distinct\(\)"):
        build()


def test_distinct_orders_by_fetched_columns_labels_and_aggregates() -> None:
    assert select(Account, ["owner", "balance"]).distinct().order_by("balance").compile(
        "postgresql").sql == ('SELECT DISTINCT "owner", "balance" FROM "accounts" '
                              'ORDER BY "balance" ASC')
    assert select(Account).order_by("balance").distinct().compile("sqlite").sql.startswith(
        "SELECT DISTINCT")
    select(Account, ["owner"]).add_columns({"b": sql.col("balance") * 2}).distinct().order_by("b")
    select(Account).aggregate(["owner"], {"n": sql.count()}).order_by("n").distinct()
    join(Account, "a").order_by("a.balance").project({"b": "a.balance"}).distinct()
    with pytest.raises(ValidationError, match=r"which the subquery does not fetch: .*order the "
                                              r"subquery by 'id' only, or drop distinct\(\)"):
        select(Account, ["id", "owner"]).distinct().order_by("owner").as_subquery("id")


# -- values of the wrong type -----------------------------------------------------------------


@pytest.mark.parametrize(("build", "message"), [
    (lambda: select(Account).where({"owner": 1}),
     "Account.owner expects str, got int 1 in where()"),
    (lambda: select(Account).where({"id": True}), "Account.id expects int, got bool True"),
    (lambda: select(Account).where({"owner": None}),
     "Account.owner is not nullable: None is not a value of str in where()"),
    (lambda: select(Outbound).where({"status": "bogus"}),
     "Outbound.status expects Literal['queued', 'sending', 'sent', 'failed'], got str 'bogus'"),
    (lambda: select(Outbound).where({"next_attempt_at": datetime(2024, 1, 1)}),
     "got naive datetime"),
    (lambda: update(Outbound).set({"id": "not-a-uuid"}).unguarded(),
     "Outbound.id expects UUID, got str"),
    (lambda: insert(Everything).values({"id": 1, "name": "a", "code": "x" * 13}),
     "Everything.code holds at most 12 characters, got 13; raise column(max_length=...)"),
])
def test_value_of_the_wrong_type(build: Any, message: str) -> None:
    with pytest.raises(ValidationError) as err:
        build()
    assert message in str(err.value)


# -- the seed's v0.5.0 lesson: a stray object is never bound ----------------------------------


def test_a_dict_in_set_is_never_bound_as_a_parameter() -> None:
    with pytest.raises(ValidationError) as err:
        update(Outbound).set({"attempts": {"raw": "attempts + 1"}})
    text = str(err.value)
    assert "Outbound.attempts in set()" in text
    assert "never bound as a parameter" in text
    assert 'sql.raw("...")' in text


def test_a_dict_in_values_is_never_bound_as_a_parameter() -> None:
    with pytest.raises(ValidationError) as err:
        insert(Outbound).values({"consumer": "c", "next_attempt_at": NOW,
                                 "attempts": {"raw": "attempts + 1"}})
    assert "Outbound.attempts expects int, got dict" in str(err.value)
    assert "never bound as a parameter" in str(err.value)


def test_a_dict_in_an_upsert_set_is_never_bound() -> None:
    with pytest.raises(ValidationError, match="never bound as a parameter"):
        insert(Account).values({"owner": "a"}).on_conflict_do_update(
            ["id"], {"balance": {"raw": "balance + 1"}})


@pytest.mark.parametrize("stray", [object(), {1, 2}, [1], (1,)])
def test_other_objects_in_set_are_rejected(stray: object) -> None:
    with pytest.raises(ValidationError, match=re.escape("Account.balance expects int")):
        update(Account).set({"balance": stray})


def test_a_json_column_takes_a_dict() -> None:
    stmt = update(Everything).set({"doc": {"a": 1}}).where({"id": 1})
    assert stmt.compile("postgresql").params == ({"a": 1}, 1)


def test_excluded_outside_an_upsert() -> None:
    with pytest.raises(ValidationError, match="belongs in on_conflict_do_update"):
        update(Account).set({"owner": sql.excluded("owner")})


# -- locks ------------------------------------------------------------------------------------


@pytest.mark.parametrize("lock", ["for_update", "for_share"])
def test_skip_locked_with_no_wait(lock: str) -> None:
    with pytest.raises(ValidationError) as err:
        getattr(select(Account), lock)(skip_locked=True, no_wait=True)
    assert f"Account: {lock}() takes skip_locked=True or no_wait=True, not both" in str(err.value)


def test_lock_of_another_table() -> None:
    with pytest.raises(ValidationError, match=r"for_update\(of=\[Outbound\]\) names a table"):
        select(Account).for_update(of=[Outbound])


@pytest.mark.parametrize("lock", ["for_update", "for_share"])
def test_lock_of_one_table_takes_its_model_not_a_name(lock: str) -> None:
    with pytest.raises(ValidationError) as err:
        getattr(select(Account), lock)(of=["account"])
    assert (f"Account: {lock}(of=['account']) names an alias, which only a join has; a select "
            "of one table takes its model: of=[Account]") in str(err.value)


# -- in operands ------------------------------------------------------------------------------


def test_in_takes_a_one_column_subquery_not_a_select() -> None:
    with pytest.raises(ValidationError) as err:
        select(Account).where({"id": {"in": select(Account)}})
    assert 'Account.id `in` takes a one-column subquery: add .as_subquery("id")' in str(err.value)


@pytest.mark.parametrize("operand", [5, "abc", {"a": 1}, None])
def test_in_takes_a_sequence(operand: object) -> None:
    with pytest.raises(ValidationError) as err:
        select(Account).where({"id": {"in": operand}})
    assert "Account.id `in` takes a list of int values or select(...).as_subquery(column)" in str(
        err.value)


def test_in_subquery_of_another_type() -> None:
    with pytest.raises(ValidationError) as err:
        select(Account).where({"id": {"not_in": select(Outbound).as_subquery("id")}})
    assert ("Account.id `not_in`: the subquery yields Outbound.id of type UUID, not int"
            in str(err.value))


def test_in_items_are_checked() -> None:
    with pytest.raises(ValidationError, match=re.escape("Outbound.id expects UUID, got str")):
        select(Outbound).where({"id": {"in": [UUID(int=1), "2"]}})
    with pytest.raises(ValidationError, match=re.escape('None never matches in a list; use {"is_null": True}')):
        select(Account).where({"owner": {"in": ["a", None]}})


# -- combinators, sql.*, counts ---------------------------------------------------------------


def test_combinators_take_where_inputs() -> None:
    with pytest.raises(ValidationError, match="and_\\(\\) takes where dicts"):
        and_("owner = 'a'")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="or_\\(\\) needs at least one condition"):
        or_()
    with pytest.raises(ValidationError, match="and_\\(\\) needs at least one condition"):
        and_()
    with pytest.raises(ValidationError, match="not_\\(\\) takes where dicts"):
        not_(None)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="Account: where\\(\\) needs a condition"):
        select(Account).where()


def test_sql_expr_checks_its_placeholders() -> None:
    with pytest.raises(ValidationError, match=re.escape("1 placeholder(s) {} but 2 value(s)")):
        sql.expr("a + {}", 1, 2)
    with pytest.raises(ValidationError, match=re.escape("write {{ for a literal brace")):
        sql.expr("a + {x}", 1)
    with pytest.raises(ValidationError, match="a lone } must be written }}"):
        sql.expr("a }")
    with pytest.raises(ValidationError, match="a list cannot be bound as one parameter"):
        sql.expr("a = any({})", [1, 2])


def test_sql_raw_and_now_check_their_argument() -> None:
    with pytest.raises(ValidationError, match="non-empty literal string"):
        sql.raw("  ")
    with pytest.raises(ValidationError, match="takes seconds as a number"):
        sql.now(plus="30")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="naive datetime"):
        update(Outbound).set({"updated_at": sql.expr("{}", datetime(2024, 1, 1))}).unguarded()


@pytest.mark.parametrize("n", [-1, 1.5, True, "3"])
def test_limit_and_offset_take_non_negative_ints(n: object) -> None:
    with pytest.raises(ValidationError, match="limit\\(\\) takes an int >= 0"):
        select(Account).limit(n)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="offset\\(\\) takes an int >= 0"):
        select(Account).offset(n)  # type: ignore[arg-type]


def test_order_by_direction() -> None:
    with pytest.raises(ValidationError, match="direction is 'asc' or 'desc'"):
        select(Account).order_by("id", "down")  # type: ignore[arg-type]


def test_set_twice() -> None:
    with pytest.raises(ValidationError, match=re.escape("Account.owner is set twice")):
        update(Account).set({"owner": "a"}).set({"owner": "b"})


def test_an_empty_set() -> None:
    with pytest.raises(ValidationError, match="set\\(\\) needs at least one column to set"):
        update(Account).set({})


def test_select_columns_is_a_list() -> None:
    with pytest.raises(ValidationError, match="write \\['id'\\]"):
        select(Account, "id")  # type: ignore[call-overload]


def test_select_of_something_that_is_not_a_model() -> None:
    with pytest.raises(ValidationError, match="expected a Model subclass"):
        select(dict)  # type: ignore[type-var]


# -- inserts ----------------------------------------------------------------------------------


def test_insert_missing_a_required_column() -> None:
    with pytest.raises(ValidationError) as err:
        insert(Outbound).values({"consumer": "c"})
    assert ("insert(Outbound).values() is missing required column(s) 'next_attempt_at': "
            "they are not nullable and have no default") in str(err.value)


def test_insert_of_an_instance_whose_key_was_left_out() -> None:


    with pytest.raises(ValidationError) as err:
        insert(Keyed).values(Keyed(name="a"))
    assert "Keyed.code was left out of the constructor" in str(err.value)


def test_insert_rows_with_different_columns() -> None:
    with pytest.raises(ValidationError, match="give every row the same columns"):
        insert(Account).values([{"owner": "a"}, {"owner": "b", "id": 3}])


def test_a_second_values_call_with_other_columns() -> None:
    first = insert(Account).values({"owner": "a"})
    with pytest.raises(ValidationError) as err:
        first.values({"owner": "b", "id": 3})
    assert "the rows already given set" in str(err.value)


def test_insert_of_another_model_or_nothing() -> None:
    with pytest.raises(ValidationError, match="got a Account instance; pass Outbound"):
        insert(Outbound).values(Account(owner="a"))  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="has no row to insert: give one row or more, or "
                                              "skip the insert when there are none"):
        insert(Account).values([])
    with pytest.raises(ValidationError, match="has no values\\(\\): give it a row"):
        insert(Account).compile("postgresql")


def test_conflict_predicates_need_a_target() -> None:
    with pytest.raises(ValidationError, match="where= repeats the predicate"):
        insert(Account).values({"owner": "a"}).on_conflict_do_nothing(where={"closed": False})
    with pytest.raises(ValidationError, match="index_where= repeats the predicate"):
        insert(Account).values({"owner": "a"}).on_conflict_do_update(
            None, {"owner": "b"}, index_where={"closed": False})


def test_conflict_target_is_a_list() -> None:
    with pytest.raises(ValidationError, match="write \\['id'\\]"):
        insert(Account).values({"owner": "a"}).on_conflict_do_nothing("id")  # type: ignore[arg-type]


def test_a_column_compared_with_itself_is_refused_naming_the_alias_that_correlates() -> None:
    """A subquery on the table of the statement around it names its own row by the table's
    name: `where({"id": sql.col("outbound_messages.id")})` would hold for every row."""
    from tempest_typed import join

    for ref in ("outbound_messages.id", "id"):
        with pytest.raises(ValidationError, match=r'compares a column with itself.*join\(Outbound, '
                                           r'"outer"\), and write sql.col\("outer.id"\)'):
            select(Outbound, ["id"]).where({"id": sql.col(ref)})
    # the way out: the enclosing statement aliased, the subquery reading its row
    latest = sql.scalar(select(Outbound, ["attempts"]).where(
        {"id": sql.col("outer.id")}).as_subquery("attempts"))
    compiled = join(Outbound, "outer").add_columns({"again": latest}).compile("postgresql")
    assert '(SELECT "attempts" FROM "outbound_messages" WHERE "id" = "outer"."id")' in compiled.sql
    # a comparison of two columns stays allowed
    select(Outbound).where({"updated_at": {"gt": sql.col("next_attempt_at")}})


@pytest.mark.parametrize(("build", "message"), [
    (lambda: select(Everything).aggregate([], {"n": sql.count_distinct("doc")}),
     "Everything: sql.count_distinct('doc') for 'n': a JSON column cannot be aggregated"),
    (lambda: select(Account).aggregate([], {"n": sql.count_distinct("nope")}),
     "Account has no column 'nope' in sql.count_distinct() for 'n'"),
    (lambda: sql.count_distinct(3), "sql.count_distinct() takes a column name, got 3"),
    (lambda: select(Everything).aggregate([], {"n": sql.count("doc")}),
     "Everything: sql.count('doc') for 'n': a JSON column cannot be aggregated"),
])
def test_an_aggregate_s_error_names_the_function_written(build: Any, message: str) -> None:
    with pytest.raises(ValidationError) as err:
        build()
    assert message in str(err.value)


@pytest.mark.parametrize("build", [
    lambda: select(Account).having({"n": {"gt": 1}}),
    lambda: select(Account, ["owner"]).where({"closed": False}).having({"owner": "a"}),
    lambda: join(Account, "a").having({"n": {"gt": 1}}),
])
def test_having_before_aggregate_names_the_order_of_calls(build: Any) -> None:
    with pytest.raises(ValidationError, match=r"having\(\) filters groups, and this select has "
                                              r"none: call aggregate\(\[group columns\], .* "
                                              r"first, then having\(\)"):
        build()


@pytest.mark.parametrize(("build", "name"), [
    (lambda g: g.having({"n": {"gt": sql.col("accounts.balance")}}), "accounts.balance"),
    (lambda g: g.having(sql.exists(select(Everything).where(
        {"count": sql.col("accounts.balance")}))), "accounts.balance"),
    (lambda g: g.having({"n": {"lt": sql.scalar(select(Everything, ["count"]).where(
        {"count": sql.col("accounts.id")}).limit(1).as_subquery("count"))}}), "accounts.id"),
])
def test_having_reads_only_group_columns_of_its_rows(build: Any, name: str) -> None:
    grouped = select(Account).aggregate(["owner"], {"n": sql.count()})
    with pytest.raises(ValidationError, match=re.escape(
            f"Account: having() reads sql.col({name!r}), which is not a group column: a group "
            "has no one value of it (PostgreSQL refuses this); compare a label or a group "
            f"column, or add {name.split('.')[1]!r} to the group list")):
        build(grouped)


def test_having_reads_group_columns_and_enclosing_rows() -> None:
    grouped = select(Account).aggregate(["owner"], {"n": sql.count()})
    assert "HAVING EXISTS" in grouped.having(sql.exists(select(Everything).where(
        {"name": sql.col("accounts.owner")}))).compile("postgresql").sql
    joined = join(Account, "a").aggregate(["a.owner"], {"n": sql.count()})
    with pytest.raises(ValidationError, match=r"reads sql\.col\('a\.closed'\), which is not"):
        joined.having(sql.exists(select(Everything).where({"active": sql.col("a.closed")})))
    assert joined.having(sql.exists(select(Everything).where(
        {"name": sql.col("a.owner")}))).compile("mysql").sql.endswith(
        "WHERE `name` = `a`.`owner`)")
    # a grouped subquery may read the row of the statement around it
    per_owner = (select(Everything).aggregate(["name"], {"n": sql.count()})
                 .having({"name": sql.col("accounts.owner")}).as_subquery("n"))
    assert select(Account).where({"balance": {"gt": sql.scalar(per_owner)}}).compile(
        "postgresql").sql.endswith('HAVING "name" = "accounts"."owner")')


# -- sql.now() is a datetime column's value (the plugin and the stubs refuse it too) ---------

@pytest.mark.parametrize("build", [
    lambda: select(Outbound).where({"attempts": sql.now()}),
    lambda: select(Outbound).where({"status": {"ne": sql.now(plus=5)}}),
    lambda: update(Account).set({"closed": sql.now()}).where({"id": 1}),
    lambda: select(Account).where({"owner": {"in": [sql.now()]}}),
])
def test_now_is_refused_for_a_column_that_is_not_a_datetime(build: Any) -> None:
    with pytest.raises(ValidationError, match=r"sql\.now\(\) is a timestamp, a value of "
                                              "datetime columns only"):
        build()
    select(Outbound).where({"next_attempt_at": {"lt": sql.now()}, "updated_at": sql.now(plus=5)})


def test_a_wrong_number_of_arguments_is_a_validation_error_naming_the_fix() -> None:
    calls: list[tuple[str, Any]] = [
        (r"sql\.coalesce\(\) takes two values or more, got 1: .* give the fallback too",
         lambda: sql.coalesce("owner")),
        (r"not_\(\) takes one condition, got 2: .* not_\(and_\(a, b\)\)",
         lambda: not_({"owner": "a"}, {"owner": "b"})),
        (r"not_\(\) takes one condition, got 0", lambda: not_()),
        (r"as_subquery\(\) takes the name of the one column .* got 0 arguments; e\.g\. "
         r"as_subquery\(\"id\"\)", lambda: select(Account, ["id"]).as_subquery()),
        (r"as_subquery\(\) takes the name of the one column .* got 2 arguments",
         lambda: select(Account, ["id"]).as_subquery("id", "owner")),
    ]
    for message, call in calls:
        with pytest.raises(ValidationError, match=message):
            call()
    assert select(Account, ["id"]).as_subquery(column="id") is not None


def test_two_selects_named_alike_that_differ_in_a_value_are_refused() -> None:
    # one WITH names both: the second's rows were the first's, without a word, when the two
    # selects differed in a bound value only
    paid = sql.cte("c", select(Account, ["id", "owner"]).where({"closed": True}))
    open_ = sql.cte("c", select(Account, ["id", "owner"]).where({"closed": False}))
    shown = "two different selects are named 'c'; give each sql.cte() its own name"
    with pytest.raises(ValidationError, match=re.escape(f"join(a).inner_join(): {shown}")):
        join(paid, "a").inner_join(open_, "b", {"a.owner": "b.owner"})
    with pytest.raises(ValidationError, match=re.escape(f"union_all(): {shown}")):
        select(paid, ["id"]).union_all(select(open_, ["id"]))
    with pytest.raises(ValidationError, match=re.escape(f"union(): {shown}")):
        join(paid, "a").project({"i": "a.id"}).union(
            join(Account, "x").inner_join(open_, "b", {"x.id": "b.id"}).project({"i": "x.id"}))
    # the same select (or one built alike, with equal values) twice is one definition
    again = sql.cte("c", select(Account, ["id", "owner"]).where({"closed": True}))
    both = join(paid, "a").inner_join(again, "b", {"a.id": "b.id"}).project({"i": "a.id"})
    assert both.compile("postgresql").params == (True,)
    assert select(paid, ["id"]).union(select(again, ["id"])).compile("sqlite").params == (True,)


def test_an_aggregate_where_a_value_goes_names_the_way_out() -> None:
    # it read "Account.balance expects int, got AggregateFunction sql.max('balance')"
    fix = (r"an aggregate is computed per group, not where a value goes; give it a label in "
           r"aggregate\(\) and compare the label in having\(\), or use the whole table's "
           r"value, sql.scalar\(")
    for build in (lambda: select(Account).where({"balance": {"gt": sql.max("balance")}}),
                  lambda: update(Account).set({"balance": sql.sum("balance")}).where({"id": 1}),
                  lambda: insert(Account).values({"owner": "a", "balance": sql.count()}),
                  lambda: select(Account).aggregate(["owner"], {"n": sql.count()})
                  .having({"n": {"gt": sql.max("balance")}})):
        with pytest.raises(ValidationError, match=fix):
            build()
