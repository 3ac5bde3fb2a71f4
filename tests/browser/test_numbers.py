"""Randomized number questions on the page, answered as a respondent would.

- The input: a phone's number keyboard (inputmode), range and unit beside it, refusals of a
  number outside [min, max] or no number, in the page's language.
- Numbers typed the local way ("1.200,50" in German, "1 200,5" in French) are understood, and one
  that could be read two ways ("1.200" on a French page) is refused with both readings, never
  guessed (a type=number input read a German "1200,5" as 12005 in Chromium).
- Every design in each of the six shipped languages: the transcript's arithmetic holds exactly in
  decimals for the figures shown, those figures are the ones the worker used and the POST sent,
  written the page language's way, with no untranslated key and no English left.
- How well each design hides the answer, said under the question (epsilon as a ratio, or "no
  epsilon" and why).
- The true numbers appear in no request, no storage of the page and no console message.

(The request/storage audit of every survey, number designs included, over many rounds is
test_answer_surveys.py; in Firefox and WebKit it is tests/engines.)
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pytest
from browserkit import HERE, ROOT, STORAGE_DUMP, Site, Watch, open_survey, serve_surveys
from playwright.sync_api import BrowserContext, Page
from respondent import (
    confirm,
    log_worker_results,
    submit,
    wait_review,
    worker_results,
    written_in,
)

LANGUAGES = ("en", "es", "fr", "de", "pt", "it")
PLACEHOLDER = re.compile(r"\{(\w+)\}")
#: How each language writes 1234.5 (Intl, CLDR): thousands separator, decimal separator.
SEPARATORS = {"en": (",", "."), "es": (".", ","), "fr": ("\u202f", ","), "de": (".", ","),
              "pt": (".", ","), "it": (".", ",")}
#: Words of the English catalog that must not appear in another language's transcript.
ENGLISH = ("Your answer", "is sent", "drawn", "instead of", "rounded", "Random number")
#: The placeholders of each operation's line, in the catalog's key.
LINE_KEY = {"truth": "number_sent_truth", "mask": "number_sent_mask", "add": "number_sent_add",
            "multiply": "number_sent_multiply", "noise": "number_sent_noise",
            "duchi": "number_sent_duchi", "piecewise": "number_sent_piecewise",
            "innocuous": "number_sent_innocuous"}


def catalog(lang: str) -> dict[str, str]:
    return json.loads((ROOT / "templates" / "messages" / f"{lang}.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def languages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """tests/browser/surveys/number-designs.md (every design) in each shipped language."""
    source = (HERE / "surveys" / "number-designs.md").read_text(encoding="utf-8")
    folder = tmp_path_factory.mktemp("number-languages")
    files = []
    for lang in LANGUAGES:
        text = source.replace("id: number-designs", f"id: numbers-{lang}")
        text = text.replace("language: es", f"language: {lang}")
        file = folder / f"numbers-{lang}.md"
        file.write_text(text, encoding="utf-8")
        files.append(file)
    with serve_surveys(files, tmp_path_factory.mktemp("number-site")) as served:
        yield served


def local(value: float, lang: str, places: int = 2) -> str:
    """``value`` typed the way the language writes it, with a thousands separator."""
    group, point = SEPARATORS[lang]
    whole, _, fraction = f"{value:,.{places}f}".partition(".")
    return whole.replace(",", " " if lang == "fr" else group) + (point + fraction if fraction
                                                                  else "")


def numbers_in(text: str, lang: str) -> list[Fraction]:
    """Every number of a line written the language's way, as exact decimals."""
    group, point = SEPARATORS[lang]
    pattern = (rf"-?\d{{1,3}}(?:{re.escape(group)}\d{{3}})+(?:{re.escape(point)}\d+)?"
               rf"|-?\d+(?:{re.escape(point)}\d+)?")
    return [Fraction(n.replace(group, "").replace(point, "."))
            for n in re.findall(pattern, text)]


def exact(value: Any) -> Fraction:
    """The decimal a JSON number says (what the body carries)."""
    return Fraction(repr(float(value)))


def shown_report(value: Any, design: dict[str, Any]) -> Fraction:
    """A report as the review shows it: on duchi's and piecewise's reports (not short decimals)
    rounded to a thousandth of the range, down to a power of ten; the others as sent."""
    if design["name"] not in ("duchi", "piecewise"):
        return exact(value)
    if design.get("integer"):
        return Fraction(round(exact(value)))
    step = Fraction(10) ** math.floor(math.log10((design["max"] - design["min"]) / 1000))
    return round(exact(value) / step) * step


def answer_everything(page: Page, manifest: dict[str, Any], lang: str) -> dict[str, str]:
    """Type a true number into every question, the language's way; return what was typed."""
    typed = {}
    for q in manifest["questions"]:
        low, high = q["min"], q["max"]
        value = low + (high - low) * 0.4237
        text = str(round(value)) if q["integer"] else local(value, lang)
        page.locator(f"#q-{q['id']}-input").press_sequentially(text)
        typed[q["id"]] = text
        if q.get("innocuous"):
            page.locator(f"#q-{q['id']}-innocuous-input").press_sequentially(local(7.5, lang, 1))
    return typed


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_design_in_every_language(lang: str, languages: Site, context: BrowserContext,
                                        watch: Watch) -> None:
    sid = f"numbers-{lang}"
    manifest = languages.manifest(sid)
    messages = catalog(lang)
    console: list[str] = []
    page = context.new_page()
    page.on("console", lambda message: console.append(message.text))
    page.goto(languages.page_url(sid))
    page.wait_for_selector("html[data-rr-runtime=ready]", state="attached", timeout=90_000)
    log_worker_results(page)
    typed = answer_everything(page, manifest, lang)
    submit(page)
    shown_body = json.loads(wait_review(page))
    results = {r["id"]: r for r in worker_results(page)[0]["results"]}
    assert set(results) == {q["id"] for q in manifest["questions"]}

    for q in manifest["questions"]:
        qid, result = q["id"], results[q["id"]]
        section = page.locator(f"#rr-transcript section[data-question={qid}]")
        text = section.inner_text()
        assert "{" not in text and "number_" not in text and "NaN" not in text, text
        if lang != "en":
            assert not any(word in text for word in ENGLISH), (lang, text)
            # a spinner's number and its rule in the language's way too (0,3036, not 0.3036)
            assert not re.search(r"\d\.\d{4}", text), (lang, text)
        # What the respondent typed, read back: the review shows it in the language's way.
        truth = numbers_in(page.locator(f"#rr-chosen dd[data-chosen-for={qid}]").inner_text(),
                           lang)
        assert truth == [Fraction(typed[qid].replace(" ", "").replace(SEPARATORS[lang][0], "")
                                  .replace(SEPARATORS[lang][1], "."))], typed[qid]
        sent = exact(result.get("rounded", truth[0]))
        # The arithmetic line: its figures in the catalog's order, each exactly as used and sent.
        line = section.locator("li.rr-arithmetic").inner_text()
        operation = result["operation"]
        key = LINE_KEY[operation]
        if operation == "multiply" and "product" in result:
            key = "number_sent_multiply_rounded"
        values = {"answer": sent, "drawn": exact(result["drawn"]) if result["drawn"] is not None
                  else None, "report": shown_report(result["report"], q["design"]),
                  "product": exact(result["product"]) if "product" in result else None,
                  "innocuous": Fraction(15, 2)}
        expected = [values[name] for name in PLACEHOLDER.findall(messages[key])]
        assert numbers_in(line, lang) == expected, (lang, qid, line, result)
        if operation in ("add", "noise"):
            assert values["answer"] + values["drawn"] == values["report"], line
        if operation == "multiply":
            product = values["answer"] * values["drawn"]
            assert product == (values["product"] or values["report"]), line
        # An answer rounded to the design's grid says so, before the arithmetic.
        rounding = section.locator("li.rr-rounding").all_inner_texts()
        assert len(rounding) == ("rounded" in result), (text, result)
        if rounding:  # "your answer 1,234.56 is first rounded at random to 1,235 (...)"
            assert numbers_in(rounding[0], lang) == [truth[0], sent], rounding[0]
        # The report line and the list of what is sent: the figure of the body, exactly (duchi's
        # and piecewise's to a thousandth of the range, marked "≈"; never 17 digits).
        figure = shown_report(shown_body["answers"][qid], q["design"])
        rounded_off = figure != exact(shown_body["answers"][qid])
        report_line = section.locator(".rr-report").inner_text()
        assert numbers_in(report_line, lang) == [figure], section.inner_text()
        listed_text = page.locator(f"#rr-answers dd[data-answer-for={qid}]").inner_text()
        assert numbers_in(listed_text, lang) == [figure]
        assert ("≈" in listed_text) == rounded_off and ("≈" in report_line) == rounded_off
        assert not re.search(r"\d{9,}", listed_text + report_line + line), (listed_text, line)
        assert shown_body["answers"][qid] == result["report"]
        # Under it, one sentence of what the device did, ending on the same figure.
        glance = page.locator(f"#rr-answers dd[data-glance-for={qid}]").inner_text()
        assert numbers_in(glance, lang)[-1:] == [figure], glance
        assert "{" not in glance and "glance_" not in glance, glance

    confirm(page)
    [post] = watch.posts("/api/submissions")
    assert json.loads(post.body or "") == shown_body
    # No true number in any request, storage or console message.
    audit_truths(page, watch, console, manifest, typed, shown_body)
    watch.assert_clean()


def truth_forms(typed: str, lang: str) -> set[str]:
    """The ways a true number could be written if it leaked: as typed, as JavaScript and
    Python write it, and in the page's language."""
    group, point = SEPARATORS[lang]
    value = float(typed.replace(" ", "").replace(group, "").replace(point, "."))
    forms = {typed, repr(value), f"{value:g}", str(value), json.dumps(value)}
    if value.is_integer():
        forms.add(str(int(value)))
    return {form for form in forms if len(form) >= 4}


STORAGE = STORAGE_DUMP


def test_a_true_number_is_looked_for_whole() -> None:
    """A stored timestamp's "12:31:11.021Z" holds no true answer 11 (written "11.0" by
    Python): the audit looks for numbers as whole numbers, other answers anywhere."""
    kept = '{"at": "2026-11-28T12:31:11.021Z", "days": 7}'
    assert not any(written_in(form, kept) for form in ("11.0", "11", "2026", "12", "31.021"))
    assert written_in("7", kept)
    assert written_in("11.0", '{"days":11.0}') and written_in("11", "[11]")
    assert not written_in("11", "111") and not written_in("11", "0.11")
    assert written_in("-5.5", "x=-5.5,") and not written_in("18500.3", "18500.37")
    assert not written_in("2500", "/_rr/core.3f2500ab.zip") and written_in("2500", "x=2500&")
    assert written_in("yes", "ayesb")


def audit_truths(page: Page, watch: Watch, console: list[str], manifest: dict[str, Any],
                 typed: dict[str, str], body: dict[str, Any]) -> None:
    """The true numbers are nowhere but on the screen: not in a request's URL, headers or body,
    not in localStorage, sessionStorage, cookies, IndexedDB or caches, not in the console."""
    lang = page.evaluate("() => document.documentElement.lang")
    sent = "\n".join(r.text() for r in watch.requests)
    stored = page.evaluate(STORAGE)
    said = "\n".join(console)
    legit = json.dumps(body)
    for qid, text in typed.items():
        for form in truth_forms(text, lang):
            if written_in(form, legit):
                continue  # a report that happens to be the truth (sent as it is by the coins)
            assert not written_in(form, sent), f"true answer of {qid} ({form}) in a request"
            assert not written_in(form, stored), f"true answer of {qid} ({form}) stored"
            assert not written_in(form, said), f"true answer of {qid} ({form}) in the console"


def answer_with_income(page: Page, manifest: dict[str, Any], typed: str) -> str:
    """Answer 3 everywhere and ``typed`` as the income; the income the review says was chosen."""
    for q in manifest["questions"]:
        page.locator(f"#q-{q['id']}-input").fill("3")
    page.locator("#q-hours_unknown-innocuous-input").fill("3")
    income = page.locator("#q-income_additive-input")
    income.fill("")
    income.press_sequentially(typed)
    submit(page)
    wait_review(page)
    return page.locator("#rr-chosen dd[data-chosen-for=income_additive]").inner_text()


def test_numbers_typed_the_local_way(languages: Site, context: BrowserContext,
                                     watch: Watch) -> None:
    """German "1.200,50" and French "1 200,5" are understood; French "1.200" is refused with
    both readings; words and letters are refused, and nothing is sent meanwhile."""
    for lang, typed, shown in (("de", "1.200,50", "1.200,5 EUR"), ("en", "1,200.5", "1,200.5 EUR"),
                               ("es", "1200,5", "1.200,5 EUR"), ("pt", "1.200,5", "1.200,5 EUR"),
                               ("it", "1200.5", "1.200,5 EUR")):
        page = open_survey(context, languages, f"numbers-{lang}")
        assert answer_with_income(page, languages.manifest(f"numbers-{lang}"), typed) == shown, \
            lang
        page.close()

    page = open_survey(context, languages, "numbers-fr")
    before = len(watch.requests)
    messages = catalog("fr")
    income = page.locator("#q-income_additive-input")
    for typed, message in (
            ("1.200", messages["number_error_ambiguous"].format(
                typed="1.200", first="1\u202f200", second="1,2")),
            ("deux", messages["error_number"]), ("12e3", messages["error_number"]),
            ("1,2,3", messages["error_number"]),
            ("60 000", messages["number_error_range"].format(min="0", max="50\u202f000 EUR"))):
        income.fill("")
        income.press_sequentially(typed)
        submit(page)
        error = page.locator("#q-income_additive-error")
        error.wait_for(state="visible")
        assert error.inner_text() == message, typed
        assert page.locator("#rr-review").is_hidden()
    assert all(r.method in ("GET", "HEAD") for r in watch.requests[before:])
    assert answer_with_income(page, languages.manifest("numbers-fr"), "1 200,5") \
        == "1\u202f200,5 EUR"
    watch.assert_clean()


def test_input_keyboard_range_unit_and_refusals(site: Site, context: BrowserContext,
                                                watch: Watch) -> None:
    page = open_survey(context, site, "hidden-numbers")
    page.set_viewport_size({"width": 375, "height": 812})
    days = page.locator("#q-days-input")
    assert days.get_attribute("name") is None and days.get_attribute("data-truth") == ""
    # a text input with a phone's number keyboard: digits for whole numbers, else decimals
    assert days.get_attribute("type") == "text"
    assert days.get_attribute("inputmode") == "numeric"
    assert page.locator("#q-undeclared-input").get_attribute("inputmode") == "decimal"
    assert page.locator("#q-days-unit").inner_text() == "days"
    # the unit beside the input, not wrapped under it on a phone
    field, unit = days.bounding_box(), page.locator("#q-days-unit").bounding_box()
    assert field and unit
    assert unit["x"] >= field["x"] + field["width"] and unit["y"] < field["y"] + field["height"]
    assert page.locator("#q-days-range").inner_text() == "Between 0 and 30 days."
    assert page.locator("#q-undeclared-range").inner_text() == "Between 0 and 100,000 EUR."
    # the author's help text stands in for the generated explanation (as for yes-no questions)
    assert "coin" in page.locator("#q-days-help").inner_text()
    page.locator("#q-region-0").check()
    page.locator("#q-undeclared-input").fill("1200")
    for typed, message in (("31", "Please enter a number from 0 to 30 days."),
                           ("-1", "Please enter a number from 0 to 30 days."),
                           ("2.5", "Please enter a whole number."),
                           ("ten", "Please enter a number.")):
        days.fill(typed)
        submit(page)
        error = page.locator("#q-days-error")
        error.wait_for(state="visible")
        assert error.inner_text() == message
        assert page.locator("#rr-review").is_hidden()
    assert all(r.method in ("GET", "HEAD") for r in watch.requests)
    watch.assert_clean()


def ratio(epsilon: float) -> str:
    """e^epsilon as the page writes it in English (at most one decimal)."""
    return f"{math.exp(epsilon):,.1f}".removesuffix(".0")


def test_each_question_says_how_well_it_hides_the_answer(languages: Site,
                                                         context: BrowserContext,
                                                         watch: Watch) -> None:
    manifest = languages.manifest("numbers-en")
    page = open_survey(context, languages, "numbers-en")
    none = "How well this hides your answer: there is no guarantee in numbers (no epsilon)."
    expected = {
        "hours_unknown": f"{none} With chance 80% your exact number is sent, and nothing limits "
                         "what that reveals.",
        "income_additive": f"{none} The number sent is your answer plus a random number, so it "
                           "hides your exact answer but still shows roughly how large it is.",
        "bribes_product": f"{none} The number sent is your answer times a random factor, so it "
                          "hides your exact answer but still shows roughly how large it is. An "
                          "answer of 0 is always sent as 0.",
    }
    for q in manifest["questions"]:
        if q["epsilon"] is not None:
            expected[q["id"]] = (
                "How well this hides your answer: whatever you answer, each possible report is "
                f"at most {ratio(q['epsilon'])} times as likely as with any other answer "
                f"(epsilon = {round(q['epsilon'], 2):g}).")
    assert set(expected) == {q["id"] for q in manifest["questions"]}
    for qid, text in expected.items():
        assert page.locator(f"#q-{qid}-privacy").inner_text() == text
        assert f"q-{qid}-privacy" in (page.locator(f"#q-{qid}").get_attribute(
            "aria-describedby") or "")
    # days: a uniform mask over 0..30 with p = 1/4: at most 1 + 31 (1/4) / (3/4) = 11.3 times
    assert "at most 11.3 times" in page.locator("#q-days_mixture-privacy").inner_text()
    # what is sent, in each design's own words: no "coins", and duchi never sends the number
    words = catalog("en")
    for q in manifest["questions"]:
        line = page.locator(f"#q-{q['id']}-explain").inner_text()
        key = {"duchi": "number_private_duchi", "additive": "number_private_changed",
               "laplace": "number_private_changed", "piecewise": "number_private_changed",
               }.get(q["design"]["name"], "number_private")
        if q["design"]["name"] == "multiplicative" and not q["design"].get("p"):
            key = "number_private_changed"
        assert line.endswith(words[key]), (q["id"], line)
        assert "coin" not in line and (key != "number_private_duchi" or "not always" not in line)
    # the survey's privacy text says that numbers are protected differently
    page.locator(".rr-privacy summary").click()
    assert "not always how large it is" in page.locator(".rr-privacy").inner_text()
    assert "Nobody" not in page.locator(".rr-privacy").inner_text()
    watch.assert_clean()


def test_hidden_numbers_does_not_overstate_its_protection(site: Site, context: BrowserContext,
                                                          watch: Watch) -> None:
    """The example survey's own words about its additive question are honest."""
    page = open_survey(context, site, "hidden-numbers")
    help_text = page.locator("#q-undeclared-help").inner_text()
    assert "Nobody can tell" not in help_text
    assert "roughly" in help_text
    assert "no guarantee in numbers" in page.locator("#q-undeclared-privacy").inner_text()
    watch.assert_clean()
