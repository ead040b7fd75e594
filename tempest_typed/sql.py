"""The `sql` namespace: raw, expr, now and excluded, the expressions accepted as values."""

from __future__ import annotations

from numbers import Real
from typing import LiteralString

from .errors import ValidationError
from .expressions import NOW, Excluded, Expr, Expression, Now, Raw

__all__ = ["Expression", "excluded", "expr", "now", "raw"]


def raw(text: LiteralString) -> Expression:
    """Verbatim SQL; pass a literal string only (the mypy plugin enforces it)."""
    if not isinstance(text, str) or not text.strip():
        raise ValidationError(f"sql.raw() takes a non-empty literal string, got {text!r}")
    return Raw(text)


def _split_format(template: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    i, n = 0, len(template)
    while i < n:
        ch = template[i]
        if ch == "{":
            if template.startswith("{{", i):
                current.append("{")
                i += 2
                continue
            if template.startswith("{}", i):
                parts.append("".join(current))
                current = []
                i += 2
                continue
            raise ValidationError(
                f"sql.expr: only empty placeholders {{}} are allowed, found {template[i:i + 10]!r}"
                " (write {{ for a literal brace)"
            )
        if ch == "}":
            if template.startswith("}}", i):
                current.append("}")
                i += 2
                continue
            raise ValidationError("sql.expr: a lone } must be written }}")
        current.append(ch)
        i += 1
    parts.append("".join(current))
    return parts


def expr(template: object, *values: object) -> Expression:
    """SQL text whose `{}` placeholders are bound parameters (or a t-string on Python 3.14)."""
    if type(template).__name__ == "Template" and type(template).__module__ == "string.templatelib":
        if values:
            raise ValidationError("sql.expr(t\"...\") takes no further arguments")
        texts: list[str] = []
        bound: list[object] = []
        pending = ""
        for item in template:  # type: ignore[attr-defined]
            if isinstance(item, str):
                pending += item
            else:
                texts.append(pending)
                pending = ""
                bound.append(item.value)
        texts.append(pending)
        return Expr(tuple(texts), tuple(bound))
    if not isinstance(template, str):
        raise ValidationError(f"sql.expr() takes a format string, got {type(template).__name__}")
    parts = _split_format(template)
    if len(parts) != len(values) + 1:
        raise ValidationError(
            f"sql.expr: {len(parts) - 1} placeholder(s) {{}} but {len(values)} value(s) given"
        )
    for value in values:
        if isinstance(value, dict | list | set | tuple) and not isinstance(value, Expression):
            raise ValidationError(
                f"sql.expr: a {type(value).__name__} cannot be bound as one parameter"
            )
    return Expr(tuple(parts), tuple(values))


def now(plus: float | Expression | None = None) -> Expression:
    """The current UTC timestamp, optionally `plus` seconds (a number or an expression)."""
    if plus is None:
        return NOW
    if isinstance(plus, bool) or not isinstance(plus, Real | Expression):
        raise ValidationError(f"sql.now(plus=...) takes seconds as a number or sql.* expression, got {plus!r}")
    return Now(plus)


def excluded(column: str) -> Expression:
    """The value that an upsert tried to insert into `column` (EXCLUDED / VALUES())."""
    if not isinstance(column, str):
        raise ValidationError(f"sql.excluded() takes a column name, got {column!r}")
    return Excluded(column)
