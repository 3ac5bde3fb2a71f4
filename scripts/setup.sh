#!/usr/bin/env bash
# Installs everything rrsite needs on a fresh Debian machine: Python packages, the pinned Pyodide
# from npm, and (for the tests) Debian's chromium. Safe to run again: it skips what is there.
set -euo pipefail
cd "$(dirname "$0")/.."
want_browser=${1:-}

export DEBIAN_FRONTEND=noninteractive
apt_updated=
need_apt() {  # install Debian packages once, only when a command is missing
  if [ -z "$apt_updated" ]; then apt-get update -qq; apt_updated=1; fi
  apt-get install -y -qq "$@" >/dev/null
}
command -v python3 >/dev/null || need_apt python3 python3-pip python3-venv
command -v npm >/dev/null || need_apt nodejs npm

python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore -e '.[test]'
npm ci --silent --no-audit --no-fund

if [ "$want_browser" = "--browser" ] && [ ! -x /usr/bin/chromium ]; then
  need_apt chromium
fi
