"""Fixtures shared by every test folder.

Playwright's sync API allows one driver per thread at a time, so every test that drives Chromium
(tests/browser, tests/collect's end-to-end test, tests/pyodide) takes this session's `playwright`
instead of starting its own.
"""

from collections.abc import Iterator

import pytest
from playwright.sync_api import Playwright, sync_playwright


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    """The one Playwright driver of the test session."""
    with sync_playwright() as driver:
        yield driver
