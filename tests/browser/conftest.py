"""Browser tests of the respondent's page: one Chromium, one built site, one `rrsite serve`.

The site holds the example surveys of surveys/ and the survey of tests/browser/surveys/ (for the
statistical test). Every test gets a fresh browser context that records every request the page
and its worker make, console errors, page errors and CSP violations (see browserkit.Watch).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browserkit import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    Site,
    Watch,
    serve_surveys,
    survey_files,
    watch_context,
)


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """Build every survey once and serve the site with `rrsite serve` on a free port."""
    with serve_surveys(survey_files(), tmp_path_factory.mktemp("browser-site")) as served:
        yield served


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """One headless Chromium for the whole session."""
    chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield chromium
    chromium.close()


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    """A fresh context (empty cache and storage) for one test."""
    ctx = browser.new_context(viewport={"width": 1000, "height": 900})
    ctx.set_default_timeout(30_000)
    ctx.watch = watch_context(ctx)  # type: ignore[attr-defined]
    yield ctx
    ctx.close()


@pytest.fixture
def watch(context: BrowserContext) -> Watch:
    """The recorder of the test's context."""
    return context.watch  # type: ignore[attr-defined, no-any-return]
