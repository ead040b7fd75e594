"""The plugin's entry point. It only routes: each hook names the module that decides.

Enable it with `plugins = tempest_typed.mypy` in the mypy configuration.
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.nodes import MypyFile, TypeInfo
from mypy.plugin import (
    AttributeContext,
    ClassDefContext,
    FunctionContext,
    FunctionSigContext,
    MethodContext,
    Plugin,
    ReportConfigContext,
)
from mypy.types import FunctionLike, Type

from . import (
    aggregates,
    column_lists,
    computed_columns,
    constructors,
    ctes,
    exists,
    foreign_keys,
    handlers,
    indexes,
    insert_select,
    joins,
    ordering,
    raw,
    rows,
    server_defaults,
    set_operations,
    statements,
    transactions,
)
from .lib.metadata import collect_model
from .lib.names import MODEL, RESULT, ROW
from .lib.tables import collect_table

__all__ = ["TempestTypedPlugin", "plugin"]

#: Reported to mypy, which drops its cache when the plugin changes version.
__version__ = "0.5.12"

_S = "tempest_typed.statements"

def _column(ctx: FunctionContext) -> Type:
    """`column(...)` in a model's class body: its references= and its server_default=."""
    foreign_keys.check_references(ctx)
    return server_defaults.check_server_default(ctx)


def _select_order_by(ctx: MethodContext) -> Type:
    """A select's `order_by("column")`: its names, then what it compares."""
    ordering.order_by(ctx)
    return statements.order_by(ctx)


def _join_order_by(ctx: MethodContext) -> Type:
    """A join's (a grouped statement's) `order_by(...)`: its names, then what it compares."""
    ordering.order_by(ctx)
    return joins.order_by(ctx)


def _distinct(ctx: MethodContext) -> Type:
    """`.distinct()` of a select or a join."""
    ordering.distinct(ctx)
    ordering.lock_rule(ctx)
    return ctx.default_return_type


def _aggregate(ctx: MethodContext) -> Type:
    """`.aggregate(...)` of a select or a join."""
    ordering.lock_rule(ctx)
    return aggregates.aggregate(ctx)


def _lock(ctx: MethodContext) -> Type:
    """`.for_update()`/`.for_share()` of a select or an aggregate."""
    ordering.lock_rule(ctx)
    return ctx.default_return_type


def _select_lock(ctx: MethodContext) -> Type:
    """`.for_update(of=...)`/`.for_share(of=...)` of a select: its model, then the rule."""
    statements.lock_targets(ctx)
    return _lock(ctx)


def _join_lock_update(ctx: MethodContext) -> Type:
    ordering.lock_rule(ctx)
    return joins.lock_update(ctx)


def _join_lock_share(ctx: MethodContext) -> Type:
    ordering.lock_rule(ctx)
    return joins.lock_share(ctx)


FUNCTIONS: dict[str, Callable[[FunctionContext], Type]] = {
    f"{_S}.select.select": statements.select_columns,
    "tempest_typed.sql.raw": raw.check_raw,
    "tempest_typed.sql.expr": raw.check_expr,
    "tempest_typed.sql.lag": statements.row_offset,
    "tempest_typed.sql.lead": statements.row_offset,
    "tempest_typed.model.Index": indexes.check_index,
    "tempest_typed.model.ForeignKey": foreign_keys.check_foreign_key,
    f"{_S}.join.join": joins.start,
    "tempest_typed.sql.exists": exists.check_exists,
    "tempest_typed.sql.not_exists": exists.check_not_exists,
    "tempest_typed.model.column": _column,
    "tempest_typed.sql.cte": ctes.named_select,
    "tempest_typed.sql.recursive_cte": ctes.named_select,
}

SIGNATURES: dict[str, Callable[[FunctionSigContext], FunctionLike]] = {
    f"{_S}.select.select": column_lists.select_signature,
    "tempest_typed.model.Index": column_lists.index_signature,
}

METHODS: dict[str, Callable[[MethodContext], Type]] = {
    f"{_S}.select.Select.where": statements.where,
    f"{_S}.update.Update.where": statements.where,
    f"{_S}.delete.Delete.where": statements.where,
    f"{_S}.select.Select.order_by": _select_order_by,
    f"{_S}.select.Select.distinct": _distinct,
    f"{_S}.join.Join.distinct": _distinct,
    f"{_S}.select.Select.as_subquery": statements.as_subquery,
    f"{_S}.update.Update.set": statements.update_set,
    f"{_S}.insert.Insert.values": statements.insert_values,
    f"{_S}.insert.Insert.on_conflict_do_nothing": statements.conflict_nothing,
    f"{_S}.insert.Insert.on_conflict_do_update": statements.conflict_update,
    f"{_S}.insert.Insert.returning": statements.returning,
    f"{_S}.update.Update.returning": statements.returning,
    f"{_S}.delete.Delete.returning": statements.returning,
    f"{ROW}.__getitem__": rows.row_item,
    f"{RESULT}.scalar": rows.result_scalar,
    f"{RESULT}.scalars": rows.result_scalars,
    f"{_S}.join.Join.inner_join": joins.add_inner,
    f"{_S}.join.Join.left_join": joins.add_left,
    f"{_S}.join.Join.where": joins.where,
    f"{_S}.join.Join.order_by": _join_order_by,
    f"{_S}.join.Join.as_subquery": joins.as_subquery,
    f"{_S}.join.Join.for_update": _join_lock_update,
    f"{_S}.join.Join.for_share": _join_lock_share,
    **{f"{_S}.select.Select.{lock}": _select_lock for lock in ("for_update", "for_share")},
    **{f"{_S}.aggregate.Grouped.{lock}": _lock for lock in ("for_update", "for_share")},
    f"{_S}.select.Select.aggregate": _aggregate,
    f"{_S}.join.Join.aggregate": _aggregate,
    f"{_S}.aggregate.Grouped.where": joins.where,
    f"{_S}.aggregate.Grouped.order_by": joins.order_by,
    f"{_S}.aggregate.Grouped.as_subquery": joins.as_subquery,
    f"{_S}.aggregate.Grouped.having": aggregates.having,
    f"{_S}.select.Select.add_columns": computed_columns.select_columns,
    f"{_S}.join.Join.add_columns": computed_columns.join_columns,
    f"{_S}.join.Join.project": computed_columns.join_project,
    **{f"{_S}.{cls}.{op}": set_operations.combined
       for cls in ("select.Select", "join.Join", "aggregate.Grouped", "compound.SetQuery")
       for op in ("union", "union_all", "intersect", "except_")},
    f"{_S}.compound.SetQuery.order_by": set_operations.order_by,
    f"{_S}.compound.SetQuery.as_subquery": set_operations.as_subquery,
    f"{_S}.insert.Insert.from_select": insert_select.from_select,
    **{f"{_S}.{cls}.{op}": statements.row_count
       for cls in ("select.Select", "join.Join", "aggregate.Grouped", "compound.SetQuery")
       for op in ("limit", "offset")},
    **{f"tempest_typed.queue.queue.Queue.{method}": handlers.check_handler
       for method in ("run", "process")},
    **{f"tempest_typed.queue.aio.AsyncQueue.{method}": handlers.check_async_handler
       for method in ("run", "process")},
    **{f"tempest_typed.engine.{cls}.{method}": transactions.check_isolation
       for cls in ("engine.Engine", "engine.Session", "aio.AsyncEngine", "aio.AsyncSession")
       for method in ("transaction", "run_transaction")},
}


def _collect(ctx: ClassDefContext) -> None:
    """A model's class body: its columns, its table's name, and the models its foreign keys
    name."""
    collect_model(ctx)
    collect_table(ctx)
    foreign_keys.depend_on_referenced(ctx)


class TempestTypedPlugin(Plugin):
    """Routes mypy's hooks to the checks of tempest_typed statements."""

    def get_base_class_hook(self, fullname: str) -> Callable[[ClassDefContext], None] | None:
        """Collect a model's facts when a class derives from Model, directly or not."""
        if fullname == MODEL:
            return _collect
        sym = self.lookup_fully_qualified(fullname)
        if sym is not None and isinstance(sym.node, TypeInfo) and sym.node.has_base(MODEL):
            return _collect
        return None

    def get_function_signature_hook(
        self, fullname: str
    ) -> Callable[[FunctionSigContext], FunctionLike] | None:
        """A model's constructor (the columns the database cannot fill are required), and a
        string where select() and Index() take a list of column names."""
        if fullname in SIGNATURES:
            return SIGNATURES[fullname]
        sym = self.lookup_fully_qualified(fullname)
        if sym is not None and isinstance(sym.node, TypeInfo) and sym.node.has_base(MODEL):
            return constructors.constructor_signature
        return None

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        """select(), join(), sql.raw(), sql.exists(), Index() and column(references=...)."""
        return FUNCTIONS.get(fullname)

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        """The statement builders' methods and Row item access."""
        return METHODS.get(fullname)

    def get_attribute_hook(self, fullname: str) -> Callable[[AttributeContext], Type] | None:
        """`row.column` on a partial row."""
        if fullname.startswith(ROW + "."):
            return rows.row_attribute
        return None

    def get_additional_indirect_deps(self, file: MypyFile) -> set[str]:
        """The modules of the models that the module's foreign keys name."""
        return foreign_keys.referenced_modules(file)

    def report_config_data(self, ctx: ReportConfigContext) -> str:
        """The plugin version: a new version invalidates mypy's cache."""
        return __version__


def plugin(version: str) -> type[Plugin]:
    """mypy's entry point: the plugin class for this mypy version."""
    return TempestTypedPlugin
