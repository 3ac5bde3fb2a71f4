# The two commands README.md starts with: `make demo` and `make test`.
# Every Python command runs through the virtual environment that scripts/setup.sh makes in .venv/,
# never through whichever Python is first on PATH. PYTHON names the interpreter the venv is made
# from (default: python3; CI passes Debian's /usr/bin/python3).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
RRSITE := $(VENV)/bin/rrsite
PORT ?= 8000
DOCS_PORT ?= 8001
# Python caches each module's bytecode (__pycache__/) on its first import: setup installs with
# `pip --no-compile`, and the tests start hundreds of Python processes (rrsite's commands, ruff,
# mypy, the collector) that would otherwise each compile rrsite, numpy and scipy again from source
# (`rrsite analyze --help`: 1.5 s without the cache, 0.7 s with it). An environment that sets
# PYTHONDONTWRITEBYTECODE (some containers do) is overridden here: an empty value writes the cache.
export PYTHONDONTWRITEBYTECODE :=
# Material for MkDocs prints a banner about MkDocs 2.0 on every build; the site is built with MkDocs 1.6.
MKDOCS := NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs

.PHONY: setup setup-test setup-docs demo build docs docs-serve lint check test bench clean distclean

setup:
	PYTHON=$(PYTHON) VENV=$(VENV) bash scripts/setup.sh

setup-test:
	PYTHON=$(PYTHON) VENV=$(VENV) bash scripts/setup.sh --browser

setup-docs:
	PYTHON=$(PYTHON) VENV=$(VENV) bash scripts/setup.sh --docs

build: setup
	$(RRSITE) build surveys -o dist

demo: build
	$(RRSITE) serve dist --port $(PORT) --db rrsite.db

# The documentation site (mkdocs.yml, docs/): built offline into site/, strict (a warning fails).
docs: setup-docs
	$(MKDOCS) build --strict

docs-serve: setup-docs
	$(MKDOCS) serve --strict --dev-addr 127.0.0.1:$(DOCS_PORT)

lint:
	$(PY) -m ruff check rrsite tests benchmarks
	$(PY) -m mypy

# The inner loop (under 2 minutes): lint, types and the fast unit tests (no browser, no
# PostgreSQL, no statistical simulation: those are marked slow and run in `make test`).
CHECK_TESTS := tests/test_layout.py tests/core tests/survey tests/estimate tests/cli tests/analyze tests/reference
check: setup-test
	$(MAKE) lint
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(PY) -m pytest -q -n auto -m "not slow" $(CHECK_TESTS)

# ruff and mypy run inside pytest (tests/test_lint.py, sent first), beside the other worker's tests.
test: setup-test
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(PY) -m pytest -q -n auto --dist loadfile --durations=30

bench: setup-test
	$(PY) benchmarks/core_size.py
	$(PY) benchmarks/collector.py
	$(PY) benchmarks/analyze.py --rows 1000000 --rows 10000000
	$(PY) benchmarks/page_load.py --runs 5
	$(PY) benchmarks/power.py

clean:
	rm -rf dist build site *.egg-info .pytest_cache .mypy_cache .ruff_cache

distclean: clean
	rm -rf $(VENV) node_modules
