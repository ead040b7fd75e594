"""Write the blocking modules from their asyncio sources: one hand-written copy of the shells.

The asyncio module is the source; its blocking twin differs only in waiting, so it is
produced from the source's tokens: `async` and `await` are dropped, asyncio names become
their blocking counterparts (NAMES, ATTRIBUTES below), `Awaitable[X]` becomes `X`, and two
line markers say what else differs:

    code                     # sync: other code     the blocking module has `other code`
    code                     # sync:                nothing (the line is dropped)
    # sync: other code                               (a line only the blocking module has)
    code                     # async only           the blocking module has no such line
    # async only: begin ... # async only: end       nor these lines

Comments and layout are kept, so the output reads as written code, with a header saying it is
generated. `python tools/async_to_sync.py` writes every target; `--check` only compares and
exits 1 when a target is stale (the test command runs it).
"""

from __future__ import annotations

import argparse
import io
import re
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: (asyncio source, blocking target), relative to the repository
FILES = [
    ("src/tempest_typed/engine/aio.py", "src/tempest_typed/engine/engine.py"),
    ("src/tempest_typed/queue/execute_aio.py", "src/tempest_typed/queue/execute.py"),
    ("src/tempest_typed/queue/aio.py", "src/tempest_typed/queue/queue.py"),
    ("src/tempest_typed/queue/loop_aio.py", "src/tempest_typed/queue/loop.py"),
    ("src/tempest_typed/engine/drivers/driver_async.py", "src/tempest_typed/engine/drivers/driver.py"),
    ("src/tempest_typed/engine/drivers/psycopg_async.py", "src/tempest_typed/engine/drivers/psycopg.py"),
    ("src/tempest_typed/engine/drivers/mysql_async.py", "src/tempest_typed/engine/drivers/mysql.py"),
]

#: names that become other names in the blocking module
NAMES = {
    "AsyncEngine": "Engine",
    "AsyncSession": "Session",
    "AsyncStream": "Stream",
    "AsyncIterator": "Iterator",
    "AsyncIterable": "Iterable",
    "AsyncGenerator": "Generator",
    "asynccontextmanager": "contextmanager",
    "AbstractAsyncContextManager": "AbstractContextManager",
    "__aenter__": "__enter__",
    "__aexit__": "__exit__",
    "__aiter__": "__iter__",
    "__anext__": "__next__",
    "aclose": "close",
    "StopAsyncIteration": "StopIteration",
    "create_async_engine": "create_engine",
    "async_driver_for": "driver_for",
    "AsyncDriver": "Driver",
    "AsyncQueue": "Queue",
    "AsyncWork": "Work",
    "AsyncLoop": "Loop",
    "AsyncPool": "Pool",
    "AsyncConnection": "Connection",
    "AsyncConnectionPool": "ConnectionPool",
    "AsyncPsycopgDriver": "PsycopgDriver",
    "AsyncmyDriver": "PyMySQLDriver",
    "driver_async": "driver",
}

#: `module.name` pairs that become another `module.name`
ATTRIBUTES = {
    ("asyncio", "sleep"): ("time", "sleep"),
    ("asyncio", "current_task"): ("threading", "get_ident"),
    ("asyncio", "Semaphore"): ("threading", "BoundedSemaphore"),
}

_SYNC_LINE = re.compile(r"^(?P<indent>\s*)(?P<code>.*?)\s*#\s*sync:\s?(?P<sync>.*)$")
_ASYNC_ONLY = re.compile(r"#\s*async only\b")
_BEGIN, _END = re.compile(r"^\s*# async only: begin$"), re.compile(r"^\s*# async only: end$")


def header(source: str) -> str:
    """The first lines of a generated module."""
    return (f"# Generated from {source} by tools/async_to_sync.py: do not edit.\n"
            "# Change the asyncio source and run `python tools/async_to_sync.py`.\n")


def _lines(text: str) -> str:
    """Apply the line markers."""
    out = []
    dropping = False
    skipping = 0  # parentheses a marked line left open
    for line in text.splitlines(keepends=True):
        if dropping or _BEGIN.match(line):
            dropping = not _END.match(line)
            continue
        if _ASYNC_ONLY.search(line):
            continue
        if skipping:  # the rest of a marked statement that spans lines
            skipping += line.count("(") - line.count(")")
            continue
        marked = _SYNC_LINE.match(line.rstrip("\n"))
        if marked is not None:
            replacement = marked.group("sync").rstrip()
            if replacement:
                out.append(marked.group("indent") + replacement + "\n")
            code = marked.group("code")
            skipping = max(0, code.count("(") - code.count(")"))  # a closing line opens none
            continue
        out.append(line)
    return "".join(out).rstrip("\n") + "\n"  # a module ending in an async-only block too


def convert(text: str) -> str:
    """The blocking module for the asyncio module `text` (without the header)."""
    text = _lines(text)
    offsets = [0]
    for line in text.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))

    def at(position: tuple[int, int]) -> int:
        return offsets[position[0] - 1] + position[1]

    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement)
    for i, tok in enumerate(tokens):
        if tok.type != tokenize.NAME:
            continue
        start, end = at(tok.start), at(tok.end)
        if tok.string in ("async", "await"):
            following = tokens[i + 1]
            edits.append((start, at(following.start), ""))  # the keyword and its space
        elif tok.string == "Awaitable" and tokens[i + 1].string == "[":
            depth, j = 0, i + 1
            while True:
                if tokens[j].string == "[":
                    depth += 1
                elif tokens[j].string == "]":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            edits.append((start, at(tokens[i + 1].end), ""))
            edits.append((at(tokens[j].start), at(tokens[j].end), ""))
        elif (tokens[i + 1].string == "." and i + 2 < len(tokens)
              and (tok.string, tokens[i + 2].string) in ATTRIBUTES):
            module, name = ATTRIBUTES[(tok.string, tokens[i + 2].string)]
            edits.append((start, end, module))
            edits.append((at(tokens[i + 2].start), at(tokens[i + 2].end), name))
        elif tok.string in NAMES:
            edits.append((start, end, NAMES[tok.string]))
    for tok in tokens:  # a name in a string of its own: __all__'s entries
        quote = tok.string[:1]
        if tok.type == tokenize.STRING and tok.string[1:-1] in NAMES and quote in "'\"":
            edits.append((at(tok.start), at(tok.end), quote + NAMES[tok.string[1:-1]] + quote))
    edits.sort()
    pieces, position = [], 0
    for start, end, replacement in edits:
        if start < position:  # inside an edit already made
            continue
        pieces.append(text[position:start])
        pieces.append(replacement)
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def generated(source: str) -> str:
    """The whole blocking module of `source` (a path relative to the repository)."""
    return header(source) + convert((ROOT / source).read_text())


def main(argv: list[str] | None = None) -> int:
    """Write (or, with --check, compare) every blocking module; 1 when one is stale."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when a generated module is out of date")
    args = parser.parse_args(argv)
    stale = []
    for source, target in FILES:
        text = generated(source)
        path = ROOT / target
        if path.exists() and path.read_text() == text:
            continue
        stale.append(target)
        if not args.check:
            path.write_text(text)
            print(f"wrote {target} from {source}")
    if args.check and stale:
        for target in stale:
            print(f"{target} is out of date: run `python tools/async_to_sync.py`",
                  file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
