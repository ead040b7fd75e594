"""The rules of SQL text the caller writes, and of values bound without a column type.

sql.raw and sql.expr text stays within itself on every database (no comment, no ;, no quote,
parenthesis or bracket left open, no dollar quote or numbered parameter); an sql.expr value
or an sql.now(plus=...) is one that every driver stores as it is; a column value no database
takes is refused when the statement is built; and a built statement keeps its own copy of
what it binds.
"""

from __future__ import annotations

import pytest

from tempest_typed import ValidationError, sql


@pytest.mark.parametrize("text", [
    "attempts + 1", "COALESCE(note, '')", "'it''s'", '"odd ""name"""', "`name`",
    "lower(name) || '--' || '#;'", "'/* not a comment */'", "tags[1]", "x::int",
    "data ->> 'k'", "a - -1", "a / 2 * 3", "price$", "'$$'", "CASE WHEN a THEN 1 END",
    "'a\"b'", "\"a'b\"", "'ünïcode'", "a ? 'key'",
])
def test_text_that_stays_within_itself_is_taken(text: str) -> None:
    assert sql.raw(text).text == text  # type: ignore[attr-defined]  # a Raw
    assert sql.expr(text + " + {}", 1) is not None


@pytest.mark.parametrize(("text", "message"), [
    ("1; DELETE FROM t", "a ; ends the statement"),
    ("1;", "a ; ends the statement"),
    ("1 -- x", "-- starts a comment"),
    ("1 # x", "# starts a comment on MySQL"),
    ("1 /* x */", "/\\* starts a comment"),
    ("'open", "'...' string is not closed"),
    ("'it\\'s'", "backslash in a quoted string"),
    ('"open', '"..." identifier is not closed'),
    ("`open", "identifier is not closed"),
    ("`a'b`", "PostgreSQL would read as SQL"),
    ("`a--b`", "PostgreSQL would read as SQL"),
    ("(1", "opened and not closed"),
    ("1)", "closes a parenthesis"),
    ("1) OR (1 = 1", "closes a parenthesis"),
    ("a[1", "is not closed"),
    ("a]", "closes a bracket"),
    ("$$ x $$", "dollar-quoted"),
    ("$tag$ x $tag$", "dollar-quoted"),
    ("$1", "numbered parameter"),
    ("?1", "numbered parameter on SQLite"),
    ("a \\ b", "backslash outside a string"),
    ("a\x00b", "NUL"),
    ("a\ud800", "not valid Unicode"),
])
def test_text_that_reaches_past_itself_is_refused(text: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        sql.raw(text)  # type: ignore[arg-type]  # the literal strings above
    with pytest.raises(ValidationError, match=message):
        sql.expr("{} + " + text.replace("{", "{{").replace("}", "}}"), 1)


def test_an_expr_placeholder_inside_quotes_is_refused() -> None:
    with pytest.raises(ValidationError, match="inside a quoted string is text"):
        sql.expr("'{}'", 1)
    with pytest.raises(ValidationError, match="inside a quoted identifier"):
        sql.expr('"{}"', 1)
    assert sql.expr("'a' || {} || 'b'", "x") is not None


def test_the_text_rules_hold_across_the_parts_of_an_expr() -> None:
    with pytest.raises(ValidationError, match="not closed"):
        sql.expr("({}", 1)
    assert sql.expr("({} + {})", 1, 2) is not None
    assert sql.expr("{} -{}", 1, -1) is not None


@pytest.mark.parametrize(("template", "inner", "message"), [
    ("a -{}", "-1", "-- starts a comment"),
    ("a /{}", "* 2", "/\\* starts a comment"),
    ("{}- 1", "a -", "-- starts a comment"),
    ("({}", "1", "opened and not closed"),
])
def test_an_expression_inside_an_expr_is_read_where_it_stands(template: str, inner: str,
                                                              message: str) -> None:
    raw = sql.raw(inner)  # type: ignore[arg-type]  # the literal strings above
    with pytest.raises(ValidationError, match=message):
        sql.expr(template, raw)
    with pytest.raises(ValidationError, match=message):
        sql.expr(template, sql.expr("{}", raw))  # an expression two levels down


def test_a_placeholder_does_not_merge_with_what_stands_next_to_it() -> None:
    with pytest.raises(ValidationError, match="a digit right after"):
        sql.expr("{}1", 5)  # %s1 is $11 on PostgreSQL, ?1 on SQLite
    with pytest.raises(ValidationError, match="a \\$ right before"):
        sql.expr("${}", 5)  # $%s is $$1 on PostgreSQL: a dollar quote
    assert sql.expr("{} 1", 5) is not None
