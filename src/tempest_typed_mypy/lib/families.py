"""Which columns can be compared: the families of column kinds (numbers, text, bool, datetime,
date, UUID, bytes), as the runtime groups them, and the message for a pair across families.
Part of the foundation: imports no check.
"""

from __future__ import annotations

from mypy.nodes import Context

from .messages import COMPARE, column_name, describe
from .metadata import Column
from .scopes import Scope

__all__ = ["FAMILIES", "RULE", "compared", "moves_to", "same_family"]

#: the runtime's families (tempest_typed.statements.where.FAMILIES; test_runtime_rules.py
#: compares them)
FAMILIES = {
    "int": "number", "float": "number", "decimal": "number", "str": "text", "literal": "text",
    "bool": "bool", "datetime": "datetime", "date": "date", "uuid": "uuid", "bytes": "bytes",
}
RULE = ("compared columns must be of one family (numbers, text, bool, datetime, date, UUID, "
        "bytes)")


def same_family(a: str, b: str) -> bool:
    """Whether values of two column kinds can be compared (an unknown kind is not judged)."""
    if "any" in (a, b):
        return True
    family = FAMILIES.get(a)
    return family is not None and family == FAMILIES.get(b)


def moves_to(target: str, source: str) -> bool:
    """Whether a value of kind `source` can be stored in a `target` column or stand beside its
    values (set, from_select, union_all, coalesce): one family, or JSON beside JSON, which
    moving a value does not compare (the run time's where.moves_to)."""
    return same_family(target, source) or target == source == "json"


def compared(scope: Scope, col: Column, other: Column, what: str, where: str,
             context: Context, moved: bool = False) -> None:
    """Report `col` compared with `other` (named `what` where it was written) across
    families; `moved`: `other`'s value is stored in `col`, not compared with it."""
    if (moves_to if moved else same_family)(col.kind, other.kind):
        return
    options = scope.api.options
    json = "; JSON columns are not compared" if "json" in (col.kind, other.kind) else ""
    scope.fail(f"{column_name(col)} is {describe(col.type, options)}, but {what} is "
               f"{column_name(other)} of type {describe(other.type, options)} (in {where}): "
               f"{RULE}{json}", context, COMPARE)
