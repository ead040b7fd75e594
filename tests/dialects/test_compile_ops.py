"""The where language and the clauses around it, compiled on every dialect: each operator,
nesting and parentheses, empty `in`, parameter order, locks, identifiers and raw text."""

from __future__ import annotations

import sys
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest

from tempest_typed import ValidationError, and_, delete, insert, not_, or_, select, sql, update
from tempest_typed.dialects import get_dialect

from ..models import Account, Everything, Outbound, Quoted

DIALECTS = ["postgresql", "sqlite", "mysql", "mariadb"]
PH = {"postgresql": "%s", "sqlite": "?", "mysql": "%s", "mariadb": "%s"}
T0 = datetime(2024, 1, 1, tzinfo=UTC)
T1 = datetime(2024, 2, 1, tzinfo=UTC)


def where_sql(stmt: Any, dialect: str) -> tuple[str, tuple[object, ...]]:
    """The WHERE text of a compiled statement, quoted with " on every dialect for brevity."""
    compiled = stmt.compile(dialect)
    text = compiled.sql.split(" WHERE ", 1)[1].replace("`", '"')
    return text.replace(PH[dialect], "?"), compiled.params


# -- every operator --------------------------------------------------------------------------

OPERATORS = [
    ({"count": 3}, '"count" = ?', (3,)),
    ({"count": {"eq": 3}}, '"count" = ?', (3,)),
    ({"count": {"ne": 3}}, '"count" <> ?', (3,)),
    ({"count": {"lt": 3}}, '"count" < ?', (3,)),
    ({"count": {"lte": 3}}, '"count" <= ?', (3,)),
    ({"count": {"gt": 3}}, '"count" > ?', (3,)),
    ({"count": {"gte": 3}}, '"count" >= ?', (3,)),
    ({"ratio": {"between": [0.5, 1.5]}}, '"ratio" BETWEEN ? AND ?', (0.5, 1.5)),
    ({"at": {"between": (T0, T1)}}, '"at" BETWEEN ? AND ?', (T0, T1)),
    ({"day": {"lt": date(2024, 1, 1)}}, '"day" < ?', (date(2024, 1, 1),)),
    ({"count": {"in": [1, 2, 3]}}, '"count" IN (?, ?, ?)', (1, 2, 3)),
    ({"count": {"not_in": [1, 2]}}, '"count" NOT IN (?, ?)', (1, 2)),
    ({"state": {"in": ("on",)}}, '"state" IN (?)', ("on",)),
    ({"label": {"is_null": True}}, '"label" IS NULL', ()),
    ({"label": {"is_null": False}}, '"label" IS NOT NULL', ()),
    ({"label": None}, '"label" IS NULL', ()),
    ({"label": {"eq": None}}, '"label" IS NULL', ()),
    ({"label": {"ne": None}}, '"label" IS NOT NULL', ()),
    ({"active": True}, '"active" = ?', (True,)),
    ({"active": {"ne": False}}, '"active" <> ?', (False,)),
    ({"count": {"gt": 1, "lt": 9}}, '"count" > ? AND "count" < ?', (1, 9)),
    ({"name": "a", "count": 2}, '"name" = ? AND "count" = ?', ("a", 2)),
]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(("where", "expected", "params"), OPERATORS)
def test_operator(dialect: str, where: dict[str, Any], expected: str,
                  params: tuple[object, ...]) -> None:
    assert where_sql(select(Everything).where(where), dialect) == (expected, params)


@pytest.mark.parametrize(("dialect", "like", "ilike"), [
    ("postgresql", '"name" LIKE ?', '"name" ILIKE ?'),
    ("sqlite", "\"name\" LIKE ? ESCAPE '\\'", "lower(\"name\") LIKE lower(?) ESCAPE '\\'"),
    ("mysql", '"name" LIKE ?', 'LOWER("name") LIKE LOWER(?)'),
    ("mariadb", '"name" LIKE ?', 'LOWER("name") LIKE LOWER(?)'),
])
def test_like_and_ilike(dialect: str, like: str, ilike: str) -> None:
    assert where_sql(select(Everything).where({"name": {"like": "a%"}}), dialect) == (
        like, ("a%",))
    assert where_sql(select(Everything).where({"name": {"ilike": "A%"}}), dialect) == (
        ilike, ("A%",))


def test_decimal_values_are_bound_as_decimal() -> None:
    stmt = select(Everything).where({"price": {"gte": Decimal("1.50")}})
    assert where_sql(stmt, "postgresql") == ('"price" >= ?', (Decimal("1.50"),))


# -- and / or / not --------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_and_or_not_nest_with_parentheses(dialect: str) -> None:
    stmt = select(Account).where(
        or_({"owner": "a"}, and_({"balance": {"gt": 1}}, {"closed": False})),
    ).where(not_(or_({"id": 1}, {"id": 2})))
    assert where_sql(stmt, dialect) == (
        '("owner" = ? OR ("balance" > ? AND "closed" = ?)) AND NOT ("id" = ? OR "id" = ?)',
        ("a", 1, False, 1, 2),
    )


def test_a_lone_or_needs_no_parentheses() -> None:
    stmt = select(Account).where(or_({"owner": "a"}, {"owner": "b"}))
    assert where_sql(stmt, "postgresql") == ('"owner" = ? OR "owner" = ?', ("a", "b"))


def test_repeated_where_and_several_conditions_and_together_flat() -> None:
    stmt = select(Account).where({"owner": "a"}, {"balance": 1}).where(and_({"closed": True}))
    assert where_sql(stmt, "postgresql") == (
        '"owner" = ? AND "balance" = ? AND "closed" = ?', ("a", 1, True))


def test_and_inside_or_inside_and() -> None:
    stmt = select(Account).where(
        and_({"owner": "a"}, or_({"balance": 1}, and_({"balance": 2}, {"closed": True}))))
    assert where_sql(stmt, "postgresql") == (
        '"owner" = ? AND ("balance" = ? OR ("balance" = ? AND "closed" = ?))',
        ("a", 1, 2, True))


def test_not_of_a_dict_with_two_keys() -> None:
    stmt = select(Account).where(not_({"owner": "a", "closed": True}))
    assert where_sql(stmt, "postgresql") == ('NOT ("owner" = ? AND "closed" = ?)', ("a", True))


def test_empty_and_is_refused_as_an_empty_where_dict_is() -> None:
    # it would match every row, and pass for the where() an update or delete must have
    for build in (lambda: select(Account).where(and_()),
                  lambda: delete(Account).where(and_()),
                  lambda: update(Account).set({"owner": "b"}).where(and_()),
                  lambda: delete(Account).where(or_({"id": 1}, and_())),
                  lambda: delete(Account).where(not_(and_())),
                  lambda: delete(Account).where(and_(and_())),
                  lambda: delete(Account).where({"id": 1}, and_())):
        with pytest.raises(ValidationError, match=r"and_\(\) needs at least one condition: an "
                                                  r"empty and_\(\) matches every row; say what "
                                                  r"to match, or call unguarded\(\)"):
            build()
    assert where_sql(delete(Account).where(and_({"id": 1})), "postgresql") == (
        '"id" = ?', (1,))


# -- empty in ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_empty_in_is_false_and_empty_not_in_is_true(dialect: str) -> None:
    assert where_sql(select(Account).where({"id": {"in": []}}), dialect) == ("1 = 0", ())
    assert where_sql(select(Account).where({"id": {"not_in": []}}), dialect) == ("1 = 1", ())
    stmt = select(Account).where({"owner": "a", "id": {"in": []}})
    assert where_sql(stmt, dialect) == ('"owner" = ? AND 1 = 0', ("a",))
    assert "IN ()" not in stmt.compile(dialect).sql


# -- parameter order --------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_subquery_params_come_where_the_subquery_stands(dialect: str) -> None:
    rich = select(Account).where({"balance": {"gt": 100}}).as_subquery("id")
    stmt = (select(Everything).where({"name": "before"})
            .where({"id": {"in": rich}}).where({"count": {"lt": 7}}))
    assert where_sql(stmt, dialect) == (
        '"name" = ? AND "id" IN (SELECT "id" FROM "accounts" WHERE "balance" > ?) '
        'AND "count" < ?',
        ("before", 100, 7),
    )


def test_params_follow_the_text_not_the_order_of_the_calls() -> None:
    stmt = update(Account).where({"id": 5}).set({"owner": "z"})
    assert stmt.compile("postgresql") == (
        'UPDATE "accounts" SET "owner" = %s WHERE "id" = %s', ("z", 5))


def test_upsert_given_before_its_rows_binds_the_rows_first() -> None:
    stmt = insert(Account).on_conflict_do_update(["id"], {"owner": "z"}).values({"owner": "a"})
    assert stmt.compile("postgresql") == (
        'INSERT INTO "accounts" ("owner", "balance", "closed") VALUES (%s, %s, %s) '
        'ON CONFLICT ("id") DO UPDATE SET "owner" = %s',
        ("a", 0, False, "z"),
    )


def test_nested_subqueries_bind_in_textual_order() -> None:
    inner = select(Account).where({"owner": "x"}).as_subquery("id")
    middle = select(Everything).where({"count": 1, "id": {"in": inner}}).as_subquery("id")
    stmt = select(Account).where({"id": {"in": middle}}).where({"closed": True}).limit(3)
    compiled = stmt.compile("postgresql")
    assert compiled.sql == (
        'SELECT "id", "owner", "balance", "closed" FROM "accounts" WHERE "id" IN '
        '(SELECT "id" FROM "everything" WHERE "count" = %s AND "id" IN '
        '(SELECT "id" FROM "accounts" WHERE "owner" = %s)) AND "closed" = %s LIMIT 3'
    )
    assert compiled.params == (1, "x", True)


def test_not_in_subquery() -> None:
    sub = select(Account).where({"closed": True}).as_subquery("id")
    stmt = select(Everything).where({"id": {"not_in": sub}})
    assert where_sql(stmt, "sqlite") == (
        '"id" NOT IN (SELECT "id" FROM "accounts" WHERE "closed" = ?)', (True,))


# -- limit, offset, locks ---------------------------------------------------------------------


@pytest.mark.parametrize(("dialect", "expected"), [
    ("postgresql", 'SELECT "id" FROM "accounts" LIMIT 10 OFFSET %s FOR UPDATE NOWAIT'),
    ("mysql", "SELECT `id` FROM `accounts` LIMIT 10 OFFSET %s FOR UPDATE NOWAIT"),
    ("mariadb", "SELECT `id` FROM `accounts` LIMIT 10 OFFSET %s FOR UPDATE NOWAIT"),
])
def test_lock_clause_follows_limit_and_offset(dialect: str, expected: str) -> None:
    stmt = select(Account, ["id"]).for_update(no_wait=True).offset(20).limit(10)
    assert stmt.compile(dialect) == (expected, (20,))


@pytest.mark.parametrize(("dialect", "expected"), [
    ("postgresql", 'SELECT "id" FROM "accounts" FOR SHARE OF "accounts" SKIP LOCKED'),
    ("mysql", "SELECT `id` FROM `accounts` FOR SHARE OF `accounts` SKIP LOCKED"),
    # MariaDB spells the read lock LOCK IN SHARE MODE and has no OF; OF can only name the
    # selected table, so leaving it out locks the same rows.
    ("mariadb", "SELECT `id` FROM `accounts` LOCK IN SHARE MODE SKIP LOCKED"),
])
def test_for_share_with_of(dialect: str, expected: str) -> None:
    stmt = select(Account, ["id"]).for_share(skip_locked=True, of=[Account])
    assert stmt.compile(dialect).sql == expected


@pytest.mark.parametrize(("dialect", "expected"), [
    ("postgresql", "FOR UPDATE"), ("mysql", "FOR UPDATE"), ("mariadb", "FOR UPDATE"),
])
def test_plain_for_update(dialect: str, expected: str) -> None:
    assert select(Account).for_update().compile(dialect).sql.endswith(" " + expected)


def test_for_update_of_accepts_a_bare_model() -> None:
    stmt = select(Account).for_update(of=Account)
    assert stmt.compile("postgresql").sql.endswith('FOR UPDATE OF "accounts"')


@pytest.mark.parametrize(("dialect", "expected"), [
    ("postgresql", 'SELECT "id" FROM "accounts" OFFSET %s'),
    ("sqlite", 'SELECT "id" FROM "accounts" LIMIT -1 OFFSET ?'),
    ("mysql", "SELECT `id` FROM `accounts` LIMIT 18446744073709551615 OFFSET %s"),
    ("mariadb", "SELECT `id` FROM `accounts` LIMIT 18446744073709551615 OFFSET %s"),
])
def test_offset_without_limit(dialect: str, expected: str) -> None:
    assert select(Account, ["id"]).offset(5).compile(dialect) == (expected, (5,))


def test_a_second_limit_replaces_the_first() -> None:
    stmt = select(Account, ["id"]).limit(5).limit(2)
    assert stmt.compile("postgresql") == ('SELECT "id" FROM "accounts" LIMIT 2', ())


# -- order by ---------------------------------------------------------------------------------


def test_postgresql_sorts_nullable_columns_like_the_other_dialects() -> None:
    stmt = select(Everything, ["id"]).order_by("label", "desc").order_by("at").order_by("count")
    assert stmt.compile("postgresql").sql.endswith(
        'ORDER BY "label" DESC NULLS LAST, "at" ASC NULLS FIRST, "count" ASC')


@pytest.mark.parametrize("dialect", ["sqlite", "mysql", "mariadb"])
def test_other_dialects_sort_nulls_first_by_themselves(dialect: str) -> None:
    stmt = select(Everything, ["id"]).order_by("label", "desc").order_by("at")
    assert stmt.compile(dialect).sql.replace("`", '"').endswith(
        'ORDER BY "label" DESC, "at" ASC')


# -- identifiers ------------------------------------------------------------------------------


def test_identifiers_are_quoted_with_their_quotes_doubled() -> None:
    stmt = select(Quoted).where({"spaced": "x", "ticked": 1, "dquoted": 2})
    assert stmt.compile("postgresql").sql == (
        'SELECT "id", "a column", "back`tick", "dou""ble" FROM "odd ""table"" `name`" '
        'WHERE "a column" = %s AND "back`tick" = %s AND "dou""ble" = %s')
    assert stmt.compile("sqlite").sql == (
        'SELECT "id", "a column", "back`tick", "dou""ble" FROM "odd ""table"" `name`" '
        'WHERE "a column" = ? AND "back`tick" = ? AND "dou""ble" = ?')
    assert stmt.compile("mysql").sql == (
        'SELECT `id`, `a column`, `back``tick`, `dou"ble` FROM `odd "table" ``name``` '
        'WHERE `a column` = %s AND `back``tick` = %s AND `dou"ble` = %s')


# -- raw text, expr, now, excluded ------------------------------------------------------------


@pytest.mark.parametrize(("dialect", "expected"), [
    ("postgresql", "\"owner\" = '50%%' || %s"),
    ("sqlite", "\"owner\" = '50%' || ?"),
    ("mysql", "`owner` = '50%%' || %s"),
])
def test_percent_in_raw_and_expr_is_doubled_for_format_placeholders(dialect: str,
                                                                     expected: str) -> None:
    stmt = update(Account).set({"owner": sql.expr("'50%' || {}", "x")}).where({"id": 1})
    assert stmt.compile(dialect).sql.split(" SET ")[1].startswith(expected)
    raw = update(Account).set({"owner": sql.raw("'100%'")}).unguarded()
    assert raw.compile(dialect).sql.endswith("'100%%'" if PH[dialect] == "%s" else "'100%'")


def test_expr_braces_are_escaped_by_doubling() -> None:
    stmt = update(Account).set({"owner": sql.expr("concat({}, '{{x}}')", "a")}).where({"id": 1})
    assert stmt.compile("sqlite") == (
        "UPDATE \"accounts\" SET \"owner\" = concat(?, '{x}') WHERE \"id\" = ?", ("a", 1))


def test_expr_nests_expressions_and_binds_in_order() -> None:
    stmt = update(Account).set(
        {"balance": sql.expr("{} + {} * {}", sql.raw("balance"), 2, sql.expr("abs({})", -3))},
    ).where({"id": 9})
    assert stmt.compile("sqlite") == (
        'UPDATE "accounts" SET "balance" = balance + ? * abs(?) WHERE "id" = ?', (2, -3, 9))


@pytest.mark.skipif(sys.version_info < (3, 14), reason="template strings need Python 3.14")
def test_expr_takes_a_template_string() -> None:
    backoff = 30
    template = eval('t"now() + {backoff} * interval \'1 second\'"')  # parsed on 3.14 only
    stmt = update(Outbound).set({"next_attempt_at": sql.expr(template)}).unguarded()
    assert stmt.compile("postgresql") == (
        "UPDATE \"outbound_messages\" SET \"next_attempt_at\" = now() + %s * interval "
        "'1 second'", (backoff,))


def test_raw_and_now_in_a_where() -> None:
    stmt = select(Outbound, ["id"]).where({"next_attempt_at": {"lte": sql.now()}})
    assert where_sql(stmt, "postgresql") == ('"next_attempt_at" <= now()', ())
    assert where_sql(stmt, "mysql") == ('"next_attempt_at" <= UTC_TIMESTAMP(6)', ())


@pytest.mark.parametrize(("dialect", "expected"), [
    ("postgresql", 'DO UPDATE SET "owner" = EXCLUDED."owner", "balance" = "balance" + %s'),
    ("sqlite", 'DO UPDATE SET "owner" = excluded."owner", "balance" = "balance" + ?'),
    ("mysql", "ON DUPLICATE KEY UPDATE `owner` = VALUES(`owner`), `balance` = `balance` + %s"),
    ("mariadb", "ON DUPLICATE KEY UPDATE `owner` = VALUES(`owner`), `balance` = `balance` + %s"),
])
def test_excluded_per_dialect(dialect: str, expected: str) -> None:
    quote = "`" if dialect in ("mysql", "mariadb") else '"'
    bump = sql.expr(f"{quote}balance{quote} + {{}}", 1)
    target = None if dialect in ("mysql", "mariadb") else ["id"]
    stmt = insert(Account).values({"id": 1, "owner": "a"}).on_conflict_do_update(
        target, {"owner": sql.excluded("owner"), "balance": bump})
    compiled = stmt.compile(dialect)
    assert compiled.sql.endswith(expected)
    assert compiled.params == (1, "a", 0, False, 1)


def test_sqlite_accepts_an_upsert_on_any_key() -> None:
    stmt = insert(Account).values({"owner": "a"}).on_conflict_do_update(
        None, {"owner": sql.excluded("owner")})
    assert stmt.compile("sqlite").sql.endswith(
        'ON CONFLICT DO UPDATE SET "owner" = excluded."owner"')


def test_on_conflict_do_nothing_without_target() -> None:
    stmt = insert(Account).values({"owner": "a"}).on_conflict_do_nothing()
    assert stmt.compile("postgresql").sql.endswith(" ON CONFLICT DO NOTHING")


# -- inserts ----------------------------------------------------------------------------------


def test_multi_row_insert_binds_row_by_row() -> None:
    stmt = insert(Account).values([{"owner": "a"}, {"owner": "b", "balance": 0}])
    assert stmt.compile("sqlite") == (
        'INSERT INTO "accounts" ("owner", "balance", "closed") VALUES (?, ?, ?), (?, ?, ?)',
        ("a", 0, False, "b", 0, False))


def test_insert_with_an_expression_in_a_row() -> None:
    stmt = insert(Everything).values(
        [{"id": 1, "name": "a", "at": sql.now()}, {"id": 2, "name": "b", "at": T0}])
    compiled = stmt.compile("postgresql")
    assert "VALUES (" + "%s, " * 10 + "now(), %s, %s, %s), " in compiled.sql
    assert compiled.params[:9] == (1, "a", None, "x", "off", 0, 0.0, Decimal("0"), True)
    assert T0 in compiled.params


def test_a_second_values_call_appends_rows() -> None:
    one = insert(Account).values({"owner": "a"})
    two = one.values([{"owner": "b"}, {"owner": "c"}])
    assert two.row_count == 3
    assert two.compile("sqlite") == (
        'INSERT INTO "accounts" ("owner", "balance", "closed") VALUES '
        "(?, ?, ?), (?, ?, ?), (?, ?, ?)",
        ("a", 0, False, "b", 0, False, "c", 0, False))


def test_values_appended_after_an_upsert_stay_in_row_order() -> None:
    stmt = (insert(Account).values({"owner": "a"})
            .on_conflict_do_update(["id"], {"owner": "z"}).values({"owner": "b"}))
    assert stmt.compile("postgresql") == (
        'INSERT INTO "accounts" ("owner", "balance", "closed") VALUES (%s, %s, %s), '
        '(%s, %s, %s) ON CONFLICT ("id") DO UPDATE SET "owner" = %s',
        ("a", 0, False, "b", 0, False, "z"))


def test_returning_some_columns() -> None:
    stmt = update(Account).set({"closed": True}).where({"id": 1}).returning("id", "closed")
    assert stmt.compile("postgresql").sql.endswith(' RETURNING "id", "closed"')


# -- the shape cache --------------------------------------------------------------------------


def test_same_shape_shares_one_compilation_and_binds_new_values() -> None:
    a, b = select(Account).where({"owner": "a"}), select(Account).where({"owner": "b"})
    first = a.limit(1).offset(5).compile("postgresql")
    second = b.limit(1).offset(6).compile("postgresql")
    pg = get_dialect("postgresql")
    assert pg.shape(a.limit(1).offset(5)) is pg.shape(b.limit(1).offset(6))
    assert (first.params, second.params) == (("a", 5), ("b", 6))


def test_a_limit_is_part_of_the_shape_written_as_a_number() -> None:
    """A prepared statement's plan then knows the row count (nodes.RowCount says why)."""
    q = select(Account).where({"owner": "a"})
    one, two = q.limit(1).compile("postgresql"), q.limit(2).compile("postgresql")
    pg = get_dialect("postgresql")
    assert pg.shape(q.limit(1)) is not pg.shape(q.limit(2))
    assert (one.sql[-8:], two.sql[-8:], one.params) == (" LIMIT 1", " LIMIT 2", ("a",))


def test_in_lists_of_other_lengths_are_other_shapes() -> None:
    one, two = select(Account).where({"id": {"in": [1]}}), select(Account).where({"id": {"in": [1, 2]}})
    b = two.compile("sqlite")
    lite = get_dialect("sqlite")
    assert lite.shape(one) is not lite.shape(two)
    assert b.sql.endswith('"id" IN (?, ?)')


def test_postgresql_binds_each_in_list_as_one_array_past_50_parameters() -> None:
    """psycopg parses a query of more than 50 parameters again on every run: past 50 each
    `in` list of bound values is one array (binary), whatever its length; at 50, placeholders."""
    fifty = select(Account).where({"id": {"in": list(range(49))}, "owner": "a"})
    assert where_sql(fifty, "postgresql") == ('"id" IN (' + ", ".join(["?"] * 49)
                                              + ') AND "owner" = ?', (*range(49), "a"))
    many = select(Account).where({"id": {"in": list(range(50))}, "owner": {"not_in": ["a", "b"]},
                                  "balance": {"gt": 0}})
    assert many.compile("postgresql") == (
        'SELECT "id", "owner", "balance", "closed" FROM "accounts" WHERE "id" = ANY(%b) '
        'AND "owner" <> ALL(%b) AND "balance" > %s', (list(range(50)), ["a", "b"], 0))
    for dialect in ("sqlite", "mysql", "mariadb"):  # no arrays: placeholders, always
        assert where_sql(many, dialect)[0].startswith('"id" IN (' + ", ".join(["?"] * 50) + ")")


def test_a_compiled_statement_with_a_list_parameter_hashes() -> None:
    """An array (a long `in` list on PostgreSQL) or a JSON document is a list parameter."""
    many = select(Account).where({"id": {"in": list(range(60))}}).compile("postgresql")
    again = select(Account).where({"id": {"in": list(range(60))}}).compile("postgresql")
    assert many == again and hash(many) == hash(again)
    assert len({many, again}) == 1
