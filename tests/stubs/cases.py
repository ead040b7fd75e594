"""The plugin's YAML cases (tests/typecheck/*.yml) as plain files, and the verdict of pyright
and of plain mypy (no plugin) on them.

Each case's `main` becomes one module; an expected plugin error is an `# E:col: message`
comment on its line. Each checker runs once over the directory of them all (pyright is slow to
start), and a mistake counts as caught when the checker reports an error on that line; an
error on a line the plugin accepts is a false positive.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
CASES = ROOT / "tests" / "typecheck"
MODELS = CASES / "models"
STUBS = ROOT / "stubs"

#: which share a case file counts in: joins, aggregates and ordering are measured apart from
#: one table
GROUPS = {"test_joins.yml": "joins", "test_aggregates.yml": "aggregates",
          "test_references.yml": "correlated subqueries", "test_foreign_keys.yml": "foreign keys",
          "test_computed.yml": "computed columns", "test_ctes.yml": "computed columns",
          "test_set_operations.yml": "computed columns", "test_ordering.yml": "ordering"}
_EXPECTED = re.compile(r"# E:\d+: ")


@dataclass
class Case:
    """One YAML case as a module: its file name, group and the lines of its expected errors."""

    module: str
    group: str
    source: str
    expected: set[int] = field(default_factory=set)


def cases() -> list[Case]:
    """Every single-file case of tests/typecheck/*.yml (cases with extra files are left out)."""
    out = []
    for path in sorted(CASES.glob("*.yml")):
        for item in yaml.safe_load(path.read_text()):
            if item.get("files"):
                continue
            module = f"{path.stem}__{item['case']}"
            source = item["main"]
            expected = {i for i, line in enumerate(source.splitlines(), 1)
                        if _EXPECTED.search(line)}
            out.append(Case(module, GROUPS.get(path.name, "one table"), source, expected))
    return out


def pyright_command() -> list[str] | None:
    """The pyright command next to this interpreter (or on PATH), or None without it or Node."""
    found = shutil.which("pyright") or str(Path(sys.executable).parent / "pyright")
    if not Path(found).exists() or shutil.which("node") is None:
        return None
    return [found]


def run_pyright(directory: Path, sources: dict[str, str], *, stubs: bool,
                strict: bool = False) -> dict[str, list[tuple[int, str]]]:
    """pyright's errors per module of `sources`, written into `directory` and checked in one
    run, with or without the generated stubs: module -> [(line, message)]."""
    command = pyright_command()
    assert command is not None, "pyright or Node.js is missing"
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in sources.items():
        (directory / f"{name}.py").write_text(text)
    config: dict[str, object] = {
        "extraPaths": [str(SRC), str(MODELS)], "pythonVersion": "3.11",
        "typeCheckingMode": "strict" if strict else "standard",
        "stubPath": str(STUBS if stubs else directory / "no-stubs"),
        "reportMissingModuleSource": False,
    }
    (directory / "pyrightconfig.json").write_text(json.dumps(config))
    proc = subprocess.run([*command, "--outputjson", "--pythonpath", sys.executable, "."],
                          cwd=directory, capture_output=True, text=True, timeout=900)
    assert proc.returncode in (0, 1), proc.stderr + proc.stdout
    found: dict[str, list[tuple[int, str]]] = {name: [] for name in sources}
    for d in json.loads(proc.stdout)["generalDiagnostics"]:
        if d["severity"] != "error":
            continue
        name = Path(d["file"]).stem
        if name in found:
            found[name].append((d["range"]["start"]["line"] + 1, d["message"].splitlines()[0]))
    return found


_MYPY_ERROR = re.compile(r"^(?P<file>[^:]+\.pyi?):(?P<line>\d+):(?:\d+:)? error: (?P<message>.*)$")


#: the modules the generated stub package declares (the others are read from the library)
STUB_MODULES = ("tempest_typed", "tempest_typed._generated", "tempest_typed.sql")


def mypy_config(*, stubs: bool, strict: bool = False) -> str:
    """A mypy configuration without the plugin: the generated stubs first on mypy_path (or
    not), then this checkout and the models. The library's own modules are quiet, as an
    installed package's are; the stubs' three modules are not, so an error in them shows."""
    paths = [*([STUBS] if stubs else []), SRC, MODELS]
    quiet = "[mypy-tempest_typed.*]\nignore_errors = True\n"
    if stubs:  # the modules the stubs replace are checked as the user's mypy checks them
        quiet += "".join(f"[mypy-{m}]\nignore_errors = False\n" for m in STUB_MODULES)
    return ("[mypy]\n"
            f"mypy_path = {':'.join(str(p) for p in paths)}\n"
            "python_version = 3.11\n"
            "show_error_codes = True\n"
            "incremental = False\n"
            f"strict = {strict}\n"
            f"{quiet}")


def run_mypy(directory: Path, sources: dict[str, str], *, stubs: bool,
             strict: bool = False) -> dict[str, list[tuple[int, str]]]:
    """Plain mypy's errors (no plugin) per module of `sources`, written into `directory` and
    checked in one run, with or without the generated stubs: module -> [(line, message)].
    Errors in other files (the stubs, the models) are under the key "elsewhere"."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in sources.items():
        (directory / f"{name}.py").write_text(text)
    (directory / "mypy.ini").write_text(mypy_config(stubs=stubs, strict=strict))
    proc = subprocess.run([sys.executable, "-m", "mypy", "--config-file", "mypy.ini",
                           *sorted(f"{name}.py" for name in sources)],
                          cwd=directory, capture_output=True, text=True, timeout=900)
    assert proc.returncode in (0, 1), proc.stderr + proc.stdout
    found: dict[str, list[tuple[int, str]]] = {name: [] for name in sources}
    found["elsewhere"] = []
    for line in proc.stdout.splitlines():
        m = _MYPY_ERROR.match(line)
        if m is None:
            continue
        path = Path(m["file"])
        key = path.stem if path.parent == Path(".") and path.stem in sources else "elsewhere"
        found[key].append((int(m["line"]), (m["file"] + ": " if key == "elsewhere" else "")
                           + m["message"]))
    return found


@dataclass
class Score:
    """How many of a group's expected errors the checker reported on their line."""

    caught: int = 0
    expected: int = 0
    false_positives: list[str] = field(default_factory=list)

    @property
    def share(self) -> float:
        """The share caught, 0..1."""
        return self.caught / self.expected if self.expected else 1.0


def score(all_cases: list[Case], errors: dict[str, list[tuple[int, str]]]) -> dict[str, Score]:
    """Per group: the expected error lines the checker caught, and its errors on accepted lines."""
    scores: dict[str, Score] = {}
    for case in all_cases:
        s = scores.setdefault(case.group, Score())
        lines = {line for line, _ in errors[case.module]}
        s.expected += len(case.expected)
        s.caught += len(case.expected & lines)
        s.false_positives += [f"{case.module}:{line}: {message}"
                              for line, message in errors[case.module]
                              if line not in case.expected]
    return scores


if __name__ == "__main__":  # print the tables docs/static-checking.md quotes
    import tempfile

    every = cases()
    checkers = {"pyright": run_pyright, "mypy": run_mypy}
    chosen = sys.argv[1:] or list(checkers)
    with tempfile.TemporaryDirectory() as tmp:
        for checker in chosen:
            for stubs in (False, True):
                found = checkers[checker](Path(tmp) / f"{checker}-{stubs}",
                                          {c.module: c.source for c in every}, stubs=stubs)
                for message in found.pop("elsewhere", []):
                    print(f"{checker} stubs={stubs}: error outside the cases: {message}")
                for group, s in sorted(score(every, found).items()):
                    print(f"{checker:7} stubs={stubs!s:5} {group:24} {s.caught:3}/{s.expected:3} "
                          f"{s.share:6.1%}  false positives: {len(s.false_positives)}")
                    for fp in s.false_positives:
                        print("    ", fp)
