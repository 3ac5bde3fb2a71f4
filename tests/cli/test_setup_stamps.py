"""scripts/setup.sh: pip only when pyproject.toml changed, `npm ci` only when the lock changed.

The script runs in a copy of the checkout's layout whose Python, venv and npm are stand-ins that
log each call, so the test sees exactly what a second `make setup` would run.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script(path: Path, body: str) -> None:
    path.write_text("#!/usr/bin/env bash\n" + body, "utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A folder with scripts/setup.sh, pyproject.toml, package-lock.json and stand-ins."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "setup.sh", tmp_path / "scripts" / "setup.sh")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n", "utf-8")
    (tmp_path / "package-lock.json").write_text("{}\n", "utf-8")
    log = tmp_path / "calls.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    venv = tmp_path / ".venv" / "bin"
    venv.mkdir(parents=True)
    # the interpreter: every check passes; pip install is logged
    _script(venv / "python", f'case "$*" in *"pip install"*) echo "pip $*" >> {log} ;; esac\n')
    _script(bin_dir / "python3", "exit 0\n")
    _script(bin_dir / "npm", f'echo "npm $*" >> {log}; mkdir -p node_modules\n')
    return tmp_path


def _setup(checkout: Path, *options: str) -> list[str]:
    log = checkout / "calls.log"
    log.write_text("", "utf-8")
    env = {**os.environ, "PATH": f"{checkout / 'bin'}:{os.environ['PATH']}",
           "PYTHON": str(checkout / "bin" / "python3"), "VENV": ".venv"}
    subprocess.run(["bash", str(checkout / "scripts" / "setup.sh"), *options], cwd=checkout,
                   env=env, check=True, capture_output=True, timeout=60)
    return [line.split()[0] for line in log.read_text("utf-8").splitlines()]


def test_a_second_setup_runs_neither_pip_nor_npm(checkout: Path) -> None:
    assert _setup(checkout) == ["pip", "npm"]
    assert _setup(checkout) == []
    assert _setup(checkout, "--docs") == ["pip"]  # the docs extra was not installed yet
    assert _setup(checkout, "--docs") == []
    assert _setup(checkout) == []  # test alone: already there with the docs
    os.utime(checkout / "pyproject.toml")  # a touch changes nothing
    assert _setup(checkout) == []


def test_each_installer_reruns_when_its_own_file_changed(checkout: Path) -> None:
    _setup(checkout)
    with (checkout / "package-lock.json").open("a", encoding="utf-8") as handle:
        handle.write("\n")
    assert _setup(checkout) == ["npm"]
    with (checkout / "pyproject.toml").open("a", encoding="utf-8") as handle:
        handle.write("# changed\n")
    assert _setup(checkout) == ["pip"]
    shutil.rmtree(checkout / "node_modules")  # deleted by hand: installed again
    assert _setup(checkout) == ["npm"]
