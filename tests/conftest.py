"""Fixtures shared by every test folder.

Playwright's sync API allows one driver per thread at a time, so every test that drives Chromium
(tests/browser, tests/collect's end-to-end test, tests/pyodide) takes this session's `playwright`
instead of starting its own. `simulate_export` writes a survey and runs `rrsite simulate` on it.
"""

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Playwright, sync_playwright


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    """The one Playwright driver of the test session."""
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def simulate_export() -> Callable[..., tuple[Path, Path]]:
    """``run(folder, survey_text, *options)``: the survey written to folder/s.md and
    ``rrsite simulate`` run on it with the options into folder/out.csv; (survey, export)."""
    from rrsite.cli import main

    def run(root: Path, survey_text: str, *options: str) -> tuple[Path, Path]:
        survey = root / "s.md"
        survey.write_text(survey_text, encoding="utf-8")
        out = root / "out.csv"
        assert main(["simulate", str(survey), *options, "-o", str(out)]) == 0
        return survey, out

    return run
