#!/usr/bin/env bash
# The web client (web/, TypeScript + vite) and its committed bundle (server/transport/static).
#   scripts/web.sh build   install the pinned packages (npm ci) and rebuild the bundle
#   scripts/web.sh check   npm ci, type check, unit tests (vitest), fresh build; fails when the
#                          committed bundle differs from the fresh build
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root/web"
command -v npm >/dev/null || { echo "web: npm (Node 20) is needed to build the web client" >&2; exit 1; }
npm ci --no-audit --no-fund --loglevel=error
case "${1:-build}" in
    build)
        npm run --silent build ;;
    check)
        npm run --silent check
        npm run --silent test
        npm run --silent build
        if ! git -C "$root" diff --quiet --exit-code -- server/transport/static \
            || [ -n "$(git -C "$root" ls-files --others --exclude-standard -- server/transport/static)" ]; then
            git -C "$root" status --short -- server/transport/static >&2
            echo "web: the committed bundle differs from a fresh build: run scripts/web.sh build and commit server/transport/static" >&2
            exit 1
        fi ;;
    *) echo "usage: scripts/web.sh build|check" >&2; exit 2 ;;
esac
