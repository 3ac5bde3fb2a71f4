"""Accessible and usable: axe-core finds no serious or critical violation (form, errors, review,
thanks; English and Spanish; desktop and phone), a respondent completes a survey with the
keyboard alone, the page fits a phone-sized screen, and without JavaScript it explains itself.
"""

from __future__ import annotations

from typing import Any

import pytest
from browserkit import Site, Watch, axe_source, open_survey
from playwright.sync_api import Browser, BrowserContext, Page, Route
from respondent import ready_to_submit, shown_body

PHONE = {"width": 360, "height": 740}

RUN_AXE = """async () => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help,
                   nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5) }));
}"""

FOCUSED = """() => {
  const e = document.activeElement;
  const question = e && e.closest("[data-question]");
  // a number's input is a text input with a number keyboard (inputmode): reported as "number"
  const number = e && e.classList && e.classList.contains("rr-number");
  return { tag: e ? e.tagName.toLowerCase() : null, type: number ? "number" : (e && e.type) || null,
           id: (e && e.id) || null,
           question: question ? question.dataset.question : null,
           innocuous: Boolean(e && e.matches && e.matches("[data-innocuous]")),
           checked: Boolean(e && e.checked) };
}"""


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """Serious and critical axe-core violations of the page as it is now."""
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.evaluate(axe_source())  # evaluated, not a <script>: the page's CSP refuses those
    return page.evaluate(RUN_AXE)  # type: ignore[no-any-return]


def fits_width(page: Page) -> bool:
    return page.evaluate(  # type: ignore[no-any-return]
        "() => document.documentElement.scrollWidth <= window.innerWidth + 1")


def fake_targets(page: Page, manifest: dict) -> None:
    """Answer Netlify and endpoint submissions inside the browser."""
    cors = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "content-type"}

    def ok(route: Route) -> None:
        if route.request.method == "GET":
            route.continue_()
        elif route.request.method == "OPTIONS":
            route.fulfill(status=204, headers=cors)
        else:
            route.fulfill(status=200, headers=cors, body="{}")

    if manifest["submit"]["to"] == "netlify":
        page.route(f"**/{manifest['id']}/", ok)
    elif manifest["submit"]["to"] == "endpoint":
        page.route(manifest["submit"]["url"], ok)


#: A randomizer worker that never starts: the form and its errors need none, and each page's
#: start would be cut short by the next survey's anyway (axe on a started page's review and
#: status line: test_axe_review_and_thanks).
IDLE_WORKER = """window.Worker = class {
  addEventListener() {}
  postMessage() {}
  terminate() {}
};"""


def test_axe_on_every_form(site: Site, context: BrowserContext, watch: Watch) -> None:
    """Every survey's form, blank and with its validation errors shown (the randomizer still
    starting, as a respondent who answers at once sees it)."""
    page = context.new_page()
    page.add_init_script(IDLE_WORKER)
    for sid in site.ids.values():
        page.goto(site.page_url(sid))
        page.wait_for_selector("#rr-submit:not([disabled])", state="attached")
        assert axe_violations(page) == [], sid
        ready_to_submit(page)  # past the consent text, to the page with the button
        page.click("#rr-submit")  # nothing answered: the errors are shown
        page.wait_for_selector("#rr-errors:not([hidden])", timeout=60_000)
        assert page.evaluate("() => document.activeElement.id") == "rr-errors"
        assert axe_violations(page) == [], sid
    assert page.workers == []  # no randomizer was started
    watch.assert_clean()


@pytest.mark.parametrize("survey,viewport", [("cheating-partner", None),
                                             ("drug-use", PHONE)])  # phone: reduced motion
def test_axe_review_and_thanks(survey: str, viewport: dict | None, site: Site, browser: Browser,
                               context: BrowserContext, watch: Watch) -> None:
    """The review (coins, animation, body) and the thanks, on a desktop or a phone."""
    from respondent import fill, plan_answers

    if viewport:  # a phone of its own (the test's context stays as the fixture left it)
        context = browser.new_context(viewport=viewport, is_mobile=True, has_touch=True,
                                      reduced_motion="reduce")
        from browserkit import watch_context

        watch = watch_context(context)
    manifest = site.manifest(survey)
    page = context.new_page()
    fake_targets(page, manifest)
    page.goto(site.page_url(survey))
    page.wait_for_selector("html[data-rr-runtime=ready]", state="attached", timeout=90_000)
    assert fits_width(page)
    assert axe_violations(page) == []
    fill(page, manifest, plan_answers(manifest, 0))
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])", timeout=60_000)
    assert page.evaluate("() => document.activeElement.id") == "rr-review-title"
    assert page.locator("#rr-transcript .rr-steps li").count() >= 1
    # The coin/die animation plays, except for those who asked for reduced motion.
    animations = page.evaluate("""() => Array.from(document.querySelectorAll(
        "#rr-transcript .rr-device")).map((d) => getComputedStyle(d).animationName)""")
    assert animations
    if viewport:
        assert set(animations) == {"none"}
    else:
        assert "none" not in animations
    assert fits_width(page)
    assert axe_violations(page) == []
    page.click("#rr-confirm")
    page.wait_for_selector("#rr-done:not([hidden])")
    assert axe_violations(page) == []
    watch.assert_clean()
    if viewport:
        context.close()


def test_keyboard_only_completion(site: Site, context: BrowserContext, watch: Watch) -> None:
    """Tab, arrows, space, typing and Enter: every question answered, reviewed, sent."""
    survey = "cheating-partner"  # yes-no (Warner), unrelated with its innocuous question,
    manifest = site.manifest(survey)  # a number, a multi-choice and a text question
    page = context.new_page()
    fake_targets(page, manifest)
    page.goto(site.page_url(survey))
    page.wait_for_selector("html[data-rr-runtime=ready]", state="attached", timeout=90_000)
    types = {q["id"]: q["type"] for q in manifest["questions"]}
    numbers = {q["id"]: q for q in manifest["questions"] if q["type"] == "number"}
    answered: set[str] = set()
    presses = 0
    while presses < 80:
        page.keyboard.press("Tab")
        presses += 1
        focus = page.evaluate(FOCUSED)
        if focus["id"] == "rr-submit":
            break
        qid = focus["question"]
        if qid is None:
            continue
        key = f"{qid}-innocuous" if focus["innocuous"] else qid
        if key in answered:
            continue
        if focus["type"] == "radio":
            page.keyboard.press("ArrowDown")  # moves to (and selects) the next answer
            answered.add(key)
        elif focus["type"] == "checkbox":
            page.keyboard.press("Space")
            answered.add(key)
        elif focus["type"] == "number":
            low = numbers[qid].get("min") or 0
            page.keyboard.type(str(int(low) + 2))
            answered.add(key)
        elif focus["tag"] in ("input", "textarea"):
            page.keyboard.type("typed with the keyboard")
            answered.add(key)
    assert focus["id"] == "rr-submit", "the submit button is not reachable with Tab"
    assert {k for k in answered if not k.endswith("-innocuous")} == set(types)
    assert any(k.endswith("-innocuous") for k in answered)
    page.keyboard.press("Enter")
    page.wait_for_selector("#rr-review:not([hidden])", timeout=60_000)
    assert page.evaluate("() => document.activeElement.id") == "rr-review-title"
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.id") == "rr-confirm":
            break
    page.keyboard.press("Enter")
    page.wait_for_selector("#rr-done:not([hidden])")
    sent = [r for r in watch.requests if r.method == "POST"]
    assert len(sent) == 1
    watch.assert_clean()


def test_sensitive_radios_behave_as_one_group(site: Site, context: BrowserContext) -> None:
    """Unnamed radios get a radio group's behaviour: one choice, arrows move it, one tab stop."""
    page = open_survey(context, site, "honor-code", ready=False)
    radios = page.locator("#q-violated input[data-truth]")
    assert radios.count() == 2
    radios.nth(0).check()
    radios.nth(1).check()
    assert [radios.nth(i).is_checked() for i in range(2)] == [False, True]
    radios.nth(1).press("ArrowUp")
    assert [radios.nth(i).is_checked() for i in range(2)] == [True, False]
    tab_stops = page.evaluate("""() => Array.from(document.querySelectorAll(
        '#q-violated input[data-truth]')).map((r) => r.tabIndex)""")
    assert sorted(tab_stops) == [-1, 0]


def test_without_javascript_the_page_explains(site: Site, browser: Browser) -> None:
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(site.page_url("honor-code"))
        assert "needs JavaScript" in page.locator("noscript").first.inner_text() or \
            "needs JavaScript" in page.content()
        assert page.locator("#rr-submit").is_disabled()
        assert page.locator("p.rr-noscript").is_visible()
    finally:
        context.close()


def test_catalog_strings_only(site: Site, context: BrowserContext) -> None:
    """No placeholder or message key shows on the page (Spanish page, all states)."""
    from respondent import fill, plan_answers

    manifest = site.manifest("drug-use")
    assert manifest["language"] == "es"
    page = open_survey(context, site, "drug-use")
    fill(page, manifest, plan_answers(manifest, 1))
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])", timeout=60_000)
    text = page.locator("body").inner_text()
    assert "{" not in text.replace(shown_body(page), "")
    for english in ("Randomize", "Send my answers", "Review before sending", "heads", "tails"):
        assert english not in text
