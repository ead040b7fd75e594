"""Computed columns and window functions as each dialect writes them: values bound, names
quoted, the same meaning everywhere; mistakes refused while the statement is built."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest

from tempest_typed import (
    DialectError,
    Model,
    ValidationError,
    column,
    insert,
    join,
    select,
    sql,
    update,
)


class Post(Model, table="posts"):
    id: int = column(primary_key=True)
    title: str
    nickname: str | None = None
    likes: int = 0
    shares: int = 0
    price: float = 0.0
    amount: Decimal = Decimal(0)
    published_at: datetime | None = None
    day: date | None = None


class Comment(Model, table="comments"):
    id: int = column(primary_key=True)
    post_id: int
    created_at: datetime


def sqls(stmt: object) -> dict[str, str]:
    return {d: stmt.compile(d).sql for d in ("postgresql", "sqlite", "mysql")}  # type: ignore[attr-defined]


def test_functions_and_arithmetic_per_dialect() -> None:
    stmt = select(Post, ["id"]).add_columns({
        "score": sql.col("likes") * 2 + sql.col("shares"),
        "ratio": sql.col("likes") / sql.col("shares"),
        "n": sql.length("title"),
        "name": sql.coalesce("nickname", "title"),
    })
    assert sqls(stmt) == {
        "postgresql": 'SELECT "id", (("likes" * CAST(%s AS bigint)) + "shares") AS "score", (CAST("likes" AS '
                      'double precision) / NULLIF("shares", 0)) AS "ratio", CHAR_LENGTH("title") '
                      'AS "n", COALESCE("nickname", "title") AS "name" FROM "posts"',
        "sqlite": 'SELECT "id", CASE WHEN typeof((("likes" * ?) + "shares")) = \'real\' THEN '
                  'abs(-9223372036854775807 - 1) ELSE (("likes" * ?) + "shares") END AS "score", '
                  '(CAST("likes" AS REAL) / '
                  'NULLIF("shares", 0)) AS "ratio", LENGTH("title") AS "n", COALESCE("nickname", '
                  '"title") AS "name" FROM "posts"',
        "mysql": 'SELECT `id`, ((`likes` * %s) + `shares`) AS `score`, (CAST(`likes` AS DOUBLE) / '
                 'NULLIF(`shares`, 0)) AS `ratio`, CHAR_LENGTH(`title`) AS `n`, COALESCE('
                 '`nickname`, `title`) AS `name` FROM `posts`',
    }
    assert stmt.compile("postgresql").params == (2,)


def test_dates_in_utc_per_dialect() -> None:
    stmt = select(Post, ["id"]).add_columns({
        "month": sql.date_trunc("month", "published_at"),
        "dow": sql.extract("dow", "published_at"),
        "first": sql.date_trunc("month", "day"),
    })
    assert sqls(stmt) == {
        "postgresql": 'SELECT "id", (date_trunc(\'month\', "published_at" AT TIME ZONE \'UTC\') '
                      'AT TIME ZONE \'UTC\') AS "month", CAST(EXTRACT(DOW FROM "published_at" '
                      'AT TIME ZONE \'UTC\') AS integer) AS "dow", (date_trunc(\'month\', "day")'
                      '::date) AS "first" FROM "posts"',
        "sqlite": 'SELECT "id", strftime(\'%Y-%m-01 00:00:00.000000\', substr("published_at", 1, 19)) AS '
                  '"month", CAST(strftime(\'%w\', substr("published_at", 1, 10)) AS INTEGER) '
                  'AS "dow", '
                  'strftime(\'%Y-%m-01\', "day") AS "first" FROM "posts"',
        "mysql": "SELECT `id`, CAST(DATE_FORMAT(`published_at`, '%%Y-%%m-01') AS DATETIME(6)) AS "
                 "`month`, (DAYOFWEEK(`published_at`) - 1) AS `dow`, CAST(DATE_FORMAT(`day`, "
                 "'%%Y-%%m-01') AS DATE) AS `first` FROM `posts`",
    }


def test_case_binds_its_values_and_group_by_an_expression_is_by_position() -> None:
    stmt = select(Post, ["id"]).add_columns({
        "state": sql.case(({"published_at": None}, sql.value("draft")),
                          ({"likes": {"gt": 10}}, sql.value("hot")), else_=sql.value("live")),
    }).where({"shares": 1}).order_by("state")
    compiled = stmt.compile("sqlite")
    assert compiled.sql == (
        'SELECT "id", CASE WHEN "published_at" IS NULL THEN ? WHEN "likes" > ? THEN ? ELSE ? END '
        'AS "state" FROM "posts" WHERE "shares" = ? ORDER BY 2 ASC')
    assert compiled.params == ("draft", 10, "hot", "live", 1)
    grouped = select(Post).aggregate([{"month": sql.date_trunc("month", "published_at")}],
                                     {"n": sql.count()}).order_by("month", "desc")
    assert grouped.compile("postgresql").sql == (
        'SELECT (date_trunc(\'month\', "published_at" AT TIME ZONE \'UTC\') AT TIME ZONE \'UTC\') '
        'AS "month", COUNT(*) AS "n" FROM "posts" GROUP BY 1 ORDER BY 1 DESC NULLS LAST')


def test_windows_per_dialect() -> None:
    stmt = select(Comment, ["id"]).add_columns({
        "pos": sql.row_number().over(partition_by=["post_id"], order_by=[("created_at", "desc")]),
        "run": sql.sum("id").over(order_by=["created_at"]),
        "prev": sql.lag("id", n=2).over(order_by=["id"]),
    })
    assert sqls(stmt) == {
        "postgresql": 'SELECT "id", ROW_NUMBER() OVER (PARTITION BY "post_id" ORDER BY '
                      '"created_at" DESC) AS "pos", SUM("id") OVER (ORDER BY "created_at" ASC) AS '
                      '"run", LAG("id", CAST(%s AS integer)) OVER (ORDER BY "id" ASC) AS "prev" '
                      'FROM "comments"',
        "sqlite": 'SELECT "id", ROW_NUMBER() OVER (PARTITION BY "post_id" ORDER BY "created_at" '
                  'DESC) AS "pos", SUM("id") OVER (ORDER BY "created_at" ASC) AS "run", LAG("id", '
                  '?) OVER (ORDER BY "id" ASC) AS "prev" FROM "comments"',
        # qualified: a bare name in OVER (...) would mean a label of that name here
        "mysql": 'SELECT `id`, ROW_NUMBER() OVER (PARTITION BY `comments`.`post_id` ORDER BY '
                 '`comments`.`created_at` DESC) AS `pos`, SUM(`comments`.`id`) OVER (ORDER BY '
                 '`comments`.`created_at` ASC) AS `run`, LAG(`comments`.`id`, %s) OVER (ORDER '
                 'BY `comments`.`id` ASC) AS `prev` FROM `comments`',
    }
    assert stmt.compile("mysql").params == (2,)


def test_expressions_in_where_and_set_are_bound() -> None:
    stmt = update(Post).set({"likes": sql.col("likes") + 1}).where(
        {"title": sql.lower(sql.value("HELLO"))})
    assert stmt.compile("postgresql") == (
        'UPDATE "posts" SET "likes" = ("likes" + CAST(%s AS bigint)) WHERE "title" = '
        'LOWER(CAST(%s AS text) COLLATE "C")', (1, "HELLO"))


def test_join_labels_follow_the_models() -> None:
    stmt = join(Post, "p").left_join(Comment, "c", {"p.id": "c.post_id"}).add_columns(
        {"t": sql.upper("p.title")})
    assert stmt.compile("sqlite").sql.endswith(
        'UPPER("p"."title") AS "t" FROM "posts" AS "p" LEFT JOIN "comments" AS "c" ON '
        '"p"."id" = "c"."post_id"')


@pytest.mark.parametrize("label", ["_x", "class", "title", "id", "not a name"])
def test_a_label_that_is_no_identifier_or_clashes_is_refused(label: str) -> None:
    with pytest.raises(ValidationError, match="add_columns"):
        select(Post, ["id", "title"]).add_columns({label: sql.length("title")})


def test_a_join_label_may_not_be_an_alias() -> None:
    with pytest.raises(ValidationError, match="fetched column"):
        join(Post, "p").add_columns({"p": sql.length("p.title")})


@pytest.mark.parametrize(("expression", "message"), [
    (sql.lower("likes"), "lower takes text"),
    (sql.col("title") + 1, r"\+ takes numbers"),
    (sql.date_trunc("hour", "day"), "a date, which has no hour"),
    (sql.coalesce("title", "likes"), "coalesce takes values of one family"),
    (sql.row_number(), "add .over"),
    (sql.count(), "window function"),
    (sql.case(({"likes": 1}, sql.value("a")), else_=sql.value(2)), "one family"),
    (sql.length("nope"), "nope"),
])
def test_mistakes_are_refused_at_build(expression: object, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        select(Post, ["id"]).add_columns({"x": expression})


def test_a_window_is_refused_in_where() -> None:
    with pytest.raises(ValidationError, match="add_columns"):
        select(Post).where({"likes": sql.row_number().over(order_by=["id"])})


def test_a_computed_value_of_another_family_is_refused_in_where() -> None:
    with pytest.raises(ValidationError, match="one family"):
        select(Post).where({"title": {"eq": sql.length("title")}})


def test_bad_units_and_digits_are_refused() -> None:
    with pytest.raises(ValidationError, match="unit"):
        sql.date_trunc("week", "published_at")
    with pytest.raises(ValidationError, match="part"):
        sql.extract("second", "published_at")
    with pytest.raises(ValidationError, match="digits"):
        sql.round("price", -1)
    with pytest.raises(ValidationError, match="n="):
        sql.lag("id", n=-1)


def test_decimal_arithmetic_on_sqlite_names_the_way_out() -> None:
    stmt = select(Post, ["id"]).add_columns({"double": sql.col("amount") * 2})
    assert '("amount" * CAST(%s AS bigint))' in stmt.compile("postgresql").sql
    with pytest.raises(DialectError, match="SQLite stores Decimal as text"):
        stmt.compile("sqlite")
    with pytest.raises(DialectError, match="SQLite stores Decimal as text"):
        select(Post, ["id"]).add_columns({"r": sql.round("amount", 1)}).compile("sqlite")


def test_add_columns_and_aggregate_do_not_combine() -> None:
    with pytest.raises(ValidationError, match="do not combine"):
        select(Post).add_columns({"n": sql.length("title")}).aggregate([], {"c": sql.count()})
    with pytest.raises(ValidationError, match="called once"):
        select(Post).add_columns({"n": sql.length("title")}).add_columns({"m": sql.abs("likes")})


def test_values_are_never_in_the_text() -> None:
    stmt = select(Post, ["id"]).add_columns({
        "x": sql.coalesce("nickname", sql.value("'; DROP TABLE posts; --")),
        "t": sql.case(({"published_at": {"gt": datetime(2026, 1, 1, tzinfo=UTC)}},
                       sql.value(1)), else_=sql.value(0)),
    })
    for dialect in ("postgresql", "sqlite", "mysql"):
        compiled = stmt.compile(dialect)
        assert "DROP" not in compiled.sql
        assert compiled.params[0] == "'; DROP TABLE posts; --"


def _latest() -> Any:
    ranked = (select(Comment, ["id", "post_id"]).where({"id": {"gt": 7}})
              .add_columns({"pos": sql.row_number().over(partition_by=["post_id"],
                                                         order_by=[("id", "desc")])}))
    return sql.cte("latest", ranked)


def test_a_named_select_is_written_in_with_and_binds_its_values_first() -> None:
    stmt = select(_latest()).where({"pos": 1})
    assert stmt.compile("postgresql") == (
        'WITH "latest" ("id", "post_id", "pos") AS (SELECT "id", "post_id", ROW_NUMBER() OVER '
        '(PARTITION BY "post_id" ORDER BY "id" DESC) AS "pos" FROM "comments" WHERE "id" > %s) '
        'SELECT "id", "post_id", "pos" FROM "latest" WHERE "pos" = %s', (7, 1))


def test_a_joined_named_select_binds_its_values_where_it_is_joined() -> None:
    stmt = (join(Post, "p").where({"p.likes": 3})
            .left_join(_latest(), "c", {"p.id": "c.post_id"}).where({"c.pos": 1}))
    compiled = stmt.compile("sqlite")
    assert compiled.sql.startswith('WITH "latest" ("id", "post_id", "pos") AS (SELECT ')
    assert compiled.sql.endswith(
        'FROM "posts" AS "p" LEFT JOIN "latest" AS "c" ON "p"."id" = "c"."post_id" WHERE '
        '"p"."likes" = ? AND "c"."pos" = ?')
    assert compiled.params == (7, 3, 1)


def test_a_named_select_checks_its_column_names() -> None:
    with pytest.raises(ValidationError, match="latest has no column 'nope'"):
        select(_latest()).where({"nope": 1})
    with pytest.raises(ValidationError, match="the name"):
        sql.cte("not a name", select(Post))
    with pytest.raises(ValidationError, match="models by alias"):
        sql.cte("j", join(Post, "p"))


class Archive(Model, table="archive"):
    id: int = column(primary_key=True)
    title: str


def test_set_operations_per_dialect() -> None:
    stmt = (select(Post, ["id"]).where({"likes": 3}).union(select(Archive, ["id"]))
            .except_(select(Comment, ["post_id"]).where({"id": 9})).order_by("id", "desc")
            .limit(5))
    assert sqls(stmt) == {
        "postgresql": 'SELECT "id" FROM "posts" WHERE "likes" = %s UNION SELECT "id" FROM '
                      '"archive" EXCEPT SELECT "post_id" FROM "comments" WHERE "id" = %s ORDER BY '
                      '1 DESC NULLS LAST LIMIT 5',
        "sqlite": 'SELECT "id" FROM "posts" WHERE "likes" = ? UNION SELECT "id" FROM "archive" '
                  'EXCEPT SELECT "post_id" FROM "comments" WHERE "id" = ? ORDER BY 1 DESC '
                  'LIMIT 5',
        "mysql": 'SELECT `id` FROM `posts` WHERE `likes` = %s UNION SELECT `id` FROM `archive` '
                 'EXCEPT SELECT `post_id` FROM `comments` WHERE `id` = %s ORDER BY 1 DESC '
                 'LIMIT 5',
    }
    assert stmt.compile("sqlite").params == (3, 9)


def test_insert_from_select() -> None:
    stmt = insert(Archive).from_select(select(Post, ["id", "title"]).where({"likes": 0}))
    assert stmt.compile("mysql") == (
        "INSERT INTO `archive` (`id`, `title`) SELECT `id`, `title` FROM `posts` WHERE "
        "`likes` = %s", (0,))


def test_a_recursive_named_select_per_dialect() -> None:
    base = select(Comment, ["id", "post_id"]).where({"id": 1}).add_columns({"depth": sql.value(0)})
    thread = sql.recursive_cte(
        "thread", base,
        lambda t: join(Comment, "c").inner_join(t, "t", {"c.post_id": "t.id"})
        .project({"id": "c.id", "post_id": "c.post_id", "depth": sql.col("t.depth") + 1}))
    stmt = select(thread).where({"depth": {"lt": 5}})
    compiled = stmt.compile("postgresql")
    assert compiled.sql == (
        'WITH RECURSIVE "thread" ("id", "post_id", "depth") AS (SELECT "id", "post_id", '
        'CAST(%s AS bigint) AS "depth" FROM "comments" WHERE "id" = %s UNION ALL SELECT '
        '"c"."id" AS "id", "c"."post_id" AS "post_id", ("t"."depth" + CAST(%s AS bigint)) AS '
        '"depth" FROM "comments" AS "c" INNER JOIN "thread" AS "t" ON "c"."post_id" = "t"."id") '
        'SELECT "id", "post_id", "depth" FROM "thread" WHERE "depth" < %s')
    assert compiled.params == (0, 1, 1, 5)
    assert stmt.compile("sqlite").sql.startswith('WITH RECURSIVE "thread" ("id", "post_id", '
                                                 '"depth") AS (SELECT "id", "post_id", ? AS')
    with pytest.raises(ValidationError, match="the same columns"):
        sql.recursive_cte("t2", base, lambda t: select(t, ["id"]))


def test_a_recursive_base_s_text_is_cast_and_its_limit_wrapped() -> None:
    base = select(Post, ["id", "title"]).order_by("id").limit(1)
    tree = sql.recursive_cte("tree", base, lambda t: join(Post, "p").inner_join(
        t, "t", {"p.likes": "t.id"}).project({"title": "p.title", "id": "p.id"}))
    assert sqls(select(tree)) == {
        "postgresql": 'WITH RECURSIVE "tree" ("id", "title") AS (SELECT * FROM (SELECT "id", '
                      'CAST("title" AS text) COLLATE "C" AS "title" FROM "posts" ORDER BY "id" ASC '
                      'LIMIT 1) AS "tree_base" UNION ALL SELECT "p"."id" AS "id", "p"."title" AS '
                      '"title" FROM "posts" AS "p" INNER JOIN "tree" AS "t" ON "p"."likes" = '
                      '"t"."id") SELECT "id", "title" FROM "tree"',
        "sqlite": 'WITH RECURSIVE "tree" ("id", "title") AS (SELECT * FROM (SELECT "id", "title" '
                  'AS "title" FROM "posts" ORDER BY "id" ASC LIMIT 1) AS "tree_base" UNION ALL '
                  'SELECT "p"."id" AS "id", "p"."title" AS "title" FROM "posts" AS "p" INNER '
                  'JOIN "tree" AS "t" ON "p"."likes" = "t"."id") SELECT "id", "title" FROM '
                  '"tree"',
        "mysql": 'WITH RECURSIVE `tree` (`id`, `title`) AS (SELECT * FROM (SELECT `id`, '
                 'CAST(`title` AS CHAR(16777215) CHARACTER SET utf8mb4) COLLATE '
                 'utf8mb4_0900_bin AS `title` FROM `posts` ORDER BY `id` ASC LIMIT 1) AS '
                 '`tree_base` UNION ALL SELECT `p`.`id` AS `id`, `p`.`title` AS `title` FROM '
                 '`posts` AS `p` INNER JOIN `tree` AS `t` ON `p`.`likes` = `t`.`id`) SELECT '
                 '`id`, `title` FROM `tree`',
    }


def test_a_set_operation_writes_the_named_selects_of_its_members_first() -> None:
    latest = sql.cte("latest", select(Comment, ["id"]).where({"id": {"gt": 1}}))
    rest = sql.cte("rest", select(Comment, ["id"]).where({"id": {"lt": 3}}))
    stmt = select(latest).where({"id": 2}).union(select(rest))
    assert stmt.compile("sqlite") == (
        'WITH "latest" ("id") AS (SELECT "id" FROM "comments" WHERE "id" > ?), "rest" ("id") AS '
        '(SELECT "id" FROM "comments" WHERE "id" < ?) SELECT "id" FROM "latest" WHERE "id" = ? '
        'UNION SELECT "id" FROM "rest"', (1, 3, 2))


def test_having_on_a_computed_group_that_binds_a_value_names_the_way_out_on_postgresql() -> None:
    grouped = select(Post).aggregate([{"bucket": sql.col("likes") * 10}], {"n": sql.count()})
    having = grouped.having({"bucket": {"gt": 15}})
    with pytest.raises(DialectError, match=r"sql\.cte\(\) and filter it with where\(\)"):
        having.compile("postgresql")
    assert having.compile("mysql").sql.endswith("GROUP BY 1 HAVING `bucket` > %s")
    assert having.compile("sqlite").sql.endswith(
        'GROUP BY 1 HAVING CASE WHEN typeof(("likes" * ?)) = \'real\' THEN '
        'abs(-9223372036854775807 - 1) ELSE ("likes" * ?) END > ?')
    named = select(sql.cte("b", grouped)).where({"bucket": {"gt": 15}})
    assert named.compile("postgresql").params == (10, 15)


def test_as_subquery_of_a_label() -> None:
    longest = select(Post, ["id"]).add_columns({"n": sql.length("title")}).as_subquery("n")
    stmt = select(Post).where({"likes": {"in": longest}})
    assert stmt.compile("sqlite").sql == (
        'SELECT "id", "title", "nickname", "likes", "shares", "price", "amount", "published_at", '
        '"day" FROM "posts" WHERE "likes" IN (SELECT LENGTH("title") AS "n" FROM "posts")')
    counts = (select(Post).aggregate([{"month": sql.extract("month", "day")}], {"n": sql.count()})
              .as_subquery("n"))
    assert select(Post).where({"likes": {"in": counts}}).compile("sqlite").sql.endswith(
        'IN (SELECT COUNT(*) AS "n" FROM "posts" GROUP BY CAST(strftime(\'%m\', "day") AS '
        'INTEGER))')


def test_a_named_union_binds_its_values_where_it_is_joined() -> None:
    ids = sql.cte("ids", select(Post, ["id"]).where({"title": "x"}).union_all(
        select(Comment, ["post_id"]).where({"id": {"gt": 9}})))
    stmt = join(Post, "p").where({"p.likes": 3}).inner_join(ids, "i", {"p.id": "i.id"})
    compiled = stmt.compile("sqlite")
    assert compiled.sql.startswith(
        'WITH "ids" ("id") AS (SELECT "id" FROM "posts" WHERE "title" = ? UNION ALL SELECT '
        '"post_id" FROM "comments" WHERE "id" > ?) SELECT ')
    assert compiled.params == ("x", 9, 3)


def test_a_function_of_a_column_is_refused_in_values() -> None:
    with pytest.raises(ValidationError, match="no columns to read yet"):
        insert(Archive).values({"id": 1, "title": sql.lower("title")})
    for ref in (sql.col("title"), sql.col("archive.title"), sql.expr("{}", sql.col("title"))):
        with pytest.raises(ValidationError, match="no columns to read yet"):
            insert(Archive).values({"id": 1, "title": ref})
    stmt = insert(Archive).values({"id": 1, "title": sql.lower(sql.value("ABC"))})
    assert stmt.compile("sqlite") == (
        'INSERT INTO "archive" ("id", "title") VALUES (?, LOWER(?))', (1, "ABC"))


def test_a_function_takes_a_column_qualified_by_its_table() -> None:
    stmt = select(Post, ["id"]).add_columns({"n": sql.length(sql.col("posts.title")) + 1})
    assert stmt.compile("sqlite").sql == (
        'SELECT "id", CASE WHEN typeof((LENGTH("posts"."title") + ?)) = \'real\' THEN '
        'abs(-9223372036854775807 - 1) ELSE (LENGTH("posts"."title") + ?) END AS "n" FROM "posts"')
    with pytest.raises(ValidationError, match="reads columns of this statement"):
        select(Post, ["id"]).add_columns({"n": sql.length(sql.col("users.name"))})
