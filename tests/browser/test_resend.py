"""A randomized report is made once per device and survey version, kept, and re-sent as is.

- A reload (or a second visit) shows the stored report and sends exactly the same body (same
  respondent token, same answers) instead of flipping the coins again, whether or not it was
  already sent; the collector counts it once.
- When sending fails (no connection, server errors), the report is kept and offered again; the
  retry (also after a reload) carries the identical body. An endpoint's retries do the same.
"""

from __future__ import annotations

import json

from browserkit import OPERATOR_HEADERS, Site, Watch, open_survey
from playwright.sync_api import BrowserContext, Page, Route
from respondent import fill, plan_answers, shown_body

SURVEY = "honor-code"


def answer_and_review(page: Page, manifest: dict) -> str:
    fill(page, manifest, plan_answers(manifest, 0))
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])", timeout=60_000)
    return shown_body(page)


def health_count(page: Page, site: Site) -> int:
    return page.evaluate(  # type: ignore[no-any-return]
        "async ([url, headers]) => (await (await fetch(url, {headers})).json()).submissions",
        [site.url + "api/health", OPERATOR_HEADERS])


def test_reload_resends_the_same_report(site: Site, context: BrowserContext,
                                        watch: Watch) -> None:
    manifest = site.manifest(SURVEY)
    page = open_survey(context, site, SURVEY)
    shown = answer_and_review(page, manifest)
    first = json.loads(shown)

    # Reload before confirming: the same report is offered, the form is not shown again.
    page.reload()
    page.wait_for_selector("#rr-review:not([hidden])")
    assert page.locator("#rr-form").is_hidden()
    assert shown_body(page) == shown
    assert page.locator("#rr-transcript").is_hidden()  # the coins' transcript is not kept
    stored_before = health_count(page, site)
    page.click("#rr-confirm")
    page.wait_for_selector("#rr-done:not([hidden])")
    assert health_count(page, site) == stored_before + 1

    # A second visit: the report is sent again, identical, and counted once.
    page.goto(site.page_url(SURVEY))
    page.wait_for_selector("#rr-review:not([hidden])")
    assert shown_body(page) == shown
    page.click("#rr-confirm")
    page.wait_for_selector("#rr-done:not([hidden])")
    assert health_count(page, site) == stored_before + 1

    posts = watch.posts("/api/submissions")
    assert [p.body for p in posts] == [shown, shown]
    assert json.loads(posts[0].body or "")["respondent"] == first["respondent"]
    # A stored report needs no coins: the revisit did not start the randomizer.
    assert page.workers == []
    watch.assert_clean()


def test_failed_send_keeps_the_report_and_retries_it(site: Site, context: BrowserContext,
                                                     watch: Watch) -> None:
    manifest = site.manifest(SURVEY)
    page = open_survey(context, site, SURVEY)
    attempts: list[str] = []

    def offline(route: Route) -> None:
        attempts.append(route.request.post_data or "")
        route.abort("internetdisconnected")

    page.route("**/api/submissions", offline)
    shown = answer_and_review(page, manifest)
    page.click("#rr-confirm")
    page.wait_for_selector("#rr-retry-box:not([hidden])", timeout=30_000)
    assert "Sending did not work" in page.locator("#rr-send-error").inner_text()
    assert attempts == [shown] * 3  # the page's own retries, with the same body

    # Still offline after a reload: the report survives, is offered again, fails again.
    page.reload()
    page.wait_for_selector("#rr-review:not([hidden])")
    assert shown_body(page) == shown
    page.click("#rr-confirm")
    page.wait_for_selector("#rr-retry-box:not([hidden])", timeout=30_000)
    page.unroute("**/api/submissions")

    # Back online: "Try again" sends the very same body.
    page.click("#rr-retry")
    page.wait_for_selector("#rr-done:not([hidden])")
    assert set(attempts) == {shown}
    delivered = [p.body for p in watch.posts("/api/submissions")]
    assert delivered[-1] == shown
    assert set(delivered) == {shown}
    page_errors = [e for e in watch.errors if "ERR_INTERNET_DISCONNECTED" not in e]
    assert page_errors == []
    assert watch.violations() == []


def test_endpoint_retry_carries_the_same_token(site: Site, context: BrowserContext,
                                               watch: Watch) -> None:
    survey = next(m for m in (site.manifest(p.name) for p in site.dist.iterdir()
                              if (p / "survey.json").is_file())
                  if m["submit"]["to"] == "endpoint")
    url = survey["submit"]["url"]
    statuses = iter([503, 502, 201])
    received: list[str] = []

    def endpoint(route: Route) -> None:
        cors = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "content-type"}
        if route.request.method == "OPTIONS":
            route.fulfill(status=204, headers=cors)
            return
        received.append(route.request.post_data or "")
        status = next(statuses)
        route.fulfill(status=status, headers={**cors, "Content-Type": "application/json"},
                      body='{"status": "stored"}' if status == 201 else '{"error": "busy"}')

    page = context.new_page()
    page.route(url, endpoint)
    page.goto(site.page_url(survey["id"]))
    page.wait_for_selector("html[data-rr-runtime=ready]", state="attached", timeout=90_000)
    shown = answer_and_review(page, survey)
    page.click("#rr-confirm")
    page.wait_for_selector("#rr-done:not([hidden])", timeout=30_000)
    assert received == [shown] * 3
    assert json.loads(shown)["survey"] == survey["id"]
    # The failed attempts show as console errors (HTTP 5xx); nothing else may.
    assert [e for e in watch.errors if "status of 50" not in e] == []
    assert watch.violations() == []
