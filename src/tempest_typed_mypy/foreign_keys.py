"""Foreign keys: `column(references="users.id")` names the table of a model and one of its
columns, by SQL name (the DDL writes `REFERENCES "users" ("id")`).

Checked against the models the module sees (visible_models, lib/tables.py): the model whose
table it names must have that column. A table that none of them has may be a model of a module
this one does not import, or a table that is not a model at all (create_all then finds it or
raises SchemaError), so it is only reported when it is surely a typo: one edit away from the
table of a model the module sees. The mypy daemon and a warm run check the module again when
such a model changes.
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.nodes import (
    AssignmentStmt,
    CallExpr,
    Context,
    ListExpr,
    MypyFile,
    NameExpr,
    RefExpr,
    StrExpr,
    TupleExpr,
    TypeInfo,
)
from mypy.plugin import ClassDefContext, FunctionContext
from mypy.types import Type

from .lib.messages import COLUMN, near
from .lib.metadata import model_facts
from .lib.names import COLUMN_FUNCTION
from .lib.scopes import Scope
from .lib.tables import sql_name, visible_models
from .lib.typos import one_edit

__all__ = ["check_foreign_key", "check_references", "depend_on_referenced", "referenced_modules"]

#: module -> the modules whose models its foreign keys name (see referenced_modules)
_REFERENCED: dict[str, set[str]] = {}


def _references(call: CallExpr) -> StrExpr | None:
    for name, arg in zip(call.arg_names, call.args, strict=False):
        if name == "references":
            return arg if isinstance(arg, StrExpr) else None
    return None


def _attr_of(info: TypeInfo, call: CallExpr) -> str | None:
    for stmt in info.defn.defs.body:
        if (isinstance(stmt, AssignmentStmt) and stmt.rvalue is call and stmt.lvalues
                and isinstance(stmt.lvalues[0], NameExpr)):
            return stmt.lvalues[0].name
    return None


def _one_edit_table(table: str, tables: list[str]) -> str | None:
    return next((t for t in tables if len(t) >= 3 and one_edit(table, t)), None)


def check_references(ctx: FunctionContext) -> Type:
    """`column(references="table.column")` in a model's class body."""
    call = ctx.context
    if not isinstance(call, CallExpr) or "references" not in call.arg_names:
        return ctx.default_return_type
    expr = _references(call)
    assert isinstance(ctx.api, TypeChecker)
    api = ctx.api
    info = api.scope.active_class()
    facts = model_facts(info) if info is not None else None
    if expr is None or info is None or facts is None:
        return ctx.default_return_type
    attr = _attr_of(info, call)
    label = f"{facts.name}.{attr}" if attr is not None else facts.name
    written = expr.value
    table, _, target = written.partition(".")
    if not table or not target or "." in target:
        api.fail(f'{label}: references="{written}" names a column of another table: write '
                 '"table.column"', expr, code=COLUMN)
        return ctx.default_return_type
    known = _columns_of_table(api, table, f'{label}: references="{written}"', expr)
    if known is not None and target not in known[1]:
        _report_unknown_column(api, f'{label}: references="{written}"', table, known, target,
                               expr)
    return ctx.default_return_type


def _columns_of_table(api: TypeChecker, table: str, label: str,
                      context: Context) -> tuple[str, dict[str, str]] | None:
    """The first model of `table` the module sees, and SQL name -> attribute over all of
    them; None when they are not known here (no such model: reported only when one edit
    from a model's table)."""
    module = api.tree.fullname
    models = visible_models(api.modules, module)
    found = models.get(table)
    if found is None:
        guess = _one_edit_table(table, list(models))
        if guess is not None:
            owners = ", ".join(m.name for m in models[guess])
            api.fail(f'{label} names the table "{table}", which no model has; did you mean '
                     f'"{guess}" (the table of {owners})?', context, code=COLUMN)
        return None
    _REFERENCED.setdefault(module, set()).update(m.module_name for m in found)
    names: dict[str, str] = {}  # SQL name -> attribute, over the models of that table
    for model in found:
        model_columns = model_facts(model)
        if model_columns is None:
            return None
        for col in model_columns.columns.values():
            name = sql_name(model, col.attr, col.sql_name)
            if name is None:  # a naming callable: the SQL names are not known here
                return None
            names[name] = col.attr
    return found[0].name, names


def _report_unknown_column(api: TypeChecker, label: str, table: str,
                           known: tuple[str, dict[str, str]], target: str,
                           context: Context) -> None:
    owner, columns = known
    by_attr = [n for n, a in columns.items() if a == target]
    if by_attr:
        hint = f'; "{target}" is the attribute, write the SQL name "{by_attr[0]}"'
    else:
        guess = near(target, columns)
        hint = f'; did you mean "{guess}"?' if guess is not None else ""
    api.fail(f'{label}: {owner} (table "{table}") has no column "{target}"{hint}', context,
             code=COLUMN)


def check_foreign_key(ctx: FunctionContext) -> Type:
    """`ForeignKey([columns], "table", [table_columns])` in a model's `__foreign_keys__`: its
    columns against the model, the table's columns against the models of that table."""
    assert isinstance(ctx.api, TypeChecker)
    api = ctx.api
    info = api.scope.active_class()
    facts = model_facts(info) if info is not None else None
    if facts is None:
        return ctx.default_return_type
    by_name = dict(zip(ctx.callee_arg_names, ctx.args, strict=False))
    label = f"{facts.name} ForeignKey"
    scope = Scope(api, facts, label)
    for columns in by_name.get("columns") or []:
        scope.columns(columns)
    tables = [t for t in by_name.get("table") or [] if isinstance(t, StrExpr)]
    if not tables:
        return ctx.default_return_type
    table = tables[0].value
    known = _columns_of_table(api, table, f'{label} "{table}"', tables[0])
    if known is None:
        return ctx.default_return_type
    for listed in by_name.get("table_columns") or []:
        items = listed.items if isinstance(listed, ListExpr | TupleExpr) else []
        for item in items:
            if isinstance(item, StrExpr) and item.value not in known[1]:
                _report_unknown_column(api, f'{label} "{table}"', table, known, item.value,
                                       item)
    return ctx.default_return_type


def referenced_modules(file: MypyFile) -> set[str]:
    """The modules whose models the module's foreign keys name: indirect dependencies, so
    that a warm run checks the module again when one of those models changes."""
    found = _REFERENCED.pop(file.fullname, set())
    found.discard(file.fullname)
    return found


def depend_on_referenced(ctx: ClassDefContext) -> None:
    """Make the mypy daemon check the model again when a model its foreign keys name
    changes (the class body does not otherwise mention that model)."""
    from mypy.server.trigger import make_trigger, make_wildcard_trigger

    api = ctx.api
    models: dict[str, list[TypeInfo]] | None = None
    for stmt in ctx.cls.defs.body:
        call = stmt.rvalue if isinstance(stmt, AssignmentStmt) else None
        if not (isinstance(call, CallExpr) and isinstance(call.callee, RefExpr)
                and call.callee.fullname == COLUMN_FUNCTION):
            continue
        expr = _references(call)
        if expr is None:
            continue
        if models is None:
            models = visible_models(api.modules, api.cur_mod_id)
        for model in models.get(expr.value.partition(".")[0], ()):
            if model is not ctx.cls.info:
                # the class, and any change of its members (a column renamed or retyped)
                api.add_plugin_dependency(make_trigger(model.fullname))
                api.add_plugin_dependency(make_wildcard_trigger(model.fullname))
