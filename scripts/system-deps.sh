#!/usr/bin/env bash
# Installs the Debian packages the tests drive as real programs, where they are missing:
# haproxy (the balancer in front of several hubs), chromium (browser tests), xboard + xvfb +
# fairymax + xdotool + imagemagick (ICS client tests: XBoard under Xvfb, window titles,
# screenshots), the engines the workers drive (sjaakii, hachu, fairy-stockfish, fairymax), docker-compose (checks docker-compose.yml), a CJK font (the web
# client's kanji pieces in the browser tests' screenshots).
# Needs root and apt-get; elsewhere it only reports what is missing.
#   scripts/system-deps.sh           everything the tests drive
#   scripts/system-deps.sh engines   only the engines (scripts/serve.sh: its worker needs them)
set -uo pipefail
# package -> a file it installs
declare -A wanted=(
    [haproxy]=/usr/sbin/haproxy
    [chromium]=/usr/bin/chromium
    [xboard]=/usr/games/xboard
    [xvfb]=/usr/bin/Xvfb
    [fairymax]=/usr/games/fairymax
    [sjaakii]=/usr/games/sjaakii
    [hachu]=/usr/games/hachu
    [fairy-stockfish]=/usr/games/fairy-stockfish
    [xdotool]=/usr/bin/xdotool
    [imagemagick]=/usr/bin/convert
    [docker-compose]=/usr/bin/docker-compose
    [fonts-droid-fallback]=/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf
)
if [ "${1:-}" = "engines" ]; then
    for package in "${!wanted[@]}"; do
        case "$package" in sjaakii | hachu | fairy-stockfish | fairymax) ;; *) unset "wanted[$package]" ;; esac
    done
fi
missing=()
for package in "${!wanted[@]}"; do
    [ -e "${wanted[$package]}" ] || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "system-deps: missing ${missing[*]} (install them with apt-get as root)" >&2
    exit 0
fi
echo "system-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt_get() { timeout 900 apt-get -o DPkg::Lock::Timeout=600 -y -q "$@"; }
apt_get install --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
    || { apt_get update >/dev/null 2>&1; apt_get install --no-install-recommends "${missing[@]}" >/dev/null 2>&1; } \
    || echo "system-deps: could not install ${missing[*]}" >&2
exit 0
