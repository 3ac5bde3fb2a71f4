"""rrsite/core's own test suite inside real Pyodide under Node (tests/pyodide/run_core_tests.mjs).

Run as pytest tests so that pytest-xdist schedules them beside the rest of the suite. The suite
is cut into SHARES shares (share K runs tests K, K + SHARES, ... of tests/core), each a test of
its own with its own Node process, and the checks of the trimmed standard library and of the
random source are one more: the workers run them in parallel instead of one worker running one
Node process for minutes (tests/conftest.py spreads this file's tests over the workers and sends
them first). Together they run every test of tests/core once. The simulations (marked slow) run
on a tape inside Pyodide (tests/core/tape.py: the first seeded draws recorded, then the test
stops); the tapes must be CPython's, where the simulations run in full. A Node process's exit
code is pytest's inside Pyodide (or 1 when one of its checks fails); its output is shown when it
fails.
"""

from __future__ import annotations

import functools
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


def tapes(output: str) -> dict[str, tuple[str, str]]:
    """The ``tape <node id> <records> <digest>`` lines of tests/core/tape.py, by node id."""
    lines = [line.removeprefix("tape ").rsplit(" ", 2) for line in output.splitlines()
             if line.startswith("tape ")]
    return {nodeid: (records, digest) for nodeid, records, digest in lines}


@functools.cache
def cpython_tapes() -> tuple[list[str], dict[str, tuple[str, str]]]:
    """tests/core in CPython: every test's node id in collection order, and the simulations'
    tapes (the simulations themselves run in full elsewhere in this session)."""
    def pytest_output(*options: str) -> str:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "-p", "no:randomly", *options, "tests/core"],
                              cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, (done.stdout + done.stderr)[-5000:]
        return done.stdout

    order = [line for line in pytest_output("--co").splitlines() if "::" in line]
    return order, tapes(pytest_output("-p", "tests.core.tape", "-m", "slow"))


@pytest.mark.slow
@pytest.mark.parametrize("share", range(1, SHARES + 1), ids=lambda k: f"share{k}of{SHARES}")
def test_core_suite_passes_inside_pyodide(share: int) -> None:
    output = run_node("--share", f"{share}/{SHARES}")
    # pytest's summary inside Pyodide: this share's tests (K, K + N, ... of all) passed
    result = re.search(r"(\d+) passed, (\d+) deselected", output)
    assert result, output[-20000:]
    passed, deselected = int(result.group(1)), int(result.group(2))
    assert passed == len(range(share - 1, passed + deselected, SHARES)) > 0, output[-20000:]
    # The simulations ran on a tape here: their first seeded draws are CPython's
    order, expected = cpython_tapes()
    mine = {nodeid for index, nodeid in enumerate(order) if index % SHARES == share - 1}
    taped = tapes(output)
    assert set(taped) == mine & set(expected) and taped, (sorted(taped), sorted(expected))
    for nodeid, (records, digest) in taped.items():
        assert (records, digest) == expected[nodeid], \
            f"{nodeid}: Pyodide drew {records} {digest}, CPython {expected[nodeid]}"
    assert sum(int(records) for records, _ in taped.values()) > 0


@pytest.mark.slow
def test_trimmed_stdlib_and_random_source_inside_pyodide() -> None:
    output = run_node("--checks")
    assert "ok   keep list matches a fresh trace" in output, output[-20000:]
    assert "ok   default source is SystemRandom" in output, output[-20000:]
