#!/usr/bin/env bash
# Creates .venv (if missing) and installs the project with the given extras.
# Usage: source scripts/venv.sh [extras]   e.g. "dev,speed"
set -e
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
extras="${1:-}"
if [ ! -x "$root/.venv/bin/python" ]; then
    python3 -m venv "$root/.venv"
fi
stamp="$root/.venv/.installed-${extras:-base}"
if [ ! -f "$stamp" ] || [ "$root/pyproject.toml" -nt "$stamp" ]; then
    "$root/.venv/bin/python" -m pip install -q --upgrade pip
    if [ -n "$extras" ]; then
        "$root/.venv/bin/python" -m pip install -q -e "$root[$extras]"
    else
        "$root/.venv/bin/python" -m pip install -q -e "$root"
    fi
    touch "$stamp"
fi
export PATH="$root/.venv/bin:$PATH"
