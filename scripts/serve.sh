#!/usr/bin/env bash
# The embedded run, one command: the hub on 127.0.0.1:8080 (embedded SQLite database, in-process
# bus) and one engine worker (docs/engines.md) playing and analysing for the computer with the
# engines of this machine, at a lower scheduling priority than the hub.
#
#   scripts/serve.sh [--config FILE]        Ctrl-C stops both (default: config/calendar.toml,
#                                           the defaults and the recurring tournaments)
#
# The hub creates the workers' key in data/worker.key at its first start (setting
# worker_key_file); the worker reads it there. HUB_WORKER_URL overrides where the worker
# connects (default http://127.0.0.1:${HUB_PORT:-8080}); HUB_NO_WORKER=1 starts the hub alone.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source scripts/venv.sh ""   # no extras (and not this script's own arguments)
# The worker's engines (Debian packages; without root it only says which are missing).
[[ "${HUB_NO_WORKER:-0}" == "1" ]] || bash scripts/system-deps.sh engines

# The site's calendar of recurring tournaments (config/calendar.toml) unless a file is named.
(( $# )) || set -- --config config/calendar.toml

if [[ "${HUB_NO_WORKER:-0}" == "1" ]]; then
    exec python -m server "$@"
fi

python -m server "$@" &
hub=$!
worker=""
stop() {
    [[ -n "$worker" ]] && kill -TERM "$worker" 2>/dev/null || true
    kill -TERM "$hub" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap stop EXIT INT TERM

url="${HUB_WORKER_URL:-http://127.0.0.1:${HUB_PORT:-8080}}"
key_file="${HUB_WORKER_KEY_FILE:-data/worker.key}"
# Wait for the hub: its health page answers once it listens (and the key file exists by then).
for _ in $(seq 1 600); do
    if ! kill -0 "$hub" 2>/dev/null; then
        wait "$hub"; exit $?
    fi
    if python -c "import sys, urllib.request; sys.exit(urllib.request.urlopen('$url/healthz', timeout=1).status != 200)" 2>/dev/null; then
        break
    fi
    sleep 0.1
done
worker_args=(--url "$url")
if [[ -n "${HUB_WORKER_KEYS:-}" ]]; then
    worker_args+=("--key=${HUB_WORKER_KEYS%%,*}")  # "=": a key may begin with "-"
else
    worker_args+=(--key-file "$key_file")
fi
python -m server.worker "${worker_args[@]}" &
worker=$!
# Either one ending ends the run.
wait -n "$hub" "$worker"
