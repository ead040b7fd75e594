"""The column a name means at one place of a statement: a model's (`Scope`), a join's
(`JoinScope`, every column `alias.column`) or a grouped statement's (`GroupScope`, the group
columns and the labels). Part of the foundation: imports no check.

The names are recovered from the statement's type. A join's type carries its aliases:
`Join[Row[TypedDict({'user': User, 'order': Order | None})]]`. A grouped statement's type
carries its rows, the rows of the statement it grouped (a model, or a join's `Row`) and its
group columns as written: `Grouped[Row[TypedDict({'id': int, 'n': int})],
Row[TypedDict({'user': User})], TypedDict({'user.id': int})]`. So a statement built in one
function and refined in another is checked the same way, and the cache needs nothing more.
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.errorcodes import ErrorCode
from mypy.nodes import Context, Expression, ListExpr, TupleExpr
from mypy.types import AnyType, Instance, NoneType, Type, TypeOfAny, UnionType, get_proper_type

from tempest_typed._wording import NAMED_TWICE, NOT_A_GROUP_COLUMN

from .messages import COLUMN, listed, near, unknown_column
from .metadata import Column, ModelFacts, column_kind, model_facts
from .names import GROUPED, JOIN
from .row_types import Aliases, aliases_of, fields_of, model_of, named_select_facts, row_facts
from .syntax import literal_str
from .tables import table_of
from .typos import typo

__all__ = [
    "GroupScope", "JoinScope", "Scope", "group_scope", "optional", "source_scope",
    "subquery_model",
]


class Scope:
    """One model seen from one place in a statement (`where()`, `set()`, ...)."""

    def __init__(self, api: TypeChecker, facts: ModelFacts, where: str,
                 allow_excluded: bool = False) -> None:
        self.api = api
        self.facts = facts
        self.where = where
        #: sql.excluded() may be written here: an upsert's set
        self.allow_excluded = allow_excluded

    def fail(self, message: str, context: Context, code: ErrorCode) -> None:
        """Report an error at `context`."""
        self.api.fail(message, context, code=code)

    def column(self, key: Expression) -> Column | None:
        """The column a key expression names, reporting an unknown one; None if not literal."""
        name = literal_str(self.api, key)
        if name is None:
            return None
        col = self.facts.columns.get(name)
        if col is None:
            self.fail(unknown_column(self.facts, name, self.where), key, COLUMN)
        return col

    def columns(self, expr: Expression, once: bool = False) -> list[str] | None:
        """The names in a literal list of columns, each checked (`once`: none named twice, as
        in a conflict target); None when not a literal list."""
        if not isinstance(expr, ListExpr | TupleExpr):
            return None
        names: list[str] | None = []
        seen: set[str] = set()
        for item in expr.items:
            col = self.column(item)
            if col is None:
                names = None
                continue
            if once:
                self.once(col, seen, item)
            if names is not None:
                names.append(col.attr)
        return names

    def once(self, col: Column, seen: set[str], context: Context) -> None:
        """Report a column named a second time in one list."""
        if col.attr in seen:
            self.fail(f"{self.facts.name}: {self.where} names the column {col.attr!r} twice; "
                      f"{NAMED_TWICE}", context, COLUMN)
        seen.add(col.attr)


#: by id: the columns come from the model facts' cache, so each is made once per column
_OPTIONAL: dict[int, tuple[Column, Column]] = {}


def optional(col: Column) -> Column:
    """The column as a left join sees it: None where the joined row did not match."""
    if col.nullable:
        return col
    hit = _OPTIONAL.get(id(col))
    if hit is not None and hit[0] is col:
        return hit[1]
    typ = UnionType.make_union([col.type, NoneType()])
    found = col.nullable_copy(typ)
    if len(_OPTIONAL) >= 4096:
        _OPTIONAL.clear()
    _OPTIONAL[id(col)] = (col, found)
    return found


def _listed(names: list[str]) -> str:
    return listed(names) or "none"


class JoinScope(Scope):
    """A join seen from one place: every column is `alias.column`."""

    def __init__(self, api: TypeChecker, aliases: Aliases, where: str) -> None:
        first = next(iter(aliases.values()))[0]
        super().__init__(api, first, where)
        self.aliases = aliases

    @property
    def label(self) -> str:
        """How messages name the join: `join(user, order)`."""
        return f"join({', '.join(self.aliases)})"

    def resolve(self, name: str) -> Column | None:
        """The column `alias.attr` names, with a left-joined alias's nullability; no errors."""
        alias, dot, attr = name.partition(".")
        entry = self.aliases.get(alias) if dot else None
        col = entry[0].columns.get(attr) if entry is not None else None
        if col is None or entry is None:
            return None
        return optional(col) if entry[1] else col

    def lookup(self, name: str, context: Context, correlated: bool = False,
               where: str | None = None) -> Column | None:
        """The column `name` means, reporting a bare name, an unknown alias or column.

        With `correlated` (an sql.col() reference), an unknown alias may name an enclosing
        statement, which the run time resolves: it is not reported.
        """
        where = where or self.where
        alias, dot, attr = name.partition(".")
        aliases = list(self.aliases)
        if not dot:
            self.fail(f'{self.label}: "{name}" in {where} is not qualified; in a join every '
                      f'column is written "alias.column" (aliases: {_listed(aliases)})', context,
                      COLUMN)
            return None
        entry = self.aliases.get(alias)
        if entry is None:
            guess: str | None
            if correlated:  # an enclosing statement's alias, unless surely a typo
                guess = typo(self.api, alias, aliases)
                if guess is None:
                    return None
            else:
                guess = near(alias, aliases)
            hint = f'; did you mean "{guess}"?' if guess else ""
            self.fail(f'{self.label} has no alias "{alias}" in {where}{hint} '
                      f"(aliases: {_listed(aliases)})", context, COLUMN)
            return None
        facts, left = entry
        col = facts.columns.get(attr)
        if col is None:
            self.fail(unknown_column(facts, attr, f'{where} (alias "{alias}")'), context,
                      COLUMN)
            return None
        return optional(col) if left else col

    def column(self, key: Expression) -> Column | None:
        """The column a qualified key names; None when it is unknown or not literal."""
        name = literal_str(self.api, key)
        return None if name is None else self.lookup(name, key)


class GroupScope(Scope):
    """After aggregate(): the group columns (as written in the group list) and the labels."""

    def __init__(self, api: TypeChecker, facts: ModelFacts, where: str,
                 names: dict[str, Column], groups: list[str],
                 sources: dict[str, ModelFacts] | None = None, label: str = "",
                 joined: bool = False) -> None:
        super().__init__(api, facts, where)
        self.names = names
        self.groups = groups
        #: the grouped statement's own qualifiers (its table, or a join's aliases) -> model
        self.sources = sources or {}
        #: how messages name the grouped statement: `Order`, `join(u, o)`
        self.label = label or facts.name
        #: a join was grouped: its group columns are written `alias.column`
        self.joined = joined

    def lookup(self, name: str, context: Context, correlated: bool = False,
               where: str | None = None) -> Column | None:
        """The group column or label `name` means, reporting any other name."""
        where = where or self.where
        col = self.names.get(name)
        if col is None and correlated and "." in name:
            qualifier, _, attr = name.partition(".")
            source = self.sources.get(qualifier)
            if source is not None and attr in source.columns:
                return self._grouped_reference(name, attr, context)
            if qualifier not in self.qualifiers():
                return None  # an enclosing statement's column, which the run time resolves
        if col is None:
            labels = [n for n in self.names if n not in self.groups]
            guess = near(name, self.names)
            hint = f'; did you mean "{guess}"?' if guess else ""
            self.fail(f'aggregate() has no group column or label "{name}" in {where}{hint}'
                      f" (group columns: {_listed(self.groups)}; labels: {_listed(labels)})",
                      context, COLUMN)
        return col

    def _grouped_reference(self, name: str, attr: str, context: Context) -> Column | None:
        """`sql.col("table.column")` in having() of the grouped statement's own rows: a group
        column (written qualified in a join's group list, bare in a select's), reported when
        it is none; elsewhere (an order_by() after aggregate() takes no reference) None."""
        written = name if self.joined else attr
        if written in self.groups:
            return self.names.get(written)
        if self.where.startswith("having()"):
            self.fail(f'{self.label}: having() reads sql.col("{name}"), {NOT_A_GROUP_COLUMN}, '
                      f'or add "{attr}" to the group list', context, COLUMN)
        return None

    def qualifiers(self) -> set[str]:
        """The aliases the group columns are written with (a join was grouped)."""
        return {g.partition(".")[0] for g in self.groups if "." in g}

    def column(self, key: Expression) -> Column | None:
        """The group column or label a key names; None when it is unknown or not literal."""
        name = literal_str(self.api, key)
        return None if name is None else self.lookup(name, key)


def _rows_scope(api: TypeChecker, rows: Type, where: str) -> Scope | None:
    """The scope of a statement whose rows (a model, a join's Row, or a named select's Row)
    are `rows`."""
    aliases = aliases_of(rows)
    if aliases is not None:
        return JoinScope(api, aliases, where)
    facts = model_facts(rows) or row_facts(rows)
    return None if facts is None else Scope(api, facts, where)


def source_scope(api: TypeChecker, typ: Type, where: str) -> Scope | None:
    """The names where() understands on a statement: a model's, a join's, or (after
    aggregate()) those of the statement that was grouped."""
    proper = get_proper_type(typ)
    if not isinstance(proper, Instance) or not proper.args:
        return None
    name = proper.type.fullname
    if name == GROUPED:
        return _rows_scope(api, proper.args[1], where) if len(proper.args) == 3 else None
    if name == JOIN:
        aliases = aliases_of(proper.args[0])
        return None if aliases is None else JoinScope(api, aliases, where)
    facts = model_facts(proper.args[0]) or named_select_facts(proper)
    return None if facts is None else Scope(api, facts, where)


def group_scope(api: TypeChecker, typ: Type, where: str) -> GroupScope | None:
    """The names having() and order_by() understand after aggregate()."""
    proper = get_proper_type(typ)
    if not (isinstance(proper, Instance) and proper.type.fullname == GROUPED
            and len(proper.args) == 3):
        return None
    rows, groups = fields_of(proper.args[0]), fields_of(proper.args[2])
    source = _rows_scope(api, proper.args[1], where)
    if rows is None or groups is None or source is None:
        return None
    names: dict[str, Column] = {}
    attrs: set[str] = set()
    for written, typ_ in groups.items.items():
        col = None
        if isinstance(source, JoinScope):
            col = source.resolve(written)
        else:
            col = source.facts.columns.get(written)
        if col is None:
            kind, nullable, literals = column_kind(typ_)
            col = Column("aggregate", written, typ_, kind, nullable, False, False, None, literals)
        names[written] = col
        attrs.add(written.rpartition(".")[2])
    for label, typ_ in rows.items.items():
        if label not in attrs:
            kind, nullable, literals = column_kind(typ_)
            names[label] = Column("aggregate", label, typ_, kind, nullable, False, False, None,
                                  literals)
    if isinstance(source, JoinScope):
        sources = {alias: entry[0] for alias, entry in source.aliases.items()}
        return GroupScope(api, source.facts, where, names, list(groups.items), sources,
                          source.label, joined=True)
    table = table_of(source.facts.info)
    sources = {} if table is None else {table: source.facts}
    return GroupScope(api, source.facts, where, names, list(groups.items), sources)


def subquery_model(typ: Type) -> Type | None:
    """The model an as_subquery() of a join or grouped statement is said to be of: the
    statement's first model (a join's alias column gives its own model instead)."""
    proper = get_proper_type(typ)
    if not isinstance(proper, Instance) or not proper.args:
        return None
    rows = proper.args[1] if proper.type.fullname == GROUPED and len(proper.args) == 3 \
        else proper.args[0]
    fields = fields_of(rows)
    if fields is not None and aliases_of(rows) is None:
        # a grouped named select's rows: its subquery is of no model, as select(cte)'s
        return AnyType(TypeOfAny.special_form)
    if fields is not None:
        rows = next(iter(fields.items.values()), rows)
        found = model_of(rows)
        return None if found is None else found[0].model
    return rows if model_facts(rows) is not None else None
