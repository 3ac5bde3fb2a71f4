"""The privacy wording is literally true, and each sensitive question has one explanation.

What leaves the device for a sensitive question is the coins' result, which equals the true answer
with a stated chance: no sentence may say the answer is never sent or never leaves the device.
An author's help text replaces the generated explanation (not both); a design that sends the
truth with one chance says that chance once (not "70% to 70%").
"""

from __future__ import annotations

import re

import pytest
from browserkit import Site, Watch, open_survey, survey_files
from playwright.sync_api import BrowserContext
from respondent import author_help, explanation

EXAMPLES = [f.name for f in survey_files() if f.parent.name == "surveys" and
            f.parent.parent.name != "browser"]
# Claims a randomized-response page cannot keep (the report equals the truth with some chance).
FALSE_CLAIMS = re.compile(r"never (be )?sent|never leaves?|nunca se env|nunca salga|nunca salen",
                          re.IGNORECASE)
# The start of every generated explanation, in each catalog (crosswise and triangular: nothing is
# drawn, the respondent combines two statements).
GENERATED = re.compile(r"^(After you answer|Después de que respondas|Your answer is never asked "
                       r"for|Nunca se te pregunta tu respuesta|After you tick|Después de "
                       r"responder|Después de marcar)")  # the last three: frequency oracles


@pytest.mark.parametrize("source", EXAMPLES)
def test_every_sentence_is_true_and_said_once(site: Site, context: BrowserContext,
                                              watch: Watch, source: str) -> None:
    survey = site.ids[source]
    manifest = site.manifest(survey)
    page = open_survey(context, site, survey, ready=False)
    sensitive = [q for q in manifest["questions"] if q["sensitive"]]
    assert sensitive
    page.wait_for_function(
        "(id) => document.getElementById(`q-${id}-explain`).textContent.length > 80",
        arg=sensitive[0]["id"])
    visible_text = page.locator("body").inner_text()
    noscript = page.evaluate("() => Array.from(document.querySelectorAll('noscript'))"
                             ".map((n) => n.textContent).join(' ')")
    assert not FALSE_CLAIMS.search(visible_text), FALSE_CLAIMS.search(visible_text)
    assert not FALSE_CLAIMS.search(noscript)
    for q in sensitive:
        text = explanation(page, q["id"])
        assert not re.search(r"(\d+(?:[.,]\d+)?\s?%) (to|y) \1", text), text
        if author_help(page, q["id"]):
            assert not GENERATED.search(text), text  # the author's replaces the generated one
        else:
            assert GENERATED.search(text), text
    watch.assert_clean()
