"""When a name that matches nothing is surely a typo, and not a name from elsewhere (an
enclosing statement's alias or table, a model of a module this one does not import). Part of
the foundation: imports no check.
"""

from __future__ import annotations

from mypy.checker import TypeChecker

from .tables import visible_models

__all__ = ["one_edit", "typo"]


def typo(api: TypeChecker, written: str, candidates: list[str]) -> str | None:
    """The qualifier of this statement that `written` (which none of its qualifiers is) was
    surely meant to be: one edit away, not at the end, and not a table of a model the module
    sees (which names an enclosing statement). Names that differ at the end only are told
    apart on purpose: an alias and its table (`order`, `orders`), numbered aliases (`user1`,
    `user2`, `orders2`) name different statements."""
    close = [c for c in candidates if len(c) >= 3 and one_edit(written, c)
             and not (c.startswith(written) or written.startswith(c)
                      or (len(c) == len(written) and c[:-1] == written[:-1]))]
    if not close:
        return None
    module = api.tree.fullname
    if written in visible_models(api.modules, module):
        return None
    return close[0]


def one_edit(a: str, b: str) -> bool:
    """Whether one insertion, deletion, substitution or swap of neighbours turns a into b."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) < len(b):
        return a[i:] == b[i + 1:]
    if a[i + 1:] == b[i + 1:]:
        return True
    return i + 1 < len(a) and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2:] == b[i + 2:]
