"""Two waves of a panel in Chromium: the permanent reports kept, reused, and forgotten.

Wave 1 (surveys/climate-panel.md) and wave 2 (tests/browser/surveys/climate-panel-w2.md) share
the series ``climate-2026``. With "keep" ticked, wave 1 stores under ``rrsite:series:<id>`` the
permanent reports the worker drew (a table over every possible answer) and the panel's token;
nothing stored holds a true answer (the true ticks, as the JSON the worker got, appear nowhere).
Wave 2 sends the kept table back to the worker, which only re-randomizes it (``drawn_now`` false)
and whose reports follow from it; the body carries the same token. "Forget" removes the panel's
storage; with "keep" unticked nothing of the panel is stored.
"""

from __future__ import annotations

import json

import pytest
from browserkit import Site, Watch, open_survey
from playwright.sync_api import BrowserContext
from respondent import (
    check_transcript,
    confirm,
    fill,
    forget_answers,
    local_storage,
    log_worker_results,
    plan_answers,
    submit,
    wait_review,
    worker_results,
)

pytestmark = pytest.mark.fresh_profile  # what is kept and forgotten on the device

WAVE1, WAVE2, SERIES = "climate-2026-w1", "climate-2026-w2", "climate-2026"
KEY = f"rrsite:series:{SERIES}"


def answer(context: BrowserContext, site: Site, survey: str, keep: bool,
           round_index: int = 0) -> tuple[object, dict, dict, dict]:
    manifest = site.manifest(survey)
    page = open_survey(context, site, survey)
    log_worker_results(page)
    panel = page.locator("#rr-waves")
    assert panel.is_visible() and "epsilon" in page.locator("#rr-waves-text").inner_text()
    if keep != page.locator("#rr-waves-keep").is_checked():
        page.locator("#rr-waves-keep").click()
    plan = plan_answers(manifest, round_index)
    fill(page, manifest, plan)
    submit(page)
    body = json.loads(wait_review(page))
    results = {r["id"]: r for r in worker_results(page)[-1]["results"]}
    questions = {q["id"]: q for q in manifest["questions"]}
    for qid, result in results.items():
        check_transcript(questions[qid], plan.truths[qid], None, result)
    confirm(page)
    return page, body, results, {"plan": plan, "manifest": manifest}


def test_kept_reused_and_forgotten(site: Site, context: BrowserContext, watch: Watch) -> None:
    page, body1, results1, info1 = answer(context, site, WAVE1, keep=True)
    kept = json.loads(local_storage(page)[KEY])
    assert kept["token"] == body1["respondent"]
    assert set(kept["questions"]) == {"happened", "quit"}
    for qid, entry in kept["questions"].items():
        assert entry["table"] == results1[qid]["permanent"] and results1[qid]["drawn_now"]
    stored = json.dumps(local_storage(page))
    for truth in info1["plan"].truths.values():  # the true ticks, as the worker got them
        if truth.startswith("["):
            assert truth not in stored and truth not in watch.requests[-1].text()
    page.close()

    page, body2, results2, _ = answer(context, site, WAVE2, keep=True, round_index=1)
    assert body2["respondent"] == body1["respondent"]  # linked: the panel's token
    for qid in ("happened", "quit"):
        assert results2[qid]["drawn_now"] is False
        assert results2[qid]["permanent"] == kept["questions"][qid]["table"]
    assert json.loads(local_storage(page)[KEY])["questions"] == kept["questions"]
    forget_answers(page)
    assert KEY not in local_storage(page)
    page.close()


def test_unticked_keeps_nothing_of_the_panel(site: Site, context: BrowserContext) -> None:
    page, body, results, _ = answer(context, site, WAVE1, keep=False, round_index=2)
    assert KEY not in local_storage(page)
    assert all(r["drawn_now"] for r in results.values() if "permanent" in r)
    page.close()
