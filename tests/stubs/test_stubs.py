"""The stubs generated from the models: current, deterministic, and checked by pyright and by
plain mypy (no plugin).

The generator tests run without either checker. The `pyright` ones (`pytest -m pyright`) and
the mypy ones run the checker once per configuration over a directory holding every YAML case
of tests/typecheck as a plain file, and hold the stubs to the plugin: no error on code the
plugin accepts, and the share of the plugin's single-table mistakes that the checker reports
on the same line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tempest_typed import stubs

from .cases import (
    MODELS,
    SRC,
    STUBS,
    Case,
    Score,
    cases,
    pyright_command,
    run_mypy,
    run_pyright,
    score,
)

MODULE = "typecheck_models"


@pytest.fixture
def models_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(MODELS))


def test_the_stubs_of_the_test_models_are_current(models_on_path: None) -> None:
    for rel, text in stubs.generate([MODULE]).items():
        assert (STUBS / rel).read_text() == text, (
            f"stubs/{rel} is stale: run `PYTHONPATH=tests/typecheck/models "
            f"python -m tempest_typed.stubs {MODULE} -o stubs`")


def test_the_output_is_deterministic(models_on_path: None) -> None:
    assert stubs.generate([MODULE]) == stubs.generate([MODULE])


def test_the_sql_stub_declares_the_modules_functions_with_their_parameters(
        models_on_path: None) -> None:
    import ast
    import inspect

    from tempest_typed import sql

    tree = ast.parse(stubs.generate([MODULE])["tempest_typed/sql.pyi"])
    declared: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            a = node.args
            names = [p.arg for p in [*a.posonlyargs, *a.args]]
            if a.vararg:
                names.append("*" + a.vararg.arg)
            names += [p.arg for p in a.kwonlyargs]
            declared[node.name] = max(declared.get(node.name, []), names, key=len)
    functions = sorted(n for n in sql.__all__ if n != "Expression")
    assert sorted(declared) == functions
    for name in functions:
        params = inspect.signature(getattr(sql, name)).parameters.values()
        assert declared[name] == [("*" if p.kind is p.VAR_POSITIONAL else "") + p.name
                                  for p in params], name


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": f"{MODELS}:{SRC}", "PATH": ""}
    return subprocess.run([sys.executable, "-m", "tempest_typed.stubs", *args], cwd=cwd,
                          capture_output=True, text=True, env=env, timeout=120)


def test_check_fails_on_stale_stubs_and_passes_once_written(tmp_path: Path) -> None:
    assert _cli(MODULE, "-o", "out", "--check", cwd=tmp_path).returncode == 1
    assert _cli(MODULE, "-o", "out", cwd=tmp_path).returncode == 0
    assert sorted(p.name for p in (tmp_path / "out" / "tempest_typed").iterdir()) == [
        "__init__.pyi", "_generated.pyi", "sql.pyi"]
    assert _cli(MODULE, "-o", "out", "--check", cwd=tmp_path).returncode == 0
    init = tmp_path / "out" / "tempest_typed" / "__init__.pyi"
    init.write_text(init.read_text() + "# edited\n")
    stale = _cli(MODULE, "-o", "out", "--check", cwd=tmp_path)
    assert stale.returncode == 1
    assert "__init__.pyi is stale" in stale.stderr


def test_the_tempest_typed_command_takes_the_stubs_subcommand(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path,
        models_on_path: None) -> None:
    monkeypatch.setattr(sys, "argv", ["tempest-typed"])
    assert stubs.cli() == 2
    assert capsys.readouterr().err == "usage: tempest-typed stubs MODULE... [-o DIR] [--check]\n"
    monkeypatch.setattr(sys, "argv", ["tempest-typed", "stubs", MODULE, "-o", str(tmp_path)])
    assert stubs.cli() == 0
    assert (tmp_path / "tempest_typed" / "sql.pyi").is_file()


def test_a_module_that_fails_to_import_is_one_line_and_nonzero(tmp_path: Path) -> None:
    (tmp_path / "broken_models.py").write_text("import no_such_module_anywhere\n")
    proc = _cli("broken_models", "-o", "out", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == ("tempest-typed stubs: error: cannot import broken_models: "
                           "ModuleNotFoundError: No module named 'no_such_module_anywhere'\n")
    assert not (tmp_path / "out").exists()


def test_a_module_without_models_is_one_line_and_nonzero(tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_text("from tempest_typed import Model\nX = 1\n")
    proc = _cli("plain", "-o", "out", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == ("tempest-typed stubs: error: plain defines no model (no class "
                           "deriving from tempest_typed.Model)\n")


def test_only_the_named_modules_models_and_only_they_are_imported(tmp_path: Path) -> None:
    (tmp_path / "app_models.py").write_text(
        "from tempest_typed import Model\nfrom typecheck_models import User\n"
        "class Tag(Model):\n    id: int\n    name: str\n")
    probe = ("import sys; from tempest_typed import stubs; "
             "files = stubs.generate(['app_models']); "
             "print('tests' in sys.modules, 'Tag' in files['tempest_typed/_generated.pyi'], "
             "'class UserSelect' in files['tempest_typed/_generated.pyi'])")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                          text=True, env={"PYTHONPATH": f"{tmp_path}:{MODELS}:{SRC}"},
                          timeout=120)
    assert proc.stdout.split() == ["False", "True", "False"], proc.stderr


def test_two_models_of_one_name_get_their_module_in_their_names(tmp_path: Path) -> None:
    for name in ("shop_a", "shop_b"):
        (tmp_path / f"{name}.py").write_text(
            "from tempest_typed import Model\nclass Item(Model):\n    id: int\n")
    probe = ("from tempest_typed import stubs; "
             "g = stubs.generate(['shop_b', 'shop_a'])['tempest_typed/_generated.pyi']; "
             "print('class shop_a_ItemSelect' in g, 'class shop_b_ItemSelect' in g, "
             "g.index('shop_a.Item') < g.index('shop_b.Item'))")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                          text=True, env={"PYTHONPATH": f"{tmp_path}:{SRC}"}, timeout=120)
    assert proc.stdout.split() == ["True", "True", "True"], proc.stderr


def test_a_derived_model_is_overloaded_before_its_base(tmp_path: Path) -> None:
    (tmp_path / "notes.py").write_text(
        "from tempest_typed import Model\nclass Base(Model):\n    id: int\n"
        "class Note(Base):\n    text: str\n")
    probe = ("from tempest_typed import stubs; "
             "g = stubs.generate(['notes'])['tempest_typed/__init__.pyi']; "
             "print(g.index('type[notes.Note]') < g.index('type[notes.Base]'))")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                          text=True, env={"PYTHONPATH": f"{tmp_path}:{SRC}"}, timeout=120)
    assert proc.stdout.split() == ["True"], proc.stderr


_SINGLE_OVERLOADS = """
import ast, sys
from collections import Counter
from tempest_typed import stubs
for path, text in stubs.generate(["tags"]).items():
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        names = Counter(f.name for f in body if isinstance(f, ast.FunctionDef)
                        and any(getattr(d, "id", None) == "overload" for d in f.decorator_list))
        print(*(f"{path}:{name}" for name, n in names.items() if n == 1))
"""


def test_a_model_of_one_column_gets_no_overload_of_one_definition(tmp_path: Path) -> None:
    # mypy reports a lone @overload in the stubs ("Single overload definition, multiple
    # required"), as an error of the user's run: as_subquery() of a one-column model was one
    (tmp_path / "tags.py").write_text(
        "from tempest_typed import Model, column\n"
        "class Tag(Model):\n    name: str = column(primary_key=True)\n")
    proc = subprocess.run([sys.executable, "-c", _SINGLE_OVERLOADS], cwd=tmp_path,
                          capture_output=True, text=True,
                          env={"PYTHONPATH": f"{tmp_path}:{SRC}"}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == []


# ---- pyright over the plugin's cases ------------------------------------------------------

#: Errors with the stubs on lines the plugin accepts, each for a reason docs/static-checking.md
#: gives: a model defined in the case itself is in no stub, so select(Tag, [...]) has no
#: overload.
KNOWN_FALSE_POSITIVES = {
    "test_column_lists__lists_of_column_names:6",
    "test_column_lists__lists_of_column_names:7",
    "test_column_lists__a_string_for_the_columns_without_the_plugin:7",
}

#: pyright's errors with the stubs on lines the plugin accepts in computed columns: the
#: mistake in `typo = sql.lower("stauts")` is reported where the variable is used in
#: add_columns() (the function's call has no model to check its column against), the plugin
#: reports it at the assignment, the line before; and a parameter typed `object` is no
#: expression over the model's columns, which add_columns() takes (docs/static-checking.md).
KNOWN_PYRIGHT_FALSE_POSITIVES = {
    "test_computed__an_expression_held_in_a_variable:15",
    "test_computed__an_expression_held_in_a_variable:28",
}


@pytest.fixture(scope="module")
def every_case() -> list[Case]:
    return cases()


def _needs_pyright() -> None:
    """Skip without pyright or Node.js, saying which; in CI (CI=true) fail instead."""
    if pyright_command() is None:
        missing = "pyright or Node.js is not installed (pip install pyright, or the dev extra)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(missing, pytrace=False)
        pytest.skip(missing)


@pytest.fixture(scope="module")
def with_stubs(every_case: list[Case], tmp_path_factory: pytest.TempPathFactory
               ) -> dict[str, Score]:
    _needs_pyright()
    found = run_pyright(tmp_path_factory.mktemp("cases"), {c.module: c.source for c in every_case},
                        stubs=True)
    return score(every_case, found)


@pytest.mark.pyright
def test_no_error_where_the_plugin_reports_none(with_stubs: dict[str, Score]) -> None:
    known = KNOWN_FALSE_POSITIVES | KNOWN_PYRIGHT_FALSE_POSITIVES
    unexpected = [fp for s in with_stubs.values() for fp in s.false_positives
                  if fp.split(": ")[0] not in known]
    assert unexpected == []


@pytest.mark.pyright
def test_most_single_table_mistakes_are_reported_on_their_line(
        with_stubs: dict[str, Score]) -> None:
    one = with_stubs["one table"]
    # measured 104 of 137 lines (75.9%); the misses are what a stub cannot say (an empty
    # where dict is a value of every where dict's type, a template's placeholders are text):
    # docs/static-checking.md. Held by count, as the other groups are: the share falls
    # whenever the plugin learns a check no type can express, which is no loss of the stubs'
    assert one.caught >= 104, f"{one.caught}/{one.expected}"


@pytest.mark.pyright
def test_joins_and_aggregates_keep_what_the_stubs_catch(with_stubs: dict[str, Score]) -> None:
    # qualified names ("order.status") and aggregate labels are strings no type binds to a
    # model (docs/static-checking.md): the shares are measured, not required; these are the
    # rows per alias and the aggregate functions' columns, as measured (4/28 and 5/19)
    assert with_stubs["joins"].caught >= 4, with_stubs["joins"]
    assert with_stubs["aggregates"].caught >= 5, with_stubs["aggregates"]


@pytest.mark.pyright
def test_computed_column_mistakes_are_reported_on_their_line(
        with_stubs: dict[str, Score]) -> None:
    # the sql functions are typed by the columns they read and a model's add_columns(),
    # where/set/values take those of the right family; labels, CASE, column counts of set
    # operations and a named select's columns are strings or counts no type holds
    # (docs/static-checking.md): measured 29/55 (52.7%)
    computed = with_stubs["computed columns"]
    assert computed.caught >= 29, f"{computed.caught}/{computed.expected}"


#: Valid expressions beyond the plugin's cases, which the stubs are to accept: a correlated
#: column, arithmetic, a function of an expression, a length in arithmetic, values, SQL
#: text where a value goes, a window over an expression, a set operation ordered by its first statement's field,
#: recursive named selects (their step's table typed by the base's rows).
VALID_EXPRESSIONS = '''\
from tempest_typed import insert, join, select, sql, update
from typecheck_models import Order, User

select(Order).where({"cents": sql.col("total") * 2, "created_at": {"lt": sql.now(plus=-60)}})
select(Order).where({"user_id": sql.col("users.id")}).as_subquery("id")
update(Order).set({"cents": sql.col("cents") + 1, "status": sql.value("paid"), "updated_at": sql.now()}).unguarded()
q = select(Order).add_columns({"x": sql.lower(sql.col("status")), "y": sql.coalesce("updated_at", "created_at"),
                               "z": sql.coalesce("cents", 0), "r": sql.round("total", digits=2),
                               "c": sql.count("id").over(partition_by=["user_id"]),
                               "l": sql.lag("cents", n=2).over(order_by=["id"]),
                               "d": sql.row_number().over(partition_by=[sql.date_trunc("day", "created_at")], order_by=[("id", "desc")]),
                               "w": 2 * sql.col("cents") - sql.length("status")})
insert(Order).on_conflict_do_update(["id"], {"cents": sql.excluded("cents")})
update(Order).set({"cents": sql.raw("cents + 1")}).unguarded()
q2 = select(User, ["id", "email"]).add_columns({"n": sql.length("email")}).order_by("n").limit(2)
u = select(User, ["id"]).union(select(Order, ["id"])).order_by("id").limit(3)
c = sql.cte("c", select(User, ["id", "email"]))
r = select(c, ["email"])
g = select(Order).aggregate([{"m": sql.date_trunc("month", "created_at")}], {"n": sql.count()})
base = (select(User, ["id", "manager_id", "email"]).where({"id": 1})
        .add_columns({"depth": sql.value(0)}))
chart = sql.recursive_cte(
    "chart", base,
    lambda up: join(User, "u").inner_join(up, "up", {"u.manager_id": "up.id"})
    .project({"id": "u.id", "manager_id": "u.manager_id", "email": "u.email",
              "depth": sql.col("up.depth") + 1}))
tree = sql.recursive_cte("tree", select(User).where({"id": 1}),
                         lambda t: join(User, "u").inner_join(t, "t", {"u.manager_id": "t.id"})
                         .project({"id": "u.id", "email": "u.email", "country": "u.country",
                                   "credit_limit": "u.credit_limit", "manager_id": "u.manager_id",
                                   "settings": "u.settings", "avatar": "u.avatar"}))
'''


@pytest.mark.pyright
def test_valid_code_under_strict_reports_nothing_from_the_library(
        every_case: list[Case], tmp_path_factory: pytest.TempPathFactory) -> None:
    _needs_pyright()
    valid = {c.module: c.source for c in every_case if c.module.startswith("test_valid_code__")}
    valid["models"] = (MODELS / f"{MODULE}.py").read_text()
    valid["valid_expressions"] = VALID_EXPRESSIONS
    found = run_pyright(tmp_path_factory.mktemp("strict"), valid, stubs=True, strict=True)
    assert {name: errors for name, errors in found.items() if errors} == {}


#: and_/or_/not_ written straight into where(), one condition or more, nested, with EXISTS and
#: with annotated dicts: valid, and (marked) with a wrong key or value inside
COMBINATIONS = '''\
from __future__ import annotations
from typing import TYPE_CHECKING
from tempest_typed import and_, delete, not_, or_, select, sql, update
from typecheck_models import Outbound
if TYPE_CHECKING:
    from tempest_typed._generated import OutboundWhere

select(Outbound).where(not_({"status": "sent"}))
select(Outbound).where(and_({"status": "sent"}))
select(Outbound).where(or_({"attempts": {"gt": 3}}))
select(Outbound).where({"consumer": "a"}, not_({"attempts": {"gt": 3}}))
update(Outbound).set({"attempts": 1}).where(not_({"status": "sent"}))
delete(Outbound).where(not_(or_({"status": "sent"}, {"attempts": 2})))
select(Outbound).where(not_(sql.exists(select(Outbound))))
cond: OutboundWhere = {"status": "sent"}
both = and_(cond, {"attempts": 0})
select(Outbound).where(both, not_(cond), or_(cond, sql.exists(select(Outbound))))
select(Outbound).where(not_({"sttaus": "sent"}))  # E
select(Outbound).where(not_({"attempts": "many"}))  # E
select(Outbound).where(and_({"status": "lost"}))  # E
select(Outbound).where(or_({"status": "sent"}, {"attempts": "x"}))  # E
select(Outbound).where({"consumer": "a"}, not_({"consumer": 1}))  # E
'''


@pytest.mark.pyright
def test_combinations_written_into_where_are_checked_not_refused(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    _needs_pyright()
    found = run_pyright(tmp_path_factory.mktemp("combinations"),
                        {"combinations": COMBINATIONS}, stubs=True)
    lines = COMBINATIONS.splitlines()
    marked = {n for n, line in enumerate(lines, 1) if line.endswith("# E")}
    assert {line for line, _ in found["combinations"]} == marked, found


#: returning() of no column is the whole model; of names unpacked from a list[str] (which the
#: stubs cannot check) it matches no overload, rather than typing the rows as the whole model
#: while the run time gives rows of those columns. Each line marked `# E` is an error.
RETURNING_NAMES = """\
from datetime import datetime, timezone
from decimal import Decimal
from tempest_typed import create_engine, delete, insert, update
from typecheck_models import Order
engine = create_engine("sqlite://:memory:")
new = Order(user_id=1, total=Decimal(1), cents=1, status="new", created_at=datetime.now(timezone.utc))
names = ["id", "status"]
update(Order).set({"paid": True}).unguarded().returning(*names)  # E
delete(Order).unguarded().returning(*names)  # E
insert(Order).values(new).returning(*names)  # E
whole: Order = engine.execute(delete(Order).unguarded().returning()).one()
wrong: int = engine.execute(insert(Order).values(new).returning()).one()  # E
delete(Order).unguarded().returning("id", "status")
delete(Order).unguarded().returning("id", "sttaus")  # E
"""


@pytest.mark.pyright
def test_returning_names_from_a_list_is_no_whole_model(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    _needs_pyright()
    found = run_pyright(tmp_path_factory.mktemp("returning"),
                        {"returning": RETURNING_NAMES}, stubs=True)
    lines = RETURNING_NAMES.splitlines()
    marked = {n for n, line in enumerate(lines, 1) if line.endswith("# E")}
    assert {line for line, _ in found["returning"]} == marked, found


def test_returning_names_from_a_list_under_plain_mypy_is_no_whole_model(tmp_path: Path) -> None:
    found = run_mypy(tmp_path, {"returning": RETURNING_NAMES}, stubs=True)
    lines = RETURNING_NAMES.splitlines()
    marked = {n for n, line in enumerate(lines, 1) if line.endswith("# E")}
    assert {line for line, _ in found["returning"]} == marked, found


#: select(cte) of a named select with labels, written in place as execute()'s argument, keeps
#: its rows' names and types (pyright solved them to Unknown there: no check, and an error
#: under strict); `# E` marks the errors, each on its line.
NAMED_SELECT_IN_PLACE = """\
from tempest_typed import create_engine, select, sql
from typecheck_models import Order
engine = create_engine("sqlite://:memory:")
big = sql.cte("big", select(Order, ["id", "user_id"]).add_columns({"double": sql.col("cents") * 2}))
row = engine.execute(select(big)).one()
ident: int = row.id
row.nope  # E
wrong: str = engine.execute(select(big).order_by("double")).one().user_id  # E
engine.execute(select(big).where({"double": 2, "user_id": 1})).all()
engine.execute(select(big).where({"nope": 2}))  # E
engine.execute(select(big).order_by("total"))  # E
"""


@pytest.mark.pyright
def test_a_labeled_named_select_in_place_keeps_its_names(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    _needs_pyright()
    for strict in (False, True):
        found = run_pyright(tmp_path_factory.mktemp("named"), {"named": NAMED_SELECT_IN_PLACE},
                            stubs=True, strict=strict)
        lines = NAMED_SELECT_IN_PLACE.splitlines()
        marked = {n for n, line in enumerate(lines, 1) if line.endswith("# E")}
        assert {line for line, _ in found["named"]} == marked, (strict, found)


# ---- plain mypy (no plugin) over the plugin's cases --------------------------------------

#: A module that uses what the stubs do not declare: mypy reads those modules from the library
#: (a stub package on mypy_path does not hide the package's other modules), typed, not Any.
FALLBACK_PROBE = """\
from tempest_typed import Engine as PackageEngine
from tempest_typed.engine import Engine, create_engine
from tempest_typed.errors import ValidationError
from tempest_typed.statements import select as library_select
from typecheck_models import Outbound
def use(engine: Engine) -> None:
    engine.no_such_method()  # E:5: the library's Engine, typed
same: PackageEngine = create_engine("sqlite:///:memory:")
library_select(Outbound).where({"sttaus": 1})
error: ValidationError = ValidationError("x")
number: int = create_engine  # E:15: not Any
"""


@pytest.fixture(scope="module")
def mypy_found(every_case: list[Case], tmp_path_factory: pytest.TempPathFactory
               ) -> dict[bool, dict[str, list[tuple[int, str]]]]:
    """Plain mypy's errors over every case and the probe, with the stubs and without."""
    sources = {c.module: c.source for c in every_case}
    sources["fallback_probe"] = FALLBACK_PROBE
    return {stubs: run_mypy(tmp_path_factory.mktemp(f"mypy-{stubs}"), sources, stubs=stubs)
            for stubs in (True, False)}


def _mypy_scores(every_case: list[Case], found: dict[str, list[tuple[int, str]]]
                 ) -> dict[str, Score]:
    return score(every_case, {c.module: found[c.module] for c in every_case})


def test_plain_mypy_reads_the_modules_the_stubs_leave_out_from_the_library(
        mypy_found: dict[bool, dict[str, list[tuple[int, str]]]]) -> None:
    assert [line for line, _ in mypy_found[True]["fallback_probe"]] == [7, 11]
    assert mypy_found[True]["elsewhere"] == []  # the stubs themselves: no error


def test_plain_mypy_reports_no_error_where_the_plugin_reports_none(
        every_case: list[Case], mypy_found: dict[bool, dict[str, list[tuple[int, str]]]]
        ) -> None:
    # the lines pyright reports with the stubs, for the same reasons (KNOWN_FALSE_POSITIVES),
    # and an aggregate held in a variable: mypy widens the column of `spent = sql.sum("cents")`
    # to str (SumOf[str]), which the stubs' per-model aggregate types refuse; and a variable
    # given a string literal, which mypy types `str` (pyright narrows it to the literal, and
    # the plugin follows it to its one assignment); and a condition typed `dict[str, Any]`,
    # which the stubs take from pyright only (docs/static-checking.md)
    known = KNOWN_FALSE_POSITIVES | {
        "test_values__where_dict_in_a_variable_is_left_to_run_time:5",
        "test_values__untyped_conditions_are_left_to_run_time:6",
        "test_values__untyped_conditions_are_left_to_run_time:7",
        "test_values__untyped_conditions_are_left_to_run_time:9",
        "test_computed__an_expression_held_in_a_variable:13",
        "test_values__a_variable_holding_a_literal_for_a_literal_column:7",
        "test_values__a_variable_holding_a_literal_for_a_literal_column:8",
        "test_values__a_variable_holding_a_literal_for_a_literal_column:13",
    }
    unexpected = [fp for s in _mypy_scores(every_case, mypy_found[True]).values()
                  for fp in s.false_positives if fp.split(": ")[0] not in known]
    assert unexpected == []


def test_plain_mypy_reports_most_single_table_mistakes_with_the_stubs(
        every_case: list[Case], mypy_found: dict[bool, dict[str, list[tuple[int, str]]]]
        ) -> None:
    with_stubs = _mypy_scores(every_case, mypy_found[True])
    without = _mypy_scores(every_case, mypy_found[False])
    one = with_stubs["one table"]
    # measured 100 of 137 lines (73.0%) with the stubs, 18 without; mypy misses what pyright
    # catches where it solves a list of names or an alias to `str`, and sql.raw()'s
    # LiteralString (docs/static-checking.md); held by count, as pyright's is
    assert one.caught >= 100, f"{one.caught}/{one.expected}"
    assert without["one table"].caught * 4 < one.caught, without["one table"]
    assert all(s.false_positives == [] for s in without.values())
    # joins and aggregates: measured 1/28 and 5/19 with the stubs, none without
    assert with_stubs["joins"].caught >= 1, with_stubs["joins"]
    assert with_stubs["aggregates"].caught >= 5, with_stubs["aggregates"]
    # computed columns: measured 15/55 with the stubs, none without (mypy's add_columns()
    # takes any expression: it widens a name held in a variable to str)
    assert with_stubs["computed columns"].caught >= 15, with_stubs["computed columns"]
    assert without["computed columns"].caught == 0, without["computed columns"]


def test_valid_code_under_plain_mypy_strict_reports_nothing(
        every_case: list[Case], tmp_path_factory: pytest.TempPathFactory) -> None:
    valid = {c.module: c.source for c in every_case if c.module.startswith("test_valid_code__")}
    valid["models"] = (MODELS / f"{MODULE}.py").read_text()
    valid["valid_expressions"] = VALID_EXPRESSIONS
    found = run_mypy(tmp_path_factory.mktemp("mypy-strict"), valid, stubs=True, strict=True)
    reported = {f"{name}:{line}: {message}" for name, errors in found.items()
                for line, message in errors}
    # an aggregate's label is read as the library types it, Any (no type maps a dict's keys
    # to attributes), so returning it from a function typed `int` is what --strict's
    # warn_return_any reports, with or without the stubs (docs/static-checking.md)
    assert reported == {"test_valid_code__valid_shop_queries:90: Returning Any from function "
                        'declared to return "int"  [no-any-return]'}
