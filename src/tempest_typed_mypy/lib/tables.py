"""Table names: what a model's table is called in SQL, and which models a module can see.

`class User(Model, table="users", naming="snake_case")` says its table and how attribute names
become SQL names in its class keywords, which the class-definition hook records in the class's
`TypeInfo.metadata` (its own entry, beside the column facts of metadata.py), so a warm run
reads them from the cache. A qualified `sql.col("users.id")` and a foreign key
`references="users.id"` name a table this way. Part of the foundation: imports no check.
"""

from __future__ import annotations

import re

from mypy.nodes import MypyFile, StrExpr, TypeInfo
from mypy.plugin import ClassDefContext

from . import metadata
from .metadata import KEY

__all__ = ["TABLE_KEY", "collect_table", "snake_case", "sql_name", "table_of", "visible_models"]

TABLE_KEY = "tempest_typed.table"


def snake_case(name: str) -> str:
    """`NextAttemptAt` and `nextAttemptAt` become `next_attempt_at`."""
    # The runtime's rule (tempest_typed.model.snake_case), which the plugin does not import.
    # Patterns given as strings are compiled on first use (and cached by `re`), not each
    # time mypy loads the plugin.
    words = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", words).lower()


def _camel_case(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def collect_table(ctx: ClassDefContext) -> None:
    """Record the model's table name and naming from its class keywords (None when they are
    not literal strings: not judged)."""
    keywords = ctx.cls.keywords
    table = keywords.get("table")
    naming = keywords.get("naming")
    ctx.cls.info.metadata[TABLE_KEY] = {
        "table": table.value if isinstance(table, StrExpr) else (
            snake_case(ctx.cls.name) if table is None else None),
        "naming": naming.value if isinstance(naming, StrExpr) else (
            "preserve" if naming is None else None),
    }


def table_of(info: TypeInfo) -> str | None:
    """The model's SQL table name; None when it is not known."""
    entry = info.metadata.get(TABLE_KEY)
    if entry is None:
        return None
    table = entry.get("table")
    return table if isinstance(table, str) else None


def sql_name(info: TypeInfo, attr: str, explicit: str | None) -> str | None:
    """The SQL name of a column of the model: `column(name=...)`, else the naming of its
    class; None when the naming is not known (a callable)."""
    if explicit is not None:
        return explicit
    entry = info.metadata.get(TABLE_KEY) or {}
    naming = entry.get("naming")
    if naming == "preserve":
        return attr
    if naming == "snake_case":
        return snake_case(attr)
    if naming == "camelCase":
        return _camel_case(attr)
    return None


#: module name -> (the modules' generation, the models it sees by table name)
_VISIBLE: dict[str, tuple[int, dict[str, list[TypeInfo]]]] = {}
_SKIPPED = ("builtins", "typing", "typing_extensions", "tempest_typed", "mypy_extensions",
            "_typeshed", "abc", "collections", "types")


def _imported(modules: dict[str, MypyFile], module: str) -> list[str]:
    """The modules `module`'s import statements name (those mypy loaded)."""
    from mypy.nodes import Import, ImportAll, ImportFrom
    from mypy.util import correct_relative_import

    tree = modules.get(module)
    if tree is None:
        return []
    init = tree.path.endswith("__init__.py") or tree.path.endswith("__init__.pyi")
    found: list[str] = []
    for imp in tree.imports:
        if isinstance(imp, Import):
            found.extend(name for name, _ in imp.ids)
        elif isinstance(imp, ImportFrom | ImportAll):
            base, _ = correct_relative_import(module, imp.relative, imp.id, init)
            found.append(base)
            if isinstance(imp, ImportFrom):
                found.extend(f"{base}.{name}" for name, _ in imp.names)
    return [name for name in found if name in modules]


def visible_models(modules: dict[str, MypyFile], module: str) -> dict[str, list[TypeInfo]]:
    """The models a module sees, by table name: those of the module and of every module it
    imports, transitively. mypy analyses those before it checks the module in a cold run, a
    warm run, with workers and in the daemon alike (not its parent packages, which it loads
    but need not analyse first), so the answer is the same in each.

    The module's own imports are read from its syntax tree, which the module being checked
    always has; further out they are read from the symbol tables (what a module imports by
    name, and the module of each model it imports), which a module read from the cache has
    too, so `import shop.users` in an imported module is not followed unless it names one.
    """
    generation = metadata._generation
    hit = _VISIBLE.get(module)
    if hit is not None and hit[0] == generation:
        return hit[1]
    todo = [module, *_imported(modules, module)]
    seen: set[str] = set()
    found: dict[str, list[TypeInfo]] = {}
    while todo:
        name = todo.pop()
        if name in seen or name.partition(".")[0] in _SKIPPED:
            continue
        seen.add(name)
        tree = modules.get(name)
        if tree is None or tree.is_stub:
            continue
        for sym in tree.names.values():
            node = sym.node
            if isinstance(node, MypyFile):
                todo.append(node.fullname)
            elif isinstance(node, TypeInfo) and KEY in node.metadata:
                if node.module_name != name:
                    todo.append(node.module_name)
                    continue
                table = table_of(node)
                if table is not None and node not in found.get(table, ()):
                    found.setdefault(table, []).append(node)
    if len(_VISIBLE) >= 4096:
        _VISIBLE.clear()
    _VISIBLE[module] = (generation, found)
    return found
