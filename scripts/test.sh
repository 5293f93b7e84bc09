#!/usr/bin/env bash
# The whole test suite: lint, types, import layers, the web client's checks, then pytest.
# Usage: scripts/test.sh [pytest args]   (e.g. --long for the long differential sweep)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/system-deps.sh
source scripts/venv.sh dev
echo "== ruff"; ruff check server tests bench
echo "== mypy"; mypy
echo "== import layers"; lint-imports
echo "== web client"; bash scripts/web.sh check
# The servers and workers the tests start import server/ afresh: compiled once here, they read
# the bytecode even where PYTHONDONTWRITEBYTECODE keeps each process from writing it.
python -m compileall -q -j 0 server >/dev/null
echo "== pytest"; python -m pytest "$@"
