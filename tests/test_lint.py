"""`make lint` as tests of `make test`: ruff on rrsite, tests and benchmarks, and mypy --strict on
rrsite (its settings: pyproject.toml's [tool.mypy]).

They run inside the pytest run rather than before it so that the type check (about 12 s of one
core on a fresh clone, with no mypy cache) runs beside the other worker's tests instead of holding
both cores' work back: tests/conftest.py sends them first, each on its own. `make check` runs
`make lint` itself.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def lint(*command: str) -> None:
    """Run ``python -m <command>`` at the repository's root; fail with its output."""
    done = subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}{done.stderr}"


def test_ruff() -> None:
    lint("ruff", "check", "rrsite", "tests", "benchmarks")


def test_mypy_strict() -> None:
    lint("mypy")
