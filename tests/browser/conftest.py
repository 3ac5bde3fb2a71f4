"""Browser tests of the respondent's page: one Chromium, one built site, one `rrsite serve`.

The site holds the example surveys of surveys/ and the survey of tests/browser/surveys/ (for the
statistical test). Every test gets a fresh browser context that records every request the page
and its worker make, console errors, page errors and CSP violations (see browserkit.Watch).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browserkit import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    ROOT,
    Site,
    Watch,
    front_matter_id,
    survey_files,
    watch_context,
)


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """Build every survey once and serve the site with `rrsite serve` on a free port."""
    root = tmp_path_factory.mktemp("browser-site")
    sources = root / "surveys"
    sources.mkdir()
    ids = {}
    for file in survey_files():
        copy = sources / file.name
        copy.write_bytes(file.read_bytes())
        ids[file.name] = front_matter_id(copy)
    dist = root / "dist"
    subprocess.run([sys.executable, "-m", "rrsite", "build", str(sources), "-o", str(dist)],
                   check=True, cwd=ROOT, timeout=600, capture_output=True)
    db = root / "collector.db"
    process = subprocess.Popen(
        [sys.executable, "-m", "rrsite", "serve", str(dist), "--port", "0", "--db", str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert match, f"rrsite serve did not start: {line!r}"
        yield Site(dist, match.group(0), db, ids)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


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
