"""`review: result-only`: the review shows each report and the rule, not what the coins did.

On a shared screen the coins' transcript plus the report reveal the true answer. The survey's
page config (`rr-config`) is switched to result-only here by rewriting the served page, so the
example surveys stay as they are.
"""

from __future__ import annotations

import json

from browserkit import Site, Watch, open_survey
from playwright.sync_api import BrowserContext, Route
from respondent import (
    answer_and_review,
    log_worker_results,
    plan_answers,
    transcript_steps,
    worker_results,
)

SURVEY = "honor-code"


def test_result_only_review_hides_the_coins(site: Site, context: BrowserContext,
                                            watch: Watch) -> None:
    manifest = site.manifest(SURVEY)

    def result_only(route: Route) -> None:
        response = route.fetch()
        html = response.text()
        assert '"review":"full"' in html
        route.fulfill(response=response, body=html.replace('"review":"full"',
                                                           '"review":"result-only"'))

    context.route(site.page_url(SURVEY), result_only)
    page = open_survey(context, site, SURVEY)
    log_worker_results(page)
    body = json.loads(answer_and_review(page, manifest, plan_answers(manifest, 0)))
    (result,) = worker_results(page)[0]["results"]
    assert result["steps"]  # the coins were flipped ...
    lines = transcript_steps(page)
    assert len(lines) == 1  # ... but only the rule is shown
    for device in ("Coin", "Die", "Spinner", "→"):
        assert device not in lines[0], lines
    assert "chance" in lines[0]
    q = next(q for q in manifest["questions"] if q["sensitive"])
    report = page.locator(f"#rr-transcript section[data-question={q['id']}] .rr-report")
    assert report.get_attribute("data-report") == body["answers"][q["id"]]
    watch.assert_clean()
