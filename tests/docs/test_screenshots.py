"""The tutorial's screenshots, taken by a browser test so they cannot go stale (never by hand).

Follows the tutorial (docs/tutorial/index.md): the starter from `rrsite new`, built and served by
`rrsite serve`, answered in Chromium; then a simulated export analysed into the HTML report. The
pictures are written to docs/assets/screenshots/, where the tutorial shows them. The coins are
fixed (constant bytes from the worker's crypto.getRandomValues) so that the review, and with it
the picture, is the same on every run.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))

from browserkit import launch_chromium, rrsite, running  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "assets" / "screenshots"

# The page's own random draws (the respondent token) from a seeded generator, for a stable picture.
SEEDED_PAGE = """(() => {
  let state = 0x2545f491;
  crypto.getRandomValues = (view) => {
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    for (let i = 0; i < bytes.length; i++) {
      state ^= state << 13; state ^= state >>> 17; state ^= state << 5;
      bytes[i] = state & 0xff;
    }
    return view;
  };
})();"""

FIXED_COINS = """() => {
  crypto.getRandomValues = (view) => view.fill(0);
  return true;
}"""


@pytest.fixture(scope="module")
def tutorial(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """The tutorial's starter survey, built and served; yields (folder, the page's URL)."""
    folder = tmp_path_factory.mktemp("tutorial")
    for command in (["new", "my-survey"], ["build", "my-survey.md", "-o", "dist"]):
        rrsite(*command, cwd=folder, timeout=300)
    with running("serve", "dist", "--port", "0", "--db", "rrsite.db", cwd=folder) as (url, _):
        yield folder, url + "my-survey/"


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    chromium = launch_chromium(playwright)
    yield chromium
    chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 900, "height": 1000},
                                  color_scheme="light", reduced_motion="reduce")
    context.set_default_timeout(60_000)
    context.add_init_script(SEEDED_PAGE)
    yield context.new_page()
    context.close()


def test_page_and_review_screenshots(tutorial: tuple[Path, str], page: Page) -> None:
    _, url = tutorial
    page.goto(url)
    page.wait_for_selector("html[data-rr-runtime=ready]")
    assert "Have you ever" in page.locator("#q-did_it legend").inner_text()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "tutorial-page.png"), full_page=True)

    assert len(page.workers) == 1
    page.workers[0].evaluate(FIXED_COINS)
    page.locator('#q-did_it input[data-truth][value="yes"]').check()
    page.locator('#q-how_often input[name="how_often"][value="Sometimes"]').check()
    page.locator("#rr-submit").click()
    page.wait_for_selector("#rr-review:not([hidden])")
    body = page.locator("#rr-body").text_content() or ""  # under a closed disclosure
    assert '"did_it"' in body and '"how_often": "Sometimes"' in body
    # the review as it opens: what will be sent, with a sentence of what the coin drew
    assert page.locator("#rr-answers dd[data-glance-for=did_it]").is_visible()
    page.locator("#rr-review").scroll_into_view_if_needed()
    page.locator("#rr-review").screenshot(path=str(SHOTS / "tutorial-review.png"))
    for name in ("tutorial-page.png", "tutorial-review.png"):
        assert (SHOTS / name).stat().st_size > 10_000, name


def test_report_screenshot(tutorial: tuple[Path, str], page: Page) -> None:
    folder, _ = tutorial
    rrsite("simulate", "my-survey.md", "--respondents", "1000", "--truth", "did_it=0.2",
           "--seed", "1", "-o", "answers.csv", cwd=folder, timeout=300)
    rrsite("analyze", "answers.csv", "--survey", "my-survey.md", "--by", "how_often",
           "--format", "html", "-o", "report.html", cwd=folder, timeout=300)
    page.goto((folder / "report.html").as_uri())
    assert "did_it" in page.content()
    page.screenshot(path=str(SHOTS / "tutorial-report.png"))
    assert (SHOTS / "tutorial-report.png").stat().st_size > 10_000
