"""Shared pieces of the site tests: fixture templates and runtime, and one built example site."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from rrsite.site.builder import BuildResult, build

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
TEMPLATES = FIXTURES / "templates"
PYODIDE = FIXTURES / "pyodide"
SURVEYS = ROOT / "surveys"


def tree(folder: Path) -> dict[str, str]:
    """relative path -> sha256 of every file under ``folder``."""
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*")) if path.is_file()
    }


@pytest.fixture(scope="module")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    """surveys/ built once with the fixture templates and runtime, compressed, own cache."""
    base = tmp_path_factory.mktemp("example")
    return build([SURVEYS], base / "dist", TEMPLATES, PYODIDE, cache=base / "cache")


@pytest.fixture
def surveys_copy(tmp_path: Path) -> Path:
    """A private copy of surveys/ that a test may break."""
    target = tmp_path / "surveys"
    shutil.copytree(SURVEYS, target)
    return target
