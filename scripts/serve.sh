#!/usr/bin/env bash
# Starts the hub on 127.0.0.1:8080 with the embedded SQLite database and in-process bus.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source scripts/venv.sh ""   # no extras (and not this script's own arguments)
exec python -m server "$@"
