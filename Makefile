# The two commands README.md starts with: `make demo` and `make test`.
PYTHON ?= python3
PORT ?= 8000

.PHONY: setup setup-test demo build lint test test-fast bench clean

setup:
	bash scripts/setup.sh

setup-test:
	bash scripts/setup.sh --browser

build: setup
	rrsite build surveys -o dist

demo: build
	rrsite serve dist --port $(PORT) --db rrsite.db

lint:
	ruff check rrsite tests benchmarks
	mypy

test: setup-test
	$(MAKE) lint
	node tests/pyodide/run_core_tests.mjs
	$(PYTHON) -m pytest -q

bench: setup-test
	$(PYTHON) benchmarks/core_size.py
	$(PYTHON) benchmarks/collector.py
	$(PYTHON) benchmarks/analyze.py --rows 1000000 --rows 10000000
	$(PYTHON) benchmarks/page_load.py --runs 5

clean:
	rm -rf dist build *.egg-info .pytest_cache .mypy_cache .ruff_cache
