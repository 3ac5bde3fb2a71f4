#!/usr/bin/env bash
# Installs everything rrsite needs on a fresh Debian machine: Python packages, the pinned Pyodide
# from npm, and (for the tests) Debian's chromium. Safe to run again: it skips what is there.
set -euo pipefail
cd "$(dirname "$0")/.."
want_browser=${1:-}

python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore -e '.[test]'
npm ci --silent --no-audit --no-fund

if [ "$want_browser" = "--browser" ] && [ ! -x /usr/bin/chromium ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
fi
