"""rrsite/core's own test suite inside real Pyodide under Node (tests/pyodide/run_core_tests.mjs).

Run as pytest tests so that pytest-xdist schedules them beside the rest of the suite. The suite
is cut into SHARES shares (share K runs tests K, K + SHARES, ... of tests/core), each a test of
its own with its own Node process, and the checks of the trimmed standard library and of the
random source are one more: the workers run them in parallel instead of one worker running one
Node process for minutes (tests/conftest.py spreads this file's tests over the workers and sends
them first). Together they run every test of tests/core once, except the simulations marked slow,
which run in CPython only: their first seeded draws (tests/core/seeded_draws.py) must be the same
in Pyodide as in CPython (a digest of their exact repr). A Node process's exit code is
pytest's inside Pyodide (or 1 when one of its checks fails); its output is shown when it fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARES = 2


def run_node(*options: str) -> str:
    """Run run_core_tests.mjs with the options; assert it passed; return its output."""
    node = shutil.which("node")
    assert node is not None, "Node is needed to run the core's tests in Pyodide (make setup-test)"
    env = {**os.environ, "PYTHON": sys.executable}
    done = subprocess.run([node, str(ROOT / "tests/pyodide/run_core_tests.mjs"), *options],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-20000:]
    summary = [line for line in output.splitlines()
               if line.startswith("core tests inside Pyodide:")]
    assert summary and "pytest exit 0;" in summary[-1] and summary[-1].endswith(" 0 failed"), \
        output[-20000:]
    return output


def cpython_draws(share: int) -> list[str]:
    """tests/core/seeded_draws.py's lines of this share, drawn by CPython."""
    done = subprocess.run(
        [sys.executable, "-c", "from tests.core.seeded_draws import draws\n"
                               f"print('\\n'.join(draws({share}, {SHARES})))"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-5000:]
    return done.stdout.splitlines()


@pytest.mark.slow
@pytest.mark.parametrize("share", range(1, SHARES + 1), ids=lambda k: f"share{k}of{SHARES}")
def test_core_suite_passes_inside_pyodide(share: int) -> None:
    output = run_node("--share", f"{share}/{SHARES}")
    # pytest's summary inside Pyodide: this share's tests (K, K + N, ... of all) passed
    result = re.search(r"(\d+) passed, (\d+) deselected", output)
    assert result, output[-20000:]
    passed, deselected = int(result.group(1)), int(result.group(2))
    shared = len(range(share - 1, passed + deselected, SHARES))  # this share's tests
    simulations = re.search(r"simulations left to CPython: (\d+)", output)
    assert simulations, output[-20000:]
    assert passed == shared - int(simulations.group(1)) > 0, output[-20000:]
    # The simulations left to CPython: their first seeded draws are the same in Pyodide
    drawn = [line.removeprefix("draw ") for line in output.splitlines()
             if line.startswith("draw ")]
    expected = cpython_draws(share)
    assert len(drawn) == len(expected) > 0, output[-20000:]
    for inside, outside in zip(drawn, expected, strict=True):
        assert inside == outside, f"Pyodide drew {inside}\nCPython drew {outside}"


@pytest.mark.slow
def test_trimmed_stdlib_and_random_source_inside_pyodide() -> None:
    output = run_node("--checks")
    assert "ok   keep list matches a fresh trace" in output, output[-20000:]
    assert "ok   default source is SystemRandom" in output, output[-20000:]
