"""Fielding a study in Chromium: consent blocks the form, show_if hides and shows."""

from __future__ import annotations

import json
import re

import pytest
from browserkit import Site, Watch, open_survey, wait_ready
from playwright.sync_api import BrowserContext, Page
from respondent import agree_to_consent, go_to_page

SURVEY = "clinic-visit"
SUBMISSIONS = "/api/submissions"


def form_state(page: Page) -> dict[str, bool]:
    return page.evaluate("""() => {
        const form = document.getElementById("rr-form");
        return {hidden: form.hidden, inert: form.inert,
                visible: form.checkVisibility()};
    }""")


@pytest.mark.fresh_profile
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
    page.locator("#rr-page-next").focus()
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


@pytest.mark.fresh_profile
def test_agreeing_shows_the_form_and_lasts_across_a_reload(
        site: Site, context: BrowserContext, watch: Watch) -> None:
    page = open_survey(context, site, SURVEY, ready=False)
    page.click("#rr-consent-agree")
    assert form_state(page) == {"hidden": False, "inert": False, "visible": True}
    assert not page.locator("#rr-consent").is_visible()
    page.reload()
    page.wait_for_selector("#rr-submit:not([disabled])", state="attached")
    assert form_state(page)["visible"] is True
    assert not page.locator("#rr-consent").is_visible()
    watch.assert_clean()


def answer_and_send(page: Page, watch: Watch, visited: str) -> dict:
    """Answer clinic-visit (2 to 4 visits when asked), send it, and return the body that arrived."""
    before = len(watch.posts(SUBMISSIONS))
    go_to_page(page, 1)
    page.check(f"#q-visited input[value='{visited}']")
    if visited == "yes":
        page.check("#q-visits input[value='2 to 4 times']")
    go_to_page(page, 2)
    page.check("#q-shared_medicine input[value='no']")
    go_to_page(page, 3)
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
    agree_to_consent(page)  # a new respondent is asked for consent again
    assert not visits.is_visible(), "a new respondent starts with the follow-up hidden again"
    body = answer_and_send(page, watch, "yes")
    assert body["answers"]["visited"] == "yes"
    assert body["answers"]["visits"] == "2 to 4 times"
    watch.assert_clean()


def storage_text(page: Page) -> str:
    return page.evaluate("""() => JSON.stringify([Object.entries(sessionStorage),
                                                   Object.entries(localStorage)])""")


def test_pages_keep_direct_answers_across_pages_and_a_reload(
        site: Site, context: BrowserContext, watch: Watch) -> None:
    page = open_survey(context, site, SURVEY)
    agree_to_consent(page)
    label = page.locator("#rr-page-label")
    assert label.inner_text() == "Page 1 of 3"
    assert page.locator("#rr-page-back").is_disabled()
    assert not page.locator("#q-shared_medicine").is_visible()
    page.check("#q-visited input[value='yes']")
    page.check("#q-visits input[value='once']")
    page.click("#rr-page-next")
    assert label.inner_text() == "Page 2 of 3"
    assert page.evaluate("() => document.getElementById('rr-page-progress').value") == 2
    assert not page.locator("#q-visited").is_visible()
    page.check("#q-shared_medicine input[value='yes']")  # a true sensitive answer
    page.click("#rr-page-next")
    page.check("#q-age input[value='18-34']")
    assert not page.locator("#rr-page-next").is_visible()
    stored = storage_text(page)
    assert "shared_medicine" not in stored, "a sensitive answer was stored"

    page.reload()
    page.wait_for_selector("#rr-page-label")
    page.wait_for_function("() => document.getElementById('rr-page-label').textContent"
                           " === 'Page 3 of 3'")
    assert page.locator("#q-age input[value='18-34']").is_checked()
    page.click("#rr-page-back")
    # The true sensitive answer is not kept: it has to be given again.
    assert not page.locator("#q-shared_medicine input[value='yes']").is_checked()
    page.click("#rr-page-back")
    assert page.locator("#q-visited input[value='yes']").is_checked()
    assert page.locator("#q-visits").is_visible(), "the restored answer shows its follow-up"
    assert page.locator("#q-visits input[value='once']").is_checked()

    # Submitting (on the last page: the only one with the button) with the sensitive
    # question unanswered goes to its page and says why.
    wait_ready(page)
    assert not page.locator("#rr-submit").is_visible()
    go_to_page(page, 3)
    page.click("#rr-submit")
    page.wait_for_selector("#rr-errors:not([hidden])")
    assert label.inner_text() == "Page 2 of 3"
    assert page.locator("#q-shared_medicine-error").is_visible()
    page.check("#q-shared_medicine input[value='no']")
    go_to_page(page, 3)
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])", timeout=60_000)
    page.click("#rr-confirm")
    page.wait_for_selector("#rr-done:not([hidden])")
    body = json.loads(watch.posts(SUBMISSIONS)[-1].body or "{}")
    assert {k: body["answers"][k] for k in ("visited", "visits", "age")} == {
        "visited": "yes", "visits": "once", "age": "18-34"}
    assert "rrsite:draft" not in storage_text(page), "the draft outlived the submission"
    watch.assert_clean()


def test_practice_round_runs_the_device_and_sends_nothing(
        site: Site, context: BrowserContext, watch: Watch) -> None:
    page = open_survey(context, site, SURVEY)
    agree_to_consent(page)
    go_to_page(page, 2)
    box = page.locator("#q-shared_medicine-practice")
    assert box.is_visible()
    before = len(watch.requests)
    reports = set()
    for round_index in range(12):
        truth = "yes" if round_index % 2 else "no"
        page.click(f"#q-shared_medicine-practice [data-practice-truth='{truth}']")
        page.wait_for_function(
            f"() => document.getElementById('q-shared_medicine-practice').dataset.practised"
            f" === '{round_index + 1}'")
        steps = box.locator(".rr-practice-steps li").all_inner_texts()
        assert steps and all(text.startswith("Coin ") for text in steps), steps
        result = box.locator(".rr-practice-result").inner_text()
        assert "nothing was sent" in result
        match = re.search(r"this would be sent: “(Yes|No)”", result)
        assert match, result
        reports.add(match.group(1))
    assert reports <= {"Yes", "No"}
    new = watch.requests[before:]
    assert [r for r in new if r.method != "GET" or "/api/" in r.url] == []
    assert page.evaluate("() => Object.keys(localStorage)") == []
    assert not page.locator("#q-shared_medicine input[data-truth]:checked").count()
    watch.assert_clean()


ORDER = """() => Array.from(document.querySelectorAll('#rr-form fieldset.rr-question'))
                   .map((f) => f.dataset.question)"""


def test_question_order_is_drawn_on_the_device_page_by_page(
        site: Site, context: BrowserContext, watch: Watch) -> None:
    sid = site.ids["shuffled.md"]
    page = open_survey(context, site, sid, ready=False)
    orders = set()
    for _ in range(8):
        order = page.evaluate(ORDER)
        # Each page keeps its own questions; only their order within the page changes.
        assert sorted(order[:3]) == ["q1", "q2", "q3"] and sorted(order[3:]) == ["q4", "q5", "q6"]
        orders.add(tuple(order))
        page.reload()
        page.wait_for_selector("#rr-consent-agree")
    assert len(orders) > 1  # 8 loads all alike: chance 36^-7 if the draw is uniform

    # Uniformity: where q1 lands after 36,000 draws. Each of the 3 places has chance 1/3: 12,000
    # expected, standard deviation sqrt(36000 * 1/3 * 2/3) = 89; a 1% error in a chance (360) is
    # over 4 standard deviations, and the bound below (5 sd = 447) lets a fair draw pass
    # except with chance below 1e-6.
    counts = page.evaluate("""async () => {
        const src = Array.from(document.scripts).find((s) => s.src.includes('/order.')).src;
        const { shuffle } = await import(src);
        const counts = [0, 0, 0];
        for (let i = 0; i < 36000; i += 1) {
            shuffle();
            const ids = Array.from(document.querySelectorAll(
                '#rr-form fieldset.rr-question[data-page="1"]')).map((f) => f.dataset.question);
            counts[ids.indexOf('q1')] += 1;
        }
        return counts;
    }""")
    assert sum(counts) == 36000
    assert all(abs(count - 12000) < 447 for count in counts), counts
    assert watch.posts() == []
    watch.assert_clean()
