"""rrsite/core's own test suite inside real Pyodide under Node (tests/pyodide/run_core_tests.mjs).

Run as a pytest test so that pytest-xdist schedules it beside the rest of the suite: the Node
process uses one core for a few minutes, which was a step of its own before every pytest worker
started. The script's exit code is pytest's inside Pyodide (or 1 when one of its checks of the
trimmed standard library or of the random source fails); its output is shown when it fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_core_suite_passes_inside_pyodide() -> None:
    node = shutil.which("node")
    assert node is not None, "Node is needed to run the core's tests in Pyodide (make setup-test)"
    env = {**os.environ, "PYTHON": sys.executable}
    done = subprocess.run([node, str(ROOT / "tests/pyodide/run_core_tests.mjs")], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=1800)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-20000:]
    summary = [line for line in output.splitlines() if line.startswith("core tests inside Pyodide")]
    assert summary and "pytest exit 0;" in summary[-1] and summary[-1].endswith(" 0 failed"), \
        output[-20000:]
