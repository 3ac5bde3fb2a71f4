"""When the randomizer cannot start, nothing sensitive can be sent; when it is slow, submit waits.

- A Content-Security-Policy without 'wasm-unsafe-eval' on the worker (Pyodide then hangs instead
  of failing): the page says so at once and refuses to submit; no request carries an answer.
- The runtime missing (404): the same, after one more try in a fresh worker (never more).
- A start that breaks down once (the runtime's file refused once, as WebKit's "Out of bounds
  memory access" breaks one start now and then): the second try starts and the page works.
- The worker's script refused once, or the runtime's download cut off once: asked for again and
  started, never reported as a file that is not the pinned one (the bytes are compared again).
- The runtime hanging: after the startup timeout (shortened here through the page's timer) the
  page shows the error.
- The respondent faster than the runtime: submit waits, says so, and continues once it is ready.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from browserkit import Site, Watch
from playwright.sync_api import BrowserContext, Page, Route
from respondent import fill, plan_answers

pytestmark = pytest.mark.fresh_profile  # a runtime that fails to arrive on a first visit

SURVEY = "honor-code"

# Turns the page's 120 s startup timeout into 2 s (every longer timer is shortened).
SHORT_TIMERS = """
const originalSetTimeout = window.setTimeout.bind(window);
window.setTimeout = (handler, delay, ...rest) =>
  originalSetTimeout(handler, delay >= 60000 ? 2000 : delay, ...rest);
"""


def submit_before_ready(page: Page, site: Site) -> str:
    """Answer and press submit while the runtime is not ready: no review comes; the note."""
    manifest = site.manifest(SURVEY)
    fill(page, manifest, plan_answers(manifest, 0))
    page.click("#rr-submit")
    page.wait_for_timeout(300)
    assert page.locator("#rr-review").is_hidden()
    return page.locator("#rr-submit-note").inner_text()


def expect_refusal(page: Page, site: Site, watch: Watch, reason: str) -> None:
    """The failure is shown; submitting does not randomize or send anything."""
    page.wait_for_selector("html[data-rr-runtime=failed]", state="attached", timeout=30_000)
    text = page.locator("#rr-runtime-text").inner_text()
    assert "could not start" in text and reason in text, text
    assert page.locator("#rr-runtime-text").get_attribute("role") == "alert"
    assert "could not start" in submit_before_ready(page, site)
    assert [r for r in watch.requests if r.method != "GET"] == []
    manifest = site.manifest(SURVEY)
    key = f"rrsite:{manifest['id']}:{manifest['version']}"
    assert page.evaluate("(key) => localStorage.getItem(key)", key) is None


def test_wrong_csp_on_the_worker_is_reported(site: Site, context: BrowserContext,
                                             watch: Watch) -> None:
    def strict_csp(route: Route) -> None:
        response = route.fetch()
        headers = dict(response.headers)
        headers["content-security-policy"] = headers["content-security-policy"].replace(
            " 'wasm-unsafe-eval'", "")
        route.fulfill(response=response, headers=headers)

    page = context.new_page()
    page.route("**/_rr/worker.*.js", strict_csp)
    page.goto(site.page_url(SURVEY))
    expect_refusal(page, site, watch, "security settings")


RETRIES = "() => performance.getEntriesByName('rr-start-retried').map((mark) => mark.detail)"


def test_missing_runtime_is_reported(site: Site, context: BrowserContext, watch: Watch) -> None:
    asked: list[str] = []

    def missing(route: Route) -> None:
        asked.append(route.request.url)
        route.fulfill(status=404, body="not here")

    page = context.new_page()
    page.route("**/pyodide.asm.wasm", missing)
    page.goto(site.page_url(SURVEY))
    expect_refusal(page, site, watch, "pyodide.asm.wasm: HTTP 404")
    assert page.evaluate(RETRIES) == ["pyodide.asm.wasm: HTTP 404"]  # tried again, once
    assert len(asked) == 2


def answer_and_send(page: Page, site: Site, watch: Watch) -> None:
    """The page works: answered, reviewed, sent once, nothing sensitive in any request."""
    manifest = site.manifest(SURVEY)
    fill(page, manifest, plan_answers(manifest, 0))
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])")
    page.click("#rr-confirm")
    page.wait_for_selector("#rr-done:not([hidden])")
    assert len(watch.posts("/api/submissions")) == 1
    watch.assert_clean()


def ready_after_one_failure(context: BrowserContext, site: Site, pattern: str,
                            first: Callable[[Route], None]) -> tuple[Page, list[str]]:
    """Open the survey with the first request for ``pattern`` answered by ``first`` (the others
    go through) and wait for the randomizer to get ready; the page and the URLs asked."""
    asked: list[str] = []

    def once(route: Route) -> None:
        asked.append(route.request.url)
        if len(asked) == 1:
            first(route)
        else:
            route.continue_()

    page = context.new_page()
    page.route(pattern, once)
    page.goto(site.page_url(SURVEY))
    page.wait_for_selector("html[data-rr-runtime=ready]", state="attached", timeout=90_000)
    return page, asked


def busy(route: Route) -> None:
    route.fulfill(status=503, body="busy")


def test_a_start_that_breaks_down_once_is_tried_again(site: Site, context: BrowserContext,
                                                      watch: Watch) -> None:
    page, asked = ready_after_one_failure(context, site, "**/pyodide.asm.wasm", busy)
    assert page.evaluate(RETRIES) == ["pyodide.asm.wasm: HTTP 503"]
    assert len(asked) == 2
    answer_and_send(page, site, watch)


def test_the_workers_script_refused_once_is_asked_for_again(site: Site, context: BrowserContext,
                                                            watch: Watch) -> None:
    page, asked = ready_after_one_failure(context, site, "**/_rr/worker.*.js", busy)
    name = asked[0].rsplit("/", 1)[-1]
    retries = page.evaluate(RETRIES)
    assert len(retries) == 1 and retries[0].startswith(f"{name}: "), retries  # not "integrity"
    # the browser logs the refused first fetch (the 503, and its body not matching the pin)
    assert any(name in error and "integrity" in error for error in watch.errors), watch.errors
    assert all(name in error or error.startswith("console: Failed")
               for error in watch.errors), watch.errors
    watch.errors.clear()
    answer_and_send(page, site, watch)


def test_a_runtime_download_that_broke_off_is_not_called_a_swapped_file(
        site: Site, context: BrowserContext, watch: Watch) -> None:
    page, _ = ready_after_one_failure(context, site, "**/pyodide.asm.wasm",
                                      lambda route: route.abort("connectionreset"))
    # the worker asked again without the cache, found the pinned bytes: an error, tried once more
    assert page.evaluate(RETRIES) == ["pyodide.asm.wasm: the download broke off"]
    answer_and_send(page, site, watch)


def test_hanging_runtime_times_out(site: Site, context: BrowserContext, watch: Watch) -> None:
    held: list[Route] = []
    page = context.new_page()
    page.add_init_script(SHORT_TIMERS)
    page.route("**/pyodide.asm.wasm", lambda route: held.append(route))
    page.goto(site.page_url(SURVEY))
    expect_refusal(page, site, watch, "did not finish starting")
    for route in held:
        route.abort()


def test_submit_waits_for_a_slow_runtime(site: Site, context: BrowserContext,
                                         watch: Watch) -> None:
    held: list[Route] = []
    page = context.new_page()
    page.route("**/pyodide.asm.wasm", lambda route: held.append(route))
    page.goto(site.page_url(SURVEY))
    page.wait_for_selector("#rr-submit:not([disabled])", state="attached")
    assert "Waiting for the randomizer" in submit_before_ready(page, site)
    assert held, "the runtime was not requested"
    for route in held:
        route.continue_()
    page.wait_for_selector("#rr-review:not([hidden])", timeout=90_000)
    page.click("#rr-confirm")
    page.wait_for_selector("#rr-done:not([hidden])")
    assert len(watch.posts("/api/submissions")) == 1
    watch.assert_clean()
