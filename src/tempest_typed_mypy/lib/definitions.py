"""Where a name got its value: the one assignment `name = expression` of a variable in the
module being checked, so that an expression held in a variable (`c = sql.lower("title")`,
then `add_columns({"x": c})`) is read as if it were written in place. Part of the foundation:
imports no check.

A variable is followed only when the module's statements bind it exactly once, by a plain
assignment to that one name. A parameter, a loop, `with`, `except` or `match` target, an
augmented or tuple assignment, or a `del`, anywhere in the module, makes its value one the
place of use cannot tell: it is not followed. Nor is a variable of another module. (A walrus
`(c := ...)` inside an expression is not looked for: it would be the only binding the walk
misses.)
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.nodes import (
    AssignmentStmt,
    Block,
    CallExpr,
    ClassDef,
    Decorator,
    DelStmt,
    Expression,
    ForStmt,
    FuncDef,
    IfStmt,
    ListExpr,
    MatchStmt,
    MemberExpr,
    MypyFile,
    NameExpr,
    OperatorAssignmentStmt,
    OverloadedFuncDef,
    StarExpr,
    Statement,
    TryStmt,
    TupleExpr,
    Var,
    WhileStmt,
    WithStmt,
)
from mypy.patterns import (
    AsPattern,
    ClassPattern,
    MappingPattern,
    OrPattern,
    Pattern,
    SequencePattern,
    StarredPattern,
)

__all__ = ["assigned", "chain", "resolved"]

#: how many names resolved() follows, one to the next, before it gives up
_DEPTH = 8


class _Bindings:
    """Every binding of a variable in a module's statements: the values of the plain
    assignments, and the variables bound any other way. (mypy's own traversers are compiled
    traits, which a plugin cannot subclass: the statements are walked here.)"""

    def __init__(self) -> None:
        self.values: dict[Var, list[Expression]] = {}
        self.other: set[Var] = set()

    def _other(self, target: Expression | None) -> None:
        if isinstance(target, NameExpr) and isinstance(target.node, Var):
            self.other.add(target.node)
        elif isinstance(target, TupleExpr | ListExpr):
            for item in target.items:
                self._other(item)
        elif isinstance(target, StarExpr):
            self._other(target.expr)

    def _pattern(self, pattern: Pattern | None) -> None:
        if isinstance(pattern, AsPattern):
            self._other(pattern.name)
            self._pattern(pattern.pattern)
        elif isinstance(pattern, StarredPattern):
            self._other(pattern.capture)
        elif isinstance(pattern, OrPattern | SequencePattern):
            for item in pattern.patterns:
                self._pattern(item)
        elif isinstance(pattern, MappingPattern):
            self._other(pattern.rest)
            for item in pattern.values:
                self._pattern(item)
        elif isinstance(pattern, ClassPattern):
            for item in [*pattern.positionals, *pattern.keyword_values]:
                self._pattern(item)

    def block(self, block: Block | None) -> None:
        """Read the bindings of a block's statements, nested blocks included."""
        if block is not None:
            for stmt in block.body:
                self.statement(stmt)

    def statement(self, stmt: Statement) -> None:
        """Read the bindings of one statement."""
        if isinstance(stmt, AssignmentStmt):
            for lvalue in stmt.lvalues:
                if isinstance(lvalue, NameExpr) and isinstance(lvalue.node, Var):
                    self.values.setdefault(lvalue.node, []).append(stmt.rvalue)
                else:
                    self._other(lvalue)
        elif isinstance(stmt, OperatorAssignmentStmt):
            self._other(stmt.lvalue)
        elif isinstance(stmt, DelStmt):
            self._other(stmt.expr)
        elif isinstance(stmt, ForStmt):
            self._other(stmt.index)
            self.block(stmt.body)
            self.block(stmt.else_body)
        elif isinstance(stmt, WhileStmt):
            self.block(stmt.body)
            self.block(stmt.else_body)
        elif isinstance(stmt, IfStmt):
            for body in stmt.body:
                self.block(body)
            self.block(stmt.else_body)
        elif isinstance(stmt, WithStmt):
            for target in stmt.target:
                self._other(target)
            self.block(stmt.body)
        elif isinstance(stmt, TryStmt):
            for var in stmt.vars:
                self._other(var)
            self.block(stmt.body)
            for handler in stmt.handlers:
                self.block(handler)
            self.block(stmt.else_body)
            self.block(stmt.finally_body)
        elif isinstance(stmt, MatchStmt):
            for pattern in stmt.patterns:
                self._pattern(pattern)
            for body in stmt.bodies:
                self.block(body)
        elif isinstance(stmt, FuncDef):
            self.block(stmt.body)  # its parameters are Vars marked is_argument
        elif isinstance(stmt, Decorator):
            self.block(stmt.func.body)
        elif isinstance(stmt, OverloadedFuncDef):
            for item in stmt.items:
                self.statement(item)
            if stmt.impl is not None:
                self.statement(stmt.impl)
        elif isinstance(stmt, ClassDef):
            self.block(stmt.defs)


class _Module:
    """The bindings read from one module's tree: each variable's one value, and every
    variable the walk (or a lookup) has seen."""

    def __init__(self, tree: MypyFile) -> None:
        self.tree = tree
        found = _Bindings()
        for stmt in tree.defs:
            found.statement(stmt)
        self.values = {var: exprs[0] for var, exprs in found.values.items()
                       if len(exprs) == 1 and var not in found.other}
        self.seen: set[Var] = set(found.values) | found.other


#: module name -> its bindings, for one tree at a time (a daemon parses an edited module
#: again; one it analyses again keeps its tree but may make new variables: a variable that the
#: walk did not see sends the module to be read again, see _lookup)
_MODULES: dict[str, _Module] = {}


def _lookup(tree: MypyFile, var: Var) -> Expression | None:
    if var.is_argument:  # most names given as values: no walk for them
        return None
    module = _MODULES.get(tree.fullname)
    if module is None or module.tree is not tree or var not in module.seen:
        module = _Module(tree)
        # a variable of another module, or one bound by none of this module's statements:
        # no need to read the module again for it
        module.seen.add(var)
        if len(_MODULES) >= 256:
            _MODULES.clear()
        _MODULES[tree.fullname] = module
    return module.values.get(var)


def assigned(api: TypeChecker, expr: Expression) -> Expression | None:
    """The expression a name was given by the one assignment of its variable in the module
    being checked; None for anything else."""
    if not isinstance(expr, NameExpr) or not isinstance(expr.node, Var):
        return None
    return _lookup(api.tree, expr.node)


def resolved(api: TypeChecker, expr: Expression) -> Expression:
    """The expression itself, or for a name, the expression it holds (names followed one
    to the next as far as assigned() tells)."""
    for _ in range(_DEPTH):
        value = assigned(api, expr)
        if value is None:
            return expr
        expr = value
    return expr


#: how deep a chain of calls is followed (`q.where(...).order_by(...)...`)
_CHAIN = 64


def chain(api: TypeChecker, expr: Expression) -> list[CallExpr]:
    """The method calls a statement was built by, last first (the receiver's chain)."""
    calls: list[CallExpr] = []
    for _ in range(_CHAIN):
        expr = resolved(api, expr)
        if not (isinstance(expr, CallExpr) and isinstance(expr.callee, MemberExpr)):
            break
        calls.append(expr)
        expr = expr.callee.expr
    return calls
