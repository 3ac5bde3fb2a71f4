"""Direct answers can be fixed before sending; sensitive reports stay as randomized.

A typo in an age must not be locked in with the coins: "Edit my other answers" goes back to the
form with the sensitive questions disabled; saving keeps the token and the reports, replaces the
direct answers, and flips no coin.
"""

from __future__ import annotations

import json

from browserkit import Site, Watch, open_survey
from playwright.sync_api import BrowserContext
from respondent import (
    Plan,
    answer_and_review,
    confirm,
    edit_direct_answers,
    expected_direct,
    log_worker_results,
    plan_answers,
    question_disabled,
    worker_results,
)

SURVEY = "honor-code"


def test_direct_answers_can_be_fixed_before_sending(site: Site, context: BrowserContext,
                                                    watch: Watch) -> None:
    manifest = site.manifest(SURVEY)
    page = open_survey(context, site, SURVEY)
    log_worker_results(page)
    first, second = plan_answers(manifest, 0), plan_answers(manifest, 2)
    assert first.direct != second.direct
    before = json.loads(answer_and_review(page, manifest, first))

    edit_direct_answers(page)
    for q in manifest["questions"]:
        if q["sensitive"]:
            assert question_disabled(page, q["id"])
            # locked, and it looks it: dashed, greyed, no pointer, a lock before what is sent
            look = page.locator(f"#q-{q['id']}").evaluate("""(box) => {
              const label = box.querySelector('label');
              const explain = box.querySelector('.rr-explain');
              return {border: getComputedStyle(box).borderTopStyle,
                      cursor: getComputedStyle(label).cursor,
                      lock: getComputedStyle(explain, '::before').content};
            }""")
            assert look == {"border": "dashed", "cursor": "not-allowed", "lock": '"🔒 "'}, look
    # Clear what was typed or chosen, then answer the direct questions anew.
    page.evaluate("""() => { for (const i of document.querySelectorAll('#rr-form input[name]'))
      if (i.type === 'checkbox' || i.type === 'radio') i.checked = false; }""")
    after = json.loads(answer_and_review(page, manifest, Plan(direct=second.direct)))

    assert after["respondent"] == before["respondent"]
    sensitive = [q["id"] for q in manifest["questions"] if q["sensitive"]]
    for k in sensitive:
        assert after["answers"][k] == before["answers"][k], k
    direct = {k: v for k, v in after["answers"].items() if k not in sensitive}
    assert direct == expected_direct(manifest, second, "collector")
    assert len(worker_results(page)) == 1  # the coins were flipped once

    confirm(page)
    posts = watch.posts("/api/submissions")
    assert [json.loads(p.body or "") for p in posts] == [after]
    assert page.locator("#rr-edit").is_hidden()
    watch.assert_clean()
