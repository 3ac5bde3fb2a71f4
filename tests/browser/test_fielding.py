"""Fielding a study (issue 11) in Chromium: consent blocks the form, show_if hides and shows."""

from __future__ import annotations

import json

from browserkit import Site, Watch, open_survey
from playwright.sync_api import BrowserContext, Page
from respondent import agree_to_consent

SURVEY = "clinic-visit"
SUBMISSIONS = "/api/submissions"


def form_state(page: Page) -> dict[str, bool]:
    return page.evaluate("""() => {
        const form = document.getElementById("rr-form");
        return {hidden: form.hidden, inert: form.inert,
                visible: form.checkVisibility()};
    }""")


def test_consent_blocks_the_form_and_declining_sends_nothing(
        site: Site, context: BrowserContext, watch: Watch) -> None:
    page = open_survey(context, site, SURVEY, ready=False)
    assert page.locator("#rr-consent").is_visible()
    assert form_state(page) == {"hidden": False, "inert": True, "visible": True}
    # Nothing can be answered: a click does not reach the inputs, the keyboard skips them.
    page.locator("#q-visited input[value='yes']").click(force=True)
    assert page.locator("#q-visited input[value='yes']").is_checked() is False
    for _ in range(6):
        page.keyboard.press("Tab")
        assert page.evaluate("() => document.getElementById('rr-form').contains("
                             "document.activeElement)") is False
    page.locator("#q-age input").first.focus()
    assert page.evaluate("() => document.getElementById('rr-form').contains("
                         "document.activeElement)") is False
    page.click("#rr-consent-decline")
    declined = page.locator("#rr-consent-declined")
    assert declined.is_visible()
    assert "nothing was sent" in declined.inner_text()
    assert form_state(page)["hidden"] is True
    assert not page.locator("#rr-submit").is_visible()
    assert not page.locator("#rr-consent-agree").is_visible()
    page.wait_for_timeout(500)
    assert watch.posts() == []
    # Declining is not remembered: a reload asks again.
    page.reload()
    page.wait_for_selector("#rr-consent-agree")
    assert form_state(page)["inert"] is True
    assert watch.posts() == []
    watch.assert_clean()


def test_agreeing_shows_the_form_and_lasts_across_a_reload(
        site: Site, context: BrowserContext, watch: Watch) -> None:
    page = open_survey(context, site, SURVEY, ready=False)
    page.click("#rr-consent-agree")
    assert form_state(page) == {"hidden": False, "inert": False, "visible": True}
    assert not page.locator("#rr-consent").is_visible()
    page.reload()
    page.wait_for_selector("#rr-submit:not([disabled])")
    assert form_state(page)["visible"] is True
    assert not page.locator("#rr-consent").is_visible()
    watch.assert_clean()


def answer_and_send(page: Page, watch: Watch, visited: str) -> dict:
    """Answer clinic-visit (2 to 4 visits when asked), send it, and return the body that arrived."""
    before = len(watch.posts(SUBMISSIONS))
    page.check(f"#q-visited input[value='{visited}']")
    if visited == "yes":
        page.check("#q-visits input[value='2 to 4 times']")
    page.check("#q-shared_medicine input[value='no']")
    page.check("#q-age input[value='35-54']")
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])", timeout=60_000)
    page.click("#rr-confirm")
    page.wait_for_selector("#rr-done:not([hidden])", timeout=30_000)
    assert len(watch.posts(SUBMISSIONS)) == before + 1
    return json.loads(watch.posts(SUBMISSIONS)[-1].body or "{}")


def test_show_if_hides_and_shows_and_hidden_answers_are_not_sent(
        site: Site, context: BrowserContext, watch: Watch) -> None:
    page = open_survey(context, site, SURVEY)
    agree_to_consent(page)
    visits = page.locator("#q-visits")
    assert not visits.is_visible()
    page.check("#q-visited input[value='yes']")
    assert visits.is_visible()
    page.check("#q-visits input[value='once']")
    page.check("#q-visited input[value='no']")
    assert not visits.is_visible()
    # The hidden question is required when shown, yet does not block the form while hidden,
    # and the answer given before it was hidden is not sent.
    body = answer_and_send(page, watch, "no")
    assert body["answers"]["visited"] == "no"
    assert "visits" not in body["answers"]
    assert "once" not in json.dumps(body["answers"])

    page.evaluate("() => { localStorage.clear(); "
                  "document.dispatchEvent(new Event('rrsite:reset')); }")
    page.wait_for_selector("#rr-form:not([hidden])")
    assert not visits.is_visible(), "a new respondent starts with the follow-up hidden again"
    body = answer_and_send(page, watch, "yes")
    assert body["answers"]["visited"] == "yes"
    assert body["answers"]["visits"] == "2 to 4 times"
    watch.assert_clean()
