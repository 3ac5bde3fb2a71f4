"""The review's words in every shipped language, and page parts that must not mislead.

- The review reads at a glance: the largest yes-no survey of surveys/, answered on a 390 x 844
  phone in each shipped language, has a review at most 1.5 screens high. What will be sent comes
  first, a randomized answer with one sentence of what the device drew; what the respondent chose
  (their true answers, shown on their own device only) and the draws are apart and folded away;
  a randomized report is never titled "Your answers"; every word is the catalog's of the page's
  language.
- Counts take the plural form of the page's language ("at most 1 character", "5 characters").
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
from collections.abc import Iterator
from pathlib import Path

import pytest
from browserkit import (
    ROOT,
    Site,
    Watch,
    build_site,
    open_page,
    open_survey,
    serve,
    watch_context,
)
from playwright.sync_api import Browser, BrowserContext, Page
from respondent import agree_to_consent, go_to_page, open_review_details, shown_body

from tests.surveytext import question, survey_text

MESSAGES = ROOT / "templates" / "messages"
SHIPPED = sorted(path.stem for path in MESSAGES.glob("*.json"))
OLD_TITLES = {"Your answers", "Tus respuestas"}  # what the review used to call the reports



def crosswise_survey(lang: str) -> str:
    """A survey whose only sensitive question is crosswise, and two short text questions."""
    return survey_text(
        f"cross-{lang}",
        question("copied", "yes-no", randomize="crosswise", p="1/4",
                 innocuous="My mother was born in January, February or March."),
        question("one", "text", required="false", max_length=1),
        question("five", "text", required="false", max_length=5),
        title=f"Crosswise {lang}", language=lang, budget=2)


#: A survey with a catalog of its own (ar.json, written beside it by the fixture).
RTL = survey_text("rtl-ar", question("copied", "yes-no", randomize="forced-response",
                                     truth="1/2"), title="RTL", language="ar", budget=2
                  ).replace("language: ar\n", "language: ar\nmessages: ar.json\n", 1)


def catalog(lang: str) -> dict[str, str]:
    return json.loads((MESSAGES / f"{lang}.json").read_text(encoding="utf-8"))


def largest_yes_no_survey() -> Path:
    """The survey of surveys/ with the most yes-no questions (then the most questions)."""
    def size(path: Path) -> tuple[int, int]:
        text = path.read_text(encoding="utf-8")
        return text.count("type: yes-no"), text.count("```question")
    return max(sorted((ROOT / "surveys").glob("*.md")), key=size)


@pytest.fixture(scope="module")
def language_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A coins survey and a crosswise survey per shipped language, and a right-to-left one."""
    root = tmp_path_factory.mktemp("languages")
    sources = root / "surveys"
    sources.mkdir()
    glance = largest_yes_no_survey().read_text(encoding="utf-8")
    glance_id = re.search(r"^id: (\S+)", glance, re.MULTILINE).group(1)  # type: ignore[union-attr]
    for lang in SHIPPED:
        (sources / f"cross-{lang}.md").write_text(crosswise_survey(lang), encoding="utf-8")
        # the largest yes-no survey of surveys/, its review in each language
        text = re.sub(r"^language: \S+", f"language: {lang}", glance, count=1, flags=re.MULTILINE)
        text = re.sub(r"^id: \S+", f"id: glance-{lang}", text, count=1, flags=re.MULTILINE)
        assert f"id: glance-{lang}" in text and glance_id
        (sources / f"glance-{lang}.md").write_text(text, encoding="utf-8")
    # A test catalog for Arabic: en.json's keys, each text marked with an Arabic word.
    arabic = {key: f"نص {text}" for key, text in catalog("en").items()}
    (sources / "ar.json").write_text(json.dumps(arabic, ensure_ascii=False, indent=2),
                                     encoding="utf-8")
    (sources / "rtl-ar.md").write_text(RTL, encoding="utf-8")
    build_site(sources, root / "dist", "--no-compress")
    with serve(root / "dist", root / "collector.db") as url:
        yield url


def label(page: Page, question: str, value: str) -> str:
    return page.locator(f"#q-{question} input[value='{value}']").evaluate(
        "(input) => input.labels[0].textContent.trim()")


def review_headings(page: Page) -> list[str]:
    return [text.strip() for text in page.locator("#rr-review :is(h2, h3, h4)").all_inner_texts()]


def test_every_language_is_shipped() -> None:
    assert SHIPPED == ["de", "en", "es", "fr", "it", "pt"]


def fill_message(template: str, **values: str) -> str:
    """A catalog message with its {name} placeholders filled (no plural forms in these)."""
    return re.sub(r"\{(\w+)\}", lambda match: values[match.group(1)], template)


@pytest.mark.parametrize("lang", SHIPPED)
def test_a_survey_without_coins_speaks_of_statements(
        language_site: str, context: BrowserContext, watch: Watch, lang: str) -> None:
    m = catalog(lang)
    page = open_page(context, f"{language_site}cross-{lang}/", ready=False)
    assert page.evaluate("() => document.documentElement.dataset.rrRuntime") is None
    assert page.locator(".rr-privacy p").text_content() == m["privacy_text_combined"]
    assert page.locator("#rr-submit").inner_text() == m["submit_direct"]
    assert page.locator("#rr-submit-note").inner_text() == m["submit_note_plain"]
    assert page.locator(".rr-footer p").first.inner_text() == m["footer_privacy_combined"]
    # Counts take their language's plural form: "at most 1 character", "at most 5 characters"
    page.evaluate("""() => {
      document.getElementById('q-one-input').value = 'ab';
      document.getElementById('q-five-input').value = 'abcdefg';
    }""")
    page.click("#rr-submit")
    page.wait_for_selector("#q-one-error:not([hidden])")
    for qid, max_length, length in (("one", 1, 2), ("five", 5, 7)):
        expected = plural_branch(m["error_length"], max_length, lang).replace(
            "{length}", str(length))
        assert page.locator(f"#q-{qid}-error").inner_text() == expected, (lang, qid)
    page.fill("#q-one-input", "")
    page.fill("#q-five-input", "")
    page.check("#q-copied input[value='different']")
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])", timeout=30_000)
    open_review_details(page)

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
                "transcript_title", "draws_title", "sent_kind_randomized", "sensitive_badge"):
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


#: The phone the review must fit: 390 x 844 CSS pixels, and at most 1.5 of its screens.
PHONE = {"width": 390, "height": 844}
SCREENS = 1.5
#: English words that must not be left in another language's review.
ENGLISH = ("Your device", "is sent", "whatever", "What will be sent", "drew")


def plural_branch(text: str, number: int, lang: str) -> str:
    """ICU plural forms, resolved here from CLDR's rules for these languages and integers."""
    one = number in (0, 1) if lang in ("fr", "pt") else number == 1

    def resolve(match: re.Match[str]) -> str:
        forms = dict(re.findall(r"(=\d+|\w+)\s*\{([^{}]*)\}", match.group(2)))
        chosen = forms.get(f"={number}") or (forms.get("one") if one else None) or forms["other"]
        return chosen.replace("#", str(number))

    return re.sub(r"\{(\w+)\s*,\s*plural\s*,((?:[^{}]|\{[^{}]*\})*)\}",
                  lambda match: resolve(match) if match.group(1) == "max" else match.group(0), text)


@pytest.mark.parametrize("lang", SHIPPED)
def test_the_largest_yes_no_review_fits_a_phone_and_reads_in_its_language(
        language_site: str, browser: Browser, lang: str) -> None:
    """surveys/' largest yes-no survey, answered at 390 x 844: its review (the disclosures
    closed, as it opens) is at most 1.5 screens high, and every word of it is the catalog's.
    What will be sent comes first; what the respondent chose (their true answers) and the draws
    are apart, folded away, and gone once the answers are saved."""
    m = catalog(lang)
    phone = browser.new_context(viewport=PHONE)
    try:
        watch = watch_context(phone)
        page = open_page(phone, f"{language_site}glance-{lang}/")
        manifest_url = f"{language_site}glance-{lang}/survey.json"
        manifest = page.evaluate("async (url) => (await fetch(url)).json()", manifest_url)
        for q in manifest["questions"]:
            if q["type"] == "number":
                page.fill(f"#q-{q['id']}-input", "7")
            else:
                value = "yes" if q["type"] == "yes-no" else q["values"][1]
                page.check(f"#q-{q['id']} input[value={json.dumps(value)}]")
        page.click("#rr-submit")
        page.wait_for_selector("#rr-review:not([hidden])", timeout=60_000)
        height = page.evaluate("() => document.getElementById('rr-review')"
                               ".getBoundingClientRect().height")
        print(f"review height {lang}: {height:.0f} px = {height / PHONE['height']:.2f} screens")
        assert height <= SCREENS * PHONE["height"], (lang, height)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]

        body = json.loads(shown_body(page))
        review = page.locator("#rr-review")
        assert page.locator("#rr-review-title").inner_text() == m["review_title"]
        assert page.locator("#rr-review-intro").inner_text() == m["review_intro"]
        assert page.locator("#rr-answers-title").inner_text() == m["sent_list_title"]
        assert page.locator("#rr-draws-title").inner_text() == m["draws_title"]
        assert page.locator("#rr-body-box > summary").inner_text() == m["will_send_title"]
        assert page.locator("#rr-confirm").inner_text() == m["confirm_download"]
        assert page.locator("#rr-edit").inner_text() == m["edit_direct"]
        for q in manifest["questions"]:
            answer = page.locator(f"#rr-answers dd[data-answer-for={q['id']}]").inner_text()
            if not q["sensitive"]:
                assert answer == str(body["answers"][q["id"]])
                kind = page.locator(f"#rr-answers dd[data-kind-for={q['id']}]").inner_text()
                assert kind == m["sent_kind_direct"]
                continue
            sent = label(page, q["id"], body["answers"][q["id"]])
            assert answer == sent
            glance = page.locator(f"#rr-answers dd[data-glance-for={q['id']}]").inner_text()
            candidates = {fill_message(m[key], label=sent) for key in (
                "glance_truth", "glance_forced", "glance_pick", "glance_other")}
            assert glance in candidates, (lang, q["id"], glance)
        text = review.inner_text()
        assert "{" not in text and "glance_" not in text and "review_" not in text
        if lang != "en":
            assert not any(word in text for word in ENGLISH), (lang, text)
        assert not OLD_TITLES & set(review_headings(page))

        # The choice and the draws, and the exact data, are folded away until opened.
        assert not page.locator("#rr-chosen-box").is_visible()
        assert not page.locator("#rr-body").is_visible()
        open_review_details(page)
        assert page.locator("#rr-chosen-title").inner_text() == m["chosen_title"]
        assert page.locator("#rr-chosen-note").inner_text() == m["chosen_note"]
        assert page.locator("#rr-transcript-title").inner_text() == m["transcript_title"]
        for q in manifest["questions"]:  # the true answers, of the randomized questions only
            chosen = page.locator(f"#rr-chosen dd[data-chosen-for={q['id']}]")
            if q["sensitive"]:
                truth = "yes" if q["type"] == "yes-no" else q["values"][1]
                assert chosen.inner_text() == label(page, q["id"], truth)
            else:
                assert chosen.count() == 0
        order = page.evaluate("""() => ['rr-answers', 'rr-chosen', 'rr-transcript', 'rr-body']
          .map((id) => document.getElementById(id).getBoundingClientRect().top)""")
        assert order == sorted(order)  # what is sent first, the choice and the draws, the data

        # Saved: the choice is gone from the page, nothing but the reports was stored.
        with page.expect_download():
            page.click("#rr-confirm")
        page.wait_for_selector("#rr-done:not([hidden])")
        assert page.locator("#rr-chosen dd").count() == 0
        assert page.locator("#rr-answers dd").count() == 0
        stored = json.loads(page.evaluate(
            "(key) => localStorage.getItem(key)",
            f"rrsite:{manifest['id']}:{manifest['version']}"))
        assert stored["body"] == body and "truth" not in json.dumps(stored)
        watch.assert_clean()
    finally:
        phone.close()
