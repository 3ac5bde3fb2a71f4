"""The review's words in every shipped language, and page parts that must not mislead (issue 20).

- The review never titles a randomized report "Your answers": what the respondent chose (their
  true answers, shown on their own device only) and what will be sent are apart, each labelled
  for what it is, in the catalog's words of the page's language.
- A survey whose only sensitive question is crosswise (nothing drawn on the device) speaks of
  statements, never of coins or of a device that randomized.
- The "How your answers are protected" disclosure shows that it opens (a marker that turns).
- On a paged survey the send button is shown on the last page only, and the form cannot be
  submitted before it.
- A survey's own right-to-left catalog renders right to left.

The expected words are read from templates/messages/<lang>.json, not from the page's code.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest
from browserkit import ROOT, Site, Watch, open_survey, wait_ready
from playwright.sync_api import BrowserContext, Page
from respondent import agree_to_consent, go_to_page

MESSAGES = ROOT / "templates" / "messages"
SHIPPED = sorted(path.stem for path in MESSAGES.glob("*.json"))
OLD_TITLES = {"Your answers", "Tus respuestas"}  # what the review used to call the reports

COINS = """\
---
id: coins-{lang}
title: Coins {lang}
language: {lang}
privacy:
  budget: 2
---
## Have you ever copied in an exam?

```question
id: copied
type: yes-no
randomize: forced-response
truth: 1/2
```

## How old are you?

```question
id: age
type: choice
options: [Under 30, 30 or older]
```
"""

CROSSWISE = """\
---
id: cross-{lang}
title: Crosswise {lang}
language: {lang}
privacy:
  budget: 2
---
## I have copied in an exam.

```question
id: copied
type: yes-no
randomize: crosswise
p: 1/4
innocuous: My mother was born in January, February or March.
```
"""

RTL = """\
---
id: rtl-ar
title: RTL
language: ar
messages: ar.json
privacy:
  budget: 2
---
## Have you ever copied in an exam?

```question
id: copied
type: yes-no
randomize: forced-response
truth: 1/2
```
"""


def catalog(lang: str) -> dict[str, str]:
    return json.loads((MESSAGES / f"{lang}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def language_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A coins survey and a crosswise survey per shipped language, and a right-to-left one."""
    root = tmp_path_factory.mktemp("languages")
    sources = root / "surveys"
    sources.mkdir()
    for lang in SHIPPED:
        (sources / f"coins-{lang}.md").write_text(COINS.format(lang=lang), encoding="utf-8")
        (sources / f"cross-{lang}.md").write_text(CROSSWISE.format(lang=lang), encoding="utf-8")
    # A test catalog for Arabic: en.json's keys, each text marked with an Arabic word.
    arabic = {key: f"نص {text}" for key, text in catalog("en").items()}
    (sources / "ar.json").write_text(json.dumps(arabic, ensure_ascii=False, indent=2),
                                     encoding="utf-8")
    (sources / "rtl-ar.md").write_text(RTL, encoding="utf-8")
    dist = root / "dist"
    subprocess.run([sys.executable, "-m", "rrsite", "build", str(sources), "-o", str(dist),
                    "--no-compress"], check=True, cwd=ROOT, timeout=600, capture_output=True)
    process = subprocess.Popen(
        [sys.executable, "-m", "rrsite", "serve", str(dist), "--port", "0", "--db",
         str(root / "collector.db")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    try:
        assert process.stdout is not None
        match = re.search(r"http://127\.0\.0\.1:\d+/", process.stdout.readline())
        assert match
        yield match.group(0)
    finally:
        process.terminate()
        process.wait(timeout=15)


def open_page(context: BrowserContext, url: str, ready: bool = True) -> Page:
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("#rr-submit:not([disabled])", state="attached", timeout=30_000)
    if ready:
        wait_ready(page)
    return page


def label(page: Page, question: str, value: str) -> str:
    return page.locator(f"#q-{question} input[value='{value}']").evaluate(
        "(input) => input.labels[0].textContent.trim()")


def review_headings(page: Page) -> list[str]:
    return [text.strip() for text in page.locator("#rr-review :is(h2, h3, h4)").all_inner_texts()]


def test_every_language_is_shipped() -> None:
    assert SHIPPED == ["de", "en", "es", "fr", "it", "pt"]


@pytest.mark.parametrize("lang", SHIPPED)
def test_review_shows_the_choice_and_what_is_sent_apart(
        language_site: str, context: BrowserContext, watch: Watch, lang: str) -> None:
    m = catalog(lang)
    page = open_page(context, f"{language_site}coins-{lang}/")
    assert page.locator("#rr-submit").inner_text() == m["submit"]
    page.check("#q-copied input[value='yes']")
    page.check("#q-age input[value='Under 30']")
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])", timeout=60_000)
    body = json.loads(page.locator("#rr-body").inner_text())
    report = body["answers"]["copied"]

    headings = review_headings(page)
    assert not OLD_TITLES & set(headings), headings
    assert page.locator("#rr-review-intro").inner_text() == m["review_intro"]
    # What the respondent chose: their true answer, labelled as shown on this device only.
    assert page.locator("#rr-chosen-box").is_visible()
    assert page.locator("#rr-chosen-title").inner_text() == m["chosen_title"]
    assert page.locator("#rr-chosen-note").inner_text() == m["chosen_note"]
    assert page.locator("#rr-chosen dd[data-chosen-for=copied]").inner_text() == \
        label(page, "copied", "yes")
    assert page.locator("#rr-chosen dd[data-chosen-for=age]").count() == 0  # sent as given
    # What the device drew, then what will be sent, each answer with what it is.
    assert page.locator("#rr-transcript-title").inner_text() == m["transcript_title"]
    assert page.locator("#rr-answers-title").inner_text() == m["sent_list_title"]
    assert page.locator("#rr-answers dd[data-answer-for=copied]").inner_text() == \
        label(page, "copied", report)
    assert page.locator("#rr-answers dd[data-kind-for=copied]").inner_text() == \
        m["sent_kind_randomized"]
    assert page.locator("#rr-answers dd[data-answer-for=age]").inner_text() == \
        label(page, "age", "Under 30")
    assert page.locator("#rr-answers dd[data-kind-for=age]").inner_text() == \
        m["sent_kind_direct"]
    # The chosen list is above the list of what is sent, both above the exact body.
    order = page.evaluate("""() => ['rr-chosen', 'rr-answers', 'rr-body'].map(
        (id) => document.getElementById(id).getBoundingClientRect().top)""")
    assert order == sorted(order)

    page.click("#rr-confirm")
    page.wait_for_selector("#rr-done:not([hidden])", timeout=30_000)
    # Once sent, the choice is gone from the page; nothing but the report was sent or stored.
    assert page.locator("#rr-chosen dd").count() == 0
    sent = watch.posts("/api/submissions")[-1]
    assert json.loads(sent.body or "{}")["answers"] == {"copied": report, "age": "Under 30"}
    stored = page.evaluate("() => JSON.stringify(Object.entries(localStorage))")
    assert "truth" not in stored and "chosen" not in stored
    watch.assert_clean()


@pytest.mark.parametrize("lang", SHIPPED)
def test_a_survey_without_coins_speaks_of_statements(
        language_site: str, context: BrowserContext, watch: Watch, lang: str) -> None:
    m = catalog(lang)
    page = open_page(context, f"{language_site}cross-{lang}/", ready=False)
    assert page.evaluate("() => document.documentElement.dataset.rrRuntime") is None
    assert page.locator(".rr-privacy p").text_content() == m["privacy_text_combined"]
    assert page.locator("#rr-submit").inner_text() == m["submit_direct"]
    assert page.locator("#rr-submit-note").inner_text() == m["submit_note_plain"]
    assert page.locator(".rr-footer").inner_text() == m["footer_privacy_combined"]
    page.check("#q-copied input[value='different']")
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])", timeout=30_000)

    assert page.locator("#rr-review-intro").inner_text() == m["review_intro_combined"]
    assert not OLD_TITLES & set(review_headings(page))
    assert page.locator("#rr-chosen-box").is_hidden()
    assert page.locator("#rr-transcript li").count() == 0
    assert page.locator("#rr-answers dd[data-answer-for=copied]").inner_text() == \
        label(page, "copied", "different")
    assert page.locator("#rr-answers dd[data-kind-for=copied]").inner_text() == \
        m["sent_kind_combined"]
    # No word of coins or of a device that randomized, anywhere on the page.
    text = page.locator("body").inner_text()
    for key in ("review_intro", "submit_note", "privacy_text", "footer_privacy",
                "transcript_title", "sent_kind_randomized", "sensitive_badge"):
        assert m[key] not in text, key
    if lang == "en":
        assert not re.search(r"\bcoins?\b|randomi[sz]ed|device drew", text, re.IGNORECASE), text
    watch.assert_clean()


def marker(page: Page) -> dict[str, str]:
    return page.locator(".rr-privacy summary").evaluate("""(summary) => {
        const style = getComputedStyle(summary, '::before');
        return {content: style.content, transform: style.transform, display: style.display,
                start: style.borderInlineStartWidth, left: style.borderLeftWidth,
                right: style.borderRightWidth};
    }""")


def disclosure_state(context: BrowserContext, page: Page, name: str) -> tuple[str, bool | None]:
    """The role and `expanded` state of the accessibility node named ``name``."""
    cdp = context.new_cdp_session(page)
    try:
        nodes = cdp.send("Accessibility.getFullAXTree")["nodes"]
    finally:
        cdp.detach()
    for node in nodes:
        if node.get("name", {}).get("value") == name and not node.get("ignored"):
            expanded = {p["name"]: p["value"]["value"] for p in node.get("properties", [])
                        }.get("expanded")
            return node["role"]["value"], expanded
    raise AssertionError(f"no accessibility node named {name!r}")


def test_the_privacy_disclosure_shows_that_it_opens(
        site: Site, context: BrowserContext, watch: Watch) -> None:
    page = open_survey(context, site, "honor-code", ready=False)
    details = page.locator(".rr-privacy")
    closed = marker(page)
    assert closed["content"] != "none" and closed["display"] != "none"
    assert float(closed["start"].removesuffix("px")) > 0  # a visible triangle
    assert not page.locator(".rr-privacy p").is_visible()
    # Keyboard: the summary is focusable and opens with Enter; the marker turns.
    page.locator(".rr-privacy summary").focus()
    page.keyboard.press("Enter")
    assert details.evaluate("(d) => d.open") is True
    assert page.locator(".rr-privacy p").is_visible()
    page.wait_for_timeout(300)  # the turn's transition
    opened = marker(page)
    assert opened["transform"] not in ("none", closed["transform"])
    # Screen readers hear a disclosure, expanded now (Chromium's accessibility tree).
    title = page.locator(".rr-privacy summary").inner_text()
    assert disclosure_state(context, page, title) == ("DisclosureTriangle", True)
    page.keyboard.press("Enter")
    assert disclosure_state(context, page, title) == ("DisclosureTriangle", False)
    watch.assert_clean()


def test_a_paged_survey_offers_sending_on_the_last_page_only(
        site: Site, context: BrowserContext, watch: Watch) -> None:
    page = open_survey(context, site, "clinic-visit")
    agree_to_consent(page)
    submit = page.locator("#rr-submit")
    assert page.locator("#rr-page-label").inner_text() == "Page 1 of 3"
    assert not submit.is_visible()
    # Submitting by other means (Enter in a field) does nothing before the last page.
    page.evaluate("() => document.getElementById('rr-form').requestSubmit()")
    page.wait_for_timeout(300)
    assert page.locator("#rr-errors").is_hidden()
    assert page.locator("#rr-review").is_hidden()
    go_to_page(page, 2)
    assert not submit.is_visible()
    go_to_page(page, 3)
    assert submit.is_visible()
    assert not page.locator("#rr-page-next").is_visible()
    page.click("#rr-page-back")
    assert not submit.is_visible()
    watch.assert_clean()


def test_a_right_to_left_catalog_renders_right_to_left(
        language_site: str, context: BrowserContext, watch: Watch) -> None:
    page = open_page(context, f"{language_site}rtl-ar/", ready=False)
    assert page.evaluate("() => [document.documentElement.lang, document.documentElement.dir]") \
        == ["ar", "rtl"]
    assert page.evaluate("() => getComputedStyle(document.body).direction") == "rtl"
    assert page.locator("#rr-submit").inner_text().startswith("نص ")
    # The submit button and the options sit at the right edge of the form.
    boxes = page.evaluate("""() => {
        const box = (el) => el.getBoundingClientRect();
        const form = box(document.getElementById('rr-form'));
        const button = box(document.getElementById('rr-submit'));
        const option = box(document.querySelector('#q-copied .rr-option label'));
        return {form: [form.left, form.right], button: [button.left, button.right],
                option: [option.left, option.right]};
    }""")
    form_left, form_right = boxes["form"]
    for name in ("button", "option"):
        left, right = boxes[name]
        assert form_right - right < left - form_left, (name, boxes)
    # The disclosure's triangle points to the text's end: to the left.
    closed = marker(page)
    assert float(closed["right"].removesuffix("px")) > 0
    assert float(closed["left"].removesuffix("px")) == 0
    watch.assert_clean()
