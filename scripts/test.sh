#!/usr/bin/env bash
# The whole test suite: lint, the generated modules, strict typing, then pytest (compiler,
# engines on the three databases, mypy plugin cases, property tests, queue concurrency).
EXTRAS="dev"
source "$(dirname "${BASH_SOURCE[0]}")/_env.sh"
echo "== ruff"
.venv/bin/ruff check .
echo "== generated modules are up to date"
.venv/bin/python tools/async_to_sync.py --check
echo "== mypy --strict"
.venv/bin/mypy
echo "== pytest"
exec .venv/bin/pytest -q -p no:cacheprovider "$@"
