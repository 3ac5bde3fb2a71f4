"""No stale state: what the page shows is true now, not left over from before.

Each test fails on a page without its fix: errors that outlive their fix, an error summary focused
without a ring, a status line stuck on "Preparing the randomizer" after a reload, a download survey
that later says its answers were sent, the closing prose before anything is sent (and the thanks
twice), and "Try again" for a permanent refusal.
"""

from __future__ import annotations

import json

from browserkit import Site, Watch, open_survey
from playwright.sync_api import BrowserContext, Route
from respondent import (
    DONE,
    confirm,
    error_summary_visible,
    field_error,
    fill,
    invalid_inputs,
    plan_answers,
    retry_offered,
    review_intro,
    runtime_status,
    send_error,
    submit,
    wait_review,
)


def first_sensitive(manifest: dict) -> dict:
    return next(q for q in manifest["questions"] if q["sensitive"])


def test_errors_go_once_fixed_and_the_summary_shows_focus(site: Site, context: BrowserContext,
                                                          watch: Watch) -> None:
    manifest = site.manifest("honor-code")
    page = open_survey(context, site, "honor-code", ready=False)
    submit(page)  # nothing answered
    q = first_sensitive(manifest)
    assert field_error(page, q["id"])
    assert invalid_inputs(page, q["id"]) > 0
    ring = page.evaluate("""() => {
      const el = document.activeElement, style = getComputedStyle(el);
      return {id: el.id, style: style.outlineStyle, width: parseFloat(style.outlineWidth)};
    }""")
    assert ring["id"] == "rr-errors" and ring["style"] != "none" and ring["width"] >= 2, ring
    # Answer every question: each error, outline and the summary disappear without a new submit.
    fill(page, manifest, plan_answers(manifest, 0))
    for question in manifest["questions"]:
        assert field_error(page, question["id"]) is None, question["id"]
        assert invalid_inputs(page, question["id"]) == 0, question["id"]
    assert not error_summary_visible(page)
    watch.assert_clean()


def test_reload_with_a_stored_report_does_not_announce_a_runtime(
        site: Site, context: BrowserContext, watch: Watch) -> None:
    manifest = site.manifest("honor-code")
    page = open_survey(context, site, "honor-code")
    fill(page, manifest, plan_answers(manifest, 0))
    submit(page)
    wait_review(page)
    page.reload()
    wait_review(page)
    page.wait_for_timeout(300)
    status = runtime_status(page)
    assert status["state"] not in ("loading", None), status
    assert not status["visible"] and not status["live"] and status["text"] == "", status
    watch.assert_clean()


def test_download_never_claims_it_was_sent(site: Site, context: BrowserContext,
                                          watch: Watch) -> None:
    manifest = site.manifest("workplace")
    page = open_survey(context, site, "workplace")
    fill(page, manifest, plan_answers(manifest, 0))
    submit(page)
    wait_review(page)
    with page.expect_download():
        confirm(page)
    page.reload()
    wait_review(page)
    intro = review_intro(page)
    assert "sent on" not in intro and "counted once" not in intro, intro
    assert "nothing was sent" in intro, intro
    # The opening line too: the same answers are saved again, never "sent".
    assert "answers are sent" not in intro and "the same answers are saved" in intro, intro
    assert watch.posts() == []
    watch.assert_clean()


def test_closing_words_only_after_sending_and_once(site: Site, context: BrowserContext,
                                                   watch: Watch) -> None:
    manifest = site.manifest("drug-use")  # its closing prose: "¡Gracias por participar!"
    page = open_survey(context, site, "drug-use")
    before = page.locator("body").inner_text()
    assert "gracias" not in before.lower()
    fill(page, manifest, plan_answers(manifest, 0))
    submit(page)
    wait_review(page)
    assert "gracias" not in page.locator("body").inner_text().lower()
    confirm(page)
    after = page.locator(DONE).inner_text() + page.locator("body").inner_text()
    assert page.locator("body").inner_text().lower().count("gracias") == 1, after
    watch.assert_clean()


def test_permanent_refusal_says_what_is_wrong(site: Site, context: BrowserContext,
                                             watch: Watch) -> None:
    manifest = site.manifest("honor-code")
    page = open_survey(context, site, "honor-code")
    attempts: list[str] = []

    def refuse(route: Route) -> None:
        attempts.append(route.request.post_data or "")
        route.fulfill(status=405, body="Method Not Allowed")

    page.route("**/api/submissions", refuse)
    fill(page, manifest, plan_answers(manifest, 0))
    submit(page)
    shown = wait_review(page)
    page.click("#rr-confirm")
    page.wait_for_function("() => document.getElementById('rr-send-error').textContent !== ''")
    assert not retry_offered(page)
    assert "405" in send_error(page) and "will not help" in send_error(page)
    assert len(attempts) == 1 and json.loads(attempts[0]) == json.loads(shown)
    watch.errors.clear()  # the browser logs the refused request itself
    assert watch.violations() == []
