"""The page keeps its promises: one randomization per survey version per device, across tabs.

- Two tabs of one browser: tab B submits while its randomizer is still starting, tab A randomizes
  meanwhile. B must flip no coins and leave its form for the "already answered" screen (the
  report is A's tab's: it is shown in B only after "I answered: show my answers"): exactly one
  randomization and one respondent token reach the collector.
- A tab left open on the form leaves it when another tab stored a report (the `storage` event).
- When the browser refuses storage, the page says so before the respondent answers.
"""

from __future__ import annotations

import json

from browserkit import Site, Watch, open_survey, wait_ready, wait_until
from playwright.sync_api import BrowserContext, Route
from respondent import (
    FORM,
    confirm,
    fill,
    log_worker_results,
    plan_answers,
    storage_notice,
    submit,
    submit_note,
    wait_review,
    worker_results,
)

SURVEY = "honor-code"


def test_two_tabs_randomize_once(site: Site, context: BrowserContext, watch: Watch) -> None:
    manifest = site.manifest(SURVEY)
    page_a = open_survey(context, site, SURVEY)
    log_worker_results(page_a)

    # Tab B's randomizer cannot finish starting until the gate opens (its core zip is held).
    held: list[Route] = []

    def hold(route: Route) -> None:
        held.append(route)

    context.route("**/core.*.zip", hold)
    page_b = open_survey(context, site, SURVEY, ready=False)
    fill(page_b, manifest, plan_answers(manifest, 1))
    submit(page_b)
    wait_until(lambda: submit_note(page_b) != "" and page_b.evaluate(
        "() => document.documentElement.dataset.rrRuntime") == "loading", what="B waiting")
    assert page_b.locator(FORM).is_visible()

    # Meanwhile tab A randomizes and stores its report.
    fill(page_a, manifest, plan_answers(manifest, 0))
    submit(page_a)
    shown_a = wait_review(page_a)

    # Tab B's randomizer now starts; B must not flip its own coins: it says the survey was
    # answered here, and shows A's report only when asked.
    wait_until(lambda: bool(held), what="B's core request")
    for route in held:
        route.continue_()
    context.unroute("**/core.*.zip")
    wait_ready(page_b)
    log_worker_results(page_b)
    page_b.wait_for_selector("#rr-answered:not([hidden])", timeout=60_000)
    page_b.click("#rr-show-mine")
    shown_b = wait_review(page_b)
    assert shown_b == shown_a
    page_b.wait_for_timeout(500)  # let any (wrong) late randomization in B come back
    assert worker_results(page_b) == []
    assert len(worker_results(page_a)) == 1

    confirm(page_b)
    confirm(page_a)
    posts = watch.posts("/api/submissions")
    tokens = {json.loads(p.body or "")["respondent"] for p in posts}
    assert tokens == {json.loads(shown_a)["respondent"]}
    watch.assert_clean()


def test_open_tab_leaves_its_form_for_the_stored_report(site: Site, context: BrowserContext,
                                             watch: Watch) -> None:
    manifest = site.manifest(SURVEY)
    page_a = open_survey(context, site, SURVEY)
    page_b = open_survey(context, site, SURVEY)
    fill(page_b, manifest, plan_answers(manifest, 2))  # a half-answered form in tab B
    fill(page_a, manifest, plan_answers(manifest, 0))
    submit(page_a)
    shown_a = wait_review(page_a)
    # Without any click in B, B leaves its form for the "already answered" screen and its true
    # answers are cleared; A's report is there for "I answered: show my answers".
    page_b.wait_for_selector("#rr-answered:not([hidden])", timeout=10_000)
    assert page_b.locator(FORM).count() == 0
    checked = page_b.evaluate("() => document.querySelectorAll('input[data-truth]:checked').length")
    assert checked == 0
    page_b.click("#rr-show-mine")
    assert wait_review(page_b) == shown_a
    watch.assert_clean()


def test_blocked_storage_is_said_before_answering(site: Site, context: BrowserContext,
                                                 watch: Watch) -> None:
    context.add_init_script("""
      Object.defineProperty(window, "localStorage", {
        get() { throw new DOMException("denied", "SecurityError"); },
      });
    """)
    page = open_survey(context, site, SURVEY, ready=False)
    notice = storage_notice(page)
    assert notice is not None and "keep" in notice
    # It comes before the first question, where the respondent reads it before answering.
    before = page.evaluate("""() => {
      const notice = document.getElementById('rr-storage-notice');
      const first = document.querySelector('fieldset, .rr-question');
      return Boolean(notice.compareDocumentPosition(first) & Node.DOCUMENT_POSITION_FOLLOWING);
    }""")
    assert before
