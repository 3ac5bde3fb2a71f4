"""Browser tests of the respondent's page: one Chromium, one built site, one `rrsite serve`.

The site holds the example surveys of surveys/ and the survey of tests/browser/surveys/ (for the
statistical test). Every test gets a browser context that records every request the page and its
worker make, console errors, page errors and CSP violations (see browserkit.Watch).

That context is, by default, the worker's warm profile (browserkit.WarmProfile): one persistent
Chromium profile whose storage, cookies, routes, init scripts and listeners are emptied after
every test and proved empty, and whose HTTP cache (with the compiled runtime) is kept, so that a
test does not pay for Pyodide's cold start. A test marked ``fresh_profile`` gets a context of its
own with an empty cache, as a first visit has: first visits and caching, pinned code, shared
devices, forgetting and consent.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browserkit import (  # noqa: E402
    VIEWPORT,
    Site,
    WarmProfile,
    Watch,
    launch_chromium,
    serve_surveys,
    survey_files,
    watch_context,
)


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker of tests that need a profile of their own."""
    config.addinivalue_line(
        "markers", "fresh_profile: a browser test that needs an empty profile (cache included): "
        "first visits and caching, pinned code, shared devices, forgetting, consent")


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """Build every survey once and serve the site with `rrsite serve` on a free port."""
    with serve_surveys(survey_files(), tmp_path_factory.mktemp("browser-site")) as served:
        yield served


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """One headless Chromium for the whole session (the fresh profiles' browser)."""
    chromium = launch_chromium(playwright)
    yield chromium
    chromium.close()


@pytest.fixture(scope="session")
def warm_profile(playwright: Playwright,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[WarmProfile]:
    """The worker's persistent profile, lent to one test at a time."""
    profile = WarmProfile.launch(playwright, tmp_path_factory.mktemp("warm-profile"))
    yield profile
    profile.close()


@pytest.fixture
def context(request: pytest.FixtureRequest) -> Iterator[BrowserContext]:
    """The test's context: the warm profile emptied of every trace of earlier tests, or a fresh
    context (empty cache and storage) for a test marked ``fresh_profile``."""
    if request.node.get_closest_marker("fresh_profile"):
        browser: Browser = request.getfixturevalue("browser")
        ctx = browser.new_context(viewport=VIEWPORT)
        ctx.set_default_timeout(30_000)
        ctx.watch = watch_context(ctx)  # type: ignore[attr-defined]
        yield ctx
        ctx.close()
        return
    profile: WarmProfile = request.getfixturevalue("warm_profile")
    with profile.lend() as ctx:
        ctx.watch = watch_context(ctx)  # type: ignore[attr-defined]
        yield ctx


@pytest.fixture
def watch(context: BrowserContext) -> Watch:
    """The recorder of the test's context."""
    return context.watch  # type: ignore[attr-defined, no-any-return]
