"""The rules of SQL text the caller writes: `sql.raw`, `sql.expr` and `execute_sql`.

A fragment (`sql.raw`, the text of `sql.expr`) is written into a statement the builder
makes, between clauses the builder writes. It must not reach past itself on any database: a
comment, a `;`, an unclosed quote, parenthesis or bracket, a dollar-quoted string or a
numbered parameter would swallow, end or rebind the SQL around it. `check_fragment()`
refuses these, reading quoted strings and identifiers as every dialect reads them ('...' with
'' for a quote inside, "..." and `...` identifiers), and names the way out.

A whole statement (`execute_sql`) is the caller's own: it is checked only for what a driver
would cut or cannot send (a NUL, text that is not valid Unicode). That it runs as one
statement is each driver's setting (engine/drivers/).
"""

from __future__ import annotations

import re

from .errors import ValidationError

__all__ = ["PLACEHOLDER", "check_fragment", "check_statement_text"]

#: marks where an sql.expr placeholder `{}` stands in the text check_fragment() reads (a NUL:
#: refused in the text itself, so it can only be a placeholder)
PLACEHOLDER = "\x00"

#: the characters after which nothing needs a closer look: the plain text of most fragments
_PLAIN = re.compile(r"[^'\"`;#\-/\\$()\[\]?\x00]*")
#: PostgreSQL's dollar quote opener: $$ or $tag$
_DOLLAR_QUOTE = re.compile(r"\$(?:[A-Za-z_\x80-\uffff][A-Za-z0-9_\x80-\uffff]*)?\$")
_IDENTIFIER_CHAR = re.compile(r"[A-Za-z0-9_$\x80-\uffff]")
#: what a `...` identifier may not hold: PostgreSQL reads the backquote as an operator, so
#: what is inside is SQL there, not a name
_IN_BACKQUOTES = re.compile(r"['\"\\;#$()\[\]\x00]|--|/\*")

#: fragments already found good (sql.raw takes literal strings: a few hundred at most). The
#: seed's claim builds sql.raw("attempts + 1") every time it is written.
_CHECKED: dict[str, None] = {}


def _short(text: str) -> str:
    shown = repr(text.replace(PLACEHOLDER, "{}"))
    return shown if len(shown) <= 70 else shown[:67] + "..."


def _refuse(what: str, text: str, problem: str) -> ValidationError:
    return ValidationError(f"{what} {_short(text)}: {problem}")


def check_unicode(text: str, what: str) -> None:
    """Raise ValidationError for text holding a NUL or not valid Unicode (a lone surrogate)."""
    if "\x00" in text:
        raise ValidationError(
            f"{what} {_short(text.replace(chr(0), '<NUL>'))}: holds a NUL character, where "
            "libpq would cut the statement; remove it (a value with a NUL is bytes: bind it "
            "as a parameter)"
        )
    _check_encodes(text, what)


def _check_encodes(text: str, what: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise _refuse(what, text, f"is not valid Unicode ({exc.reason} at {exc.start}); "
                                      "a database takes UTF-8 text") from None


def check_statement_text(sql: object) -> str:
    """The text of an execute_sql() statement, or ValidationError (not a str, a NUL, not
    valid Unicode)."""
    if not isinstance(sql, str):
        raise ValidationError(
            f"execute_sql() takes the SQL text as a str, got {type(sql).__name__} "
            f"{sql!r:.60}"
        )
    check_unicode(sql, "execute_sql(): the SQL")
    return sql


def check_fragment(text: str, what: str) -> None:
    """Raise ValidationError unless the fragment `text` stays within itself on every database.

    `what` names it in the message ("sql.raw()"); a PLACEHOLDER in `text` is an sql.expr `{}`.
    """
    if text in _CHECKED:
        return
    _scan(text, what)
    if len(_CHECKED) >= 4096:
        _CHECKED.clear()
    _CHECKED[text] = None


def _scan(text: str, what: str) -> None:
    _check_encodes(text, what)
    parens = brackets = 0
    i, n = 0, len(text)
    while True:
        i = _PLAIN.match(text, i).end()  # type: ignore[union-attr]  # matches the empty string too
        if i >= n:
            break
        ch = text[i]
        if ch in "'\"":
            i = _quoted_end(text, i, what)
            continue
        if ch == "`":
            end = text.find("`", i + 1)
            if end < 0:
                raise _refuse(what, text, "a `...` identifier is not closed; close it with `")
            inner = text[i + 1:end]
            if _IN_BACKQUOTES.search(inner):
                raise _refuse(what, text, f"the `...` identifier `{inner}` holds a quote, "
                              "comment, ;, $, bracket or placeholder, which PostgreSQL would "
                              "read as SQL; quote the name with \"...\"")
            i = end + 1
            continue
        if ch == ";":
            raise _refuse(what, text, "a ; ends the statement the builder writes, and what "
                          "follows would run as a statement of its own; an expression holds "
                          "no ; (run another statement with execute() on its own)")
        if ch == "#" or text.startswith("--", i) or text.startswith("/*", i):
            opener = "# starts a comment on MySQL" if ch == "#" else f"{text[i:i + 2]} starts a comment"
            raise _refuse(what, text, f"{opener}, which would hide the SQL the builder writes "
                          "after the expression; an expression holds no comment: remove it")
        if ch == "$" and i + 1 < n and text[i + 1] == PLACEHOLDER:
            raise _refuse(what, text, "a $ right before {} would make a dollar quote or a "
                          "numbered parameter of the placeholder on PostgreSQL; write a space "
                          "between them")
        if ch == PLACEHOLDER:
            if i + 1 < n and text[i + 1].isdigit():
                raise _refuse(what, text, "a digit right after {} would make a numbered "
                              "parameter of the placeholder ($1 then 2 reads as $12 on "
                              "PostgreSQL); write a space between them")
        elif ch == "$" and (i == 0 or not _IDENTIFIER_CHAR.match(text[i - 1])):
            if _DOLLAR_QUOTE.match(text, i):
                raise _refuse(what, text, "a dollar-quoted string ($$...$$) is PostgreSQL's "
                              "alone and runs past the expression elsewhere; write a "
                              "'...' string, or bind the value with sql.expr(\"{}\", value)")
            if i + 1 < n and text[i + 1].isdigit():
                raise _refuse(what, text, f"{text[i:i + 2]} is a numbered parameter, which "
                              "would read a value the builder bound for something else; bind "
                              "values with sql.expr(\"... {} ...\", value)")
        elif ch == "?" and i + 1 < n and text[i + 1].isdigit():
            raise _refuse(what, text, f"{text[i:i + 2]} is a numbered parameter on SQLite, "
                          "which would read a value the builder bound for something else; "
                          "bind values with sql.expr(\"... {} ...\", value)")
        elif ch == "\\":
            raise _refuse(what, text, "a backslash outside a string is no SQL on PostgreSQL "
                          "and SQLite, and an escape on MySQL; remove it")
        elif ch == "(":
            parens += 1
        elif ch == ")":
            parens -= 1
            if parens < 0:
                raise _refuse(what, text, "a ) closes a parenthesis the expression did not "
                              "open, which would end a clause the builder wrote; balance the "
                              "parentheses")
        elif ch == "[":
            brackets += 1
        elif ch == "]":
            brackets -= 1
            if brackets < 0:
                raise _refuse(what, text, "a ] closes a bracket the expression did not open; "
                              "balance the brackets")
        i += 1
    if parens:
        raise _refuse(what, text, f"{parens} parenthesis(es) opened and not closed, which "
                      "would take in the SQL the builder writes after it; close them")
    if brackets:
        raise _refuse(what, text, "a [ is not closed ([...] quotes a name on SQLite, and "
                      "would take in the SQL written after it); close it with ]")


def _quoted_end(text: str, start: int, what: str) -> int:
    """Where the '...' string or "..." identifier opened at `start` ends (past its quote)."""
    quote = text[start]
    kind = "string" if quote == "'" else "identifier"
    i = start + 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == quote:
            if i + 1 < n and text[i + 1] == quote:
                i += 2  # a doubled quote stands for one: still inside
                continue
            return i + 1
        if ch == "\\":
            raise _refuse(what, text, f"a backslash in a quoted {kind} escapes the next "
                          "character on MySQL and is a plain character elsewhere, so the text "
                          "would end at a different place; bind the value with "
                          "sql.expr(\"{}\", value)")
        if ch == PLACEHOLDER:
            raise _refuse(what, text, f"a {{}} inside a quoted {kind} is text, not a bound "
                          f"value; write the {{}} outside the quotes (sql.expr(\"{{}}\", value) "
                          "binds the whole value)")
        i += 1
    raise _refuse(what, text, f"a {quote}...{quote} {kind} is not closed, so it would take in "
                  f"the SQL the builder writes after it; close it (write {quote}{quote} for "
                  "a quote inside)")
