# Sourced by the scripts: makes .venv with the project installed (extras given in $EXTRAS).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
STAMP=".venv/.installed-${EXTRAS}"
if [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ]; then
    echo "installing tempest-typed[${EXTRAS}] into .venv (log: .venv/install.log)" >&2
    if ! { .venv/bin/python -m pip install --disable-pip-version-check --upgrade pip \
           && .venv/bin/python -m pip install --disable-pip-version-check -e ".[${EXTRAS}]"; } \
           >.venv/install.log 2>&1; then
        tail -n 30 .venv/install.log >&2
        echo "install failed; see .venv/install.log" >&2
        exit 1
    fi
    touch "$STAMP"
fi
