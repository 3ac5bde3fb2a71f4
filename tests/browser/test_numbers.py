"""Randomized number questions on the page (issue 21): the input, its range and unit, refusals,
and the review's arithmetic in English and Spanish, checked against what the worker returned.
(The request/storage audit of every number design is test_answer_surveys.py.)"""

from __future__ import annotations

import json
import re

from browserkit import Site, Watch, open_survey
from playwright.sync_api import BrowserContext
from respondent import (
    fill,
    log_worker_results,
    plan_answers,
    submit,
    wait_review,
    worker_results,
)


def test_number_input_range_unit_and_refusals(site: Site, context: BrowserContext,
                                              watch: Watch) -> None:
    page = open_survey(context, site, "hidden-numbers")
    days = page.locator("#q-days-input")
    assert days.get_attribute("name") is None and days.get_attribute("data-truth") == ""
    assert days.get_attribute("inputmode") == "numeric"
    assert page.locator("#q-undeclared-input").get_attribute("inputmode") == "decimal"
    assert page.locator("#q-days-unit").inner_text() == "days"
    assert page.locator("#q-days-range").inner_text() == "Between 0 and 30 days."
    # the author's help text stands in for the generated explanation (as for yes-no questions)
    assert "coin" in page.locator("#q-days-help").inner_text()
    page.locator("#q-region-0").check()
    page.locator("#q-undeclared-input").fill("1200")
    for typed, message in (("31", "Please enter a number from 0 to 30 days."),
                           ("-1", "Please enter a number from 0 to 30 days."),
                           ("2.5", "Please enter a whole number.")):
        days.fill(typed)
        submit(page)
        error = page.locator("#q-days-error")
        error.wait_for(state="visible")
        assert error.inner_text() == message
        assert page.locator("#rr-review").is_hidden()
    assert all(r.method in ("GET", "HEAD") for r in watch.requests)
    watch.assert_clean()


def _number(text: str) -> float:
    return float(text.replace(",", "").replace("\u00a0", "").replace(" ", ""))


def test_review_shows_the_draw_and_the_arithmetic(site: Site, context: BrowserContext,
                                                  watch: Watch) -> None:
    manifest = site.manifest("hidden-numbers")
    page = open_survey(context, site, "hidden-numbers")
    log_worker_results(page)
    plan = plan_answers(manifest, 0)
    fill(page, manifest, plan)
    submit(page)
    body = json.loads(wait_review(page))
    results = {r["id"]: r for r in worker_results(page)[0]["results"]}
    line = page.locator("#rr-transcript section[data-question=undeclared] li.rr-arithmetic")
    match = re.fullmatch(r"Your answer (.+) EUR \+ drawn (.+) = (.+) EUR is sent\.",
                     line.inner_text())
    assert match, line.inner_text()
    answer, drawn, report = (_number(match.group(i)) for i in (1, 2, 3))
    assert answer == float(plan.truths["undeclared"])
    assert abs(drawn - results["undeclared"]["drawn"]) < 1e-3
    assert abs(report - body["answers"]["undeclared"]) < 1e-3
    days = page.locator("#rr-transcript section[data-question=days] li.rr-arithmetic").inner_text()
    if results["days"]["operation"] == "truth":
        assert days == f"Your answer {plan.truths['days']} days is sent as it is."
    else:
        assert days == (f"The drawn number {int(results['days']['drawn'])} is sent instead of "
                        f"your answer {plan.truths['days']} days.")
    assert page.locator("#rr-transcript section[data-question=days] .rr-report").inner_text() \
        == f"Will be sent for this question: {int(body['answers']['days'])} days."
    # the true numbers are cleared from the page once randomized
    assert page.locator("#q-undeclared-input").input_value() == ""
    assert page.locator("#q-days-input").input_value() == ""
    watch.assert_clean()


def test_spanish_review_of_every_design(site: Site, context: BrowserContext,
                                        watch: Watch) -> None:
    manifest = site.manifest("number-designs")
    page = open_survey(context, site, "number-designs")
    log_worker_results(page)
    plan = plan_answers(manifest, 1)
    fill(page, manifest, plan)
    submit(page)
    wait_review(page)
    results = {r["id"]: r for r in worker_results(page)[0]["results"]}
    assert set(results) == {q["id"] for q in manifest["questions"]}
    words = {"truth": "tal cual", "mask": "en lugar de", "add": "+ sorteado",
             "multiply": "× sorteado", "noise": "+ ruido", "duchi": "en lugar de",
             "piecewise": "en lugar de", "innocuous": "otra pregunta"}
    for qid, result in results.items():
        text = page.locator(f"#rr-transcript section[data-question={qid}] li.rr-arithmetic"
                            ).inner_text()
        assert words[result["operation"]] in text, (qid, text)
        assert "Se envía" in text
    assert "Su dispositivo" in page.locator("#q-hours_unknown-explain").inner_text()
    explain = page.locator("#q-days_mixture-explain").inner_text()
    assert "25" in explain and "0 – 30 days" in explain, explain
    watch.assert_clean()
