"""A link of `rrsite invite --frame`: the page sends the invitee's design cell id as the
body's `cell`, beside the invitation code, and nothing else from the link; a malformed cell is
not sent. The request is answered here (the collector's storage of `cell` is wired separately),
so only what the page sends is checked."""

from __future__ import annotations

import json

from browserkit import Site, Watch
from playwright.sync_api import BrowserContext, Route
from respondent import fill, plan_answers

SURVEY = "honor-code"
CODE = "AbCdEfGhIjKlMnOp"


def _send(site: Site, context: BrowserContext, fragment: str) -> dict:
    manifest = site.manifest(SURVEY)
    page = context.new_page()
    bodies: list[str] = []

    def answer(route: Route) -> None:
        bodies.append(route.request.post_data or "")
        route.fulfill(status=201, content_type="application/json",
                      body=json.dumps({"status": "stored"}))

    page.route("**/api/submissions", answer)
    page.goto(site.page_url(SURVEY) + fragment)
    page.wait_for_selector("#rr-submit:not([disabled])", timeout=30_000)
    fill(page, manifest, plan_answers(manifest, 0))
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])", timeout=60_000)
    page.click("#rr-confirm")
    page.wait_for_selector("#rr-done:not([hidden])", timeout=30_000)
    assert len(bodies) == 1
    page.close()
    return json.loads(bodies[0])  # type: ignore[no-any-return]


def test_the_cell_travels_with_the_invitation(site: Site, context: BrowserContext,
                                              watch: Watch) -> None:
    body = _send(site, context, f"#invitation={CODE}&cell=Xy_9-k2Q")
    assert body["invitation"] == CODE and body["cell"] == "Xy_9-k2Q"
    assert set(body) <= {"survey", "version", "respondent", "answers", "groups", "invitation",
                         "cell"}


def test_a_malformed_cell_is_not_sent(site: Site, context: BrowserContext,
                                      watch: Watch) -> None:
    body = _send(site, context, f"#invitation={CODE}&cell=bad%20cell!")
    assert body["invitation"] == CODE and "cell" not in body
