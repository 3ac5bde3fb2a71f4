#!/usr/bin/env bash
# Installs everything rrsite needs on a fresh Debian/Ubuntu machine that has only `make` and apt:
# Python (from apt when missing) and a virtual environment .venv/ holding rrsite and its
# dependencies, the pinned Pyodide from npm, and (with --browser, for the tests) Debian's browsers.
# Safe to run again: it skips what is there.
#
# Every Python command of the Makefile runs through .venv/bin, so nothing depends on an activated
# environment or on whichever Python happens to be first on PATH; Debian's own python3 refuses
# `pip install` outside a virtual environment (PEP 668, "externally-managed-environment").
set -euo pipefail
cd "$(dirname "$0")/.."
want_browser=
want_docs=
for arg in "$@"; do
  case "$arg" in
    --browser) want_browser=--browser; want_docs=1 ;;  # the tests build the docs too (tests/docs)
    --docs) want_docs=1 ;;
    *) echo "setup: unknown option $arg (use --browser or --docs)" >&2; exit 2 ;;
  esac
done
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}

export DEBIAN_FRONTEND=noninteractive
apt_updated=
need_apt() {  # install Debian packages, running apt-get update once
  if [ -z "$apt_updated" ]; then apt-get update -qq; apt_updated=1; fi
  apt-get install -y -qq "$@" >/dev/null
}

command -v "$PYTHON" >/dev/null || need_apt python3 python3-venv
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "setup: rrsite needs Python >= 3.11; $PYTHON is $("$PYTHON" --version 2>&1)" >&2
  exit 1
fi

# A venv whose interpreter is gone (a Python upgraded or removed) is rebuilt.
if [ -d "$VENV" ] && ! "$VENV/bin/python" -c '' 2>/dev/null; then rm -rf "$VENV"; fi
if [ ! -x "$VENV/bin/python" ]; then
  # Debian and Ubuntu ship venv's pip bootstrap (ensurepip) in a separate package.
  if ! "$PYTHON" -m venv "$VENV" >/dev/null 2>&1; then
    rm -rf "$VENV"
    minor=$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    need_apt python3-venv "python$minor-venv"
    "$PYTHON" -m venv "$VENV"
  fi
fi
# The docs extra (MkDocs, Material, mkdocstrings) with --docs and --browser: tests/docs builds the site.
extras=test
if [ -n "$want_docs" ]; then extras=test,docs; fi
# Stamps: pip runs only when pyproject.toml changed (or more extras are wanted) and `npm ci` only
# when package-lock.json changed, so a second `make setup` does nothing (and `npm ci`, which
# deletes node_modules first, never runs under a `make test` that is using it).
digest() { sha256sum "$1" | cut -d' ' -f1; }
pip_stamp="$VENV/.rrsite-pip"
pip_want="$(digest pyproject.toml)"
pip_done() {  # the stamp holds the digest and the extras installed: the wanted ones included?
  [ -f "$pip_stamp" ] && [ "$(sed -n 1p "$pip_stamp")" = "$pip_want" ] || return 1
  case ",$(sed -n 2p "$pip_stamp")," in *",$1,"*) return 0 ;; *) return 1 ;; esac
}
if ! pip_done test || { [ -n "$want_docs" ] && ! pip_done docs; }; then
  # --no-compile: pip would compile every module of every package (37 s -> 19 s on 2 cores);
  # Python compiles the modules actually imported, once, on their first import instead.
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-compile -e ".[$extras]"
  printf '%s\n%s\n' "$pip_want" "$extras" > "$pip_stamp"
fi

command -v npm >/dev/null || need_apt nodejs npm
npm_stamp=node_modules/.rrsite-lock
if [ ! -f "$npm_stamp" ] || [ "$(cat "$npm_stamp")" != "$(digest package-lock.json)" ]; then
  npm ci --silent --no-audit --no-fund
  digest package-lock.json > "$npm_stamp"
fi

if [ "$want_browser" = "--browser" ]; then
  # On a fresh machine apt spends a minute or more downloading and unpacking the browsers, with a
  # core to spare: rrsite's build cache (Pyodide's runtime compressed with brotli at quality 11
  # and the trimmed standard library, about a minute of one core) is filled meanwhile, so that
  # the tests' first builds find it.
  warm=
  if ! [ -x /usr/bin/chromium ] || ! [ -x /usr/bin/firefox-esr ] || ! [ -x /usr/bin/WebKitWebDriver ]; then
    warm_dist=$(mktemp -d)
    ("$VENV/bin/rrsite" build surveys -o "$warm_dist/dist" >/dev/null 2>&1 || true; rm -rf "$warm_dist") &
    warm=$!
  fi
  [ -x /usr/bin/chromium ] || need_apt chromium
  # the browser tests: Firefox (driven over WebDriver BiDi by puppeteer-core, from npm ci above),
  # WebKitGTK's WebDriver with MiniBrowser (driven by Selenium, from .[test]) and Xvfb for it.
  [ -x /usr/bin/firefox-esr ] || need_apt firefox-esr
  [ -x /usr/bin/WebKitWebDriver ] || need_apt webkit2gtk-driver
  command -v Xvfb >/dev/null || need_apt xvfb
  # the collector's tests: a PostgreSQL server for tests/collect (initdb into a temporary folder)
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_apt postgresql
  # R, for the test that runs the RRreg script `rrsite export --r-script` writes (RRreg itself
  # is on CRAN, out of reach here: the test installs a stand-in that records each call)
  command -v Rscript >/dev/null || need_apt r-base-core
  if [ -n "$warm" ]; then wait "$warm" || true; fi
fi
