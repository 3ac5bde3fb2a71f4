"""Layout on a phone (390x844) and a review in the page's language.

- The endpoint survey's review (a long URL) does not widen the page beyond the viewport.
- The privacy toggle is a 44 px touch target.
- The review shows each answer with the label the form used (Spanish «Sí», not the value "yes"),
  above the exact body that is sent.
"""

from __future__ import annotations

import json

from browserkit import Site, Watch, open_survey
from playwright.sync_api import BrowserContext
from respondent import (
    document_width,
    fill,
    option_label,
    plan_answers,
    privacy_toggle_height,
    shown_answer,
    submit,
    wait_review,
)

PHONE = {"width": 390, "height": 844}


def test_endpoint_review_fits_a_phone(site: Site, context: BrowserContext, watch: Watch) -> None:
    manifest = site.manifest("undeclared-income")
    page = open_survey(context, site, "undeclared-income")
    page.set_viewport_size(PHONE)
    assert privacy_toggle_height(page) >= 44
    assert document_width(page) <= PHONE["width"]
    fill(page, manifest, plan_answers(manifest, 0))
    submit(page)
    wait_review(page)
    assert document_width(page) <= PHONE["width"]
    watch.assert_clean()


def test_review_uses_the_page_language(site: Site, context: BrowserContext, watch: Watch) -> None:
    manifest = site.manifest("drug-use")
    page = open_survey(context, site, "drug-use")
    plan = plan_answers(manifest, 0)
    fill(page, manifest, plan)
    submit(page)
    body = json.loads(wait_review(page))
    checked = 0
    for q in manifest["questions"]:
        if q["id"] not in body["answers"]:
            continue
        value = body["answers"][q["id"]]
        if q["sensitive"] or q["type"] in ("yes-no", "choice"):
            expected = option_label(page, q["id"], value)
            if q["type"] == "yes-no":
                assert expected != value  # «Sí»/«No», not the value sent
        elif q["type"] == "multi-choice":
            expected = ", ".join(option_label(page, q["id"], v) for v in value)
        else:
            expected = str(value)
        assert shown_answer(page, q["id"]) == expected, q["id"]
        checked += 1
    assert checked == len(body["answers"]) >= 3
    watch.assert_clean()
