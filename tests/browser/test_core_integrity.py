"""The worker checks the core bundle against the manifest's core_hash before importing it.

A core zip that is not the one the survey names (a tampered or stale copy on a host or a cache)
must not randomize anything: the page says why, and nothing is stored or sent.
"""

from __future__ import annotations

import hashlib

from browserkit import Site, Watch
from playwright.sync_api import BrowserContext, Route
from respondent import fill, plan_answers

SURVEY = "honor-code"


def test_a_core_bundle_that_is_not_core_hash_is_refused(site: Site, context: BrowserContext,
                                                         watch: Watch) -> None:
    manifest = site.manifest(SURVEY)
    served: list[str] = []

    def tampered(route: Route) -> None:
        body = route.fetch().body()
        # the same files with one byte changed: still a valid zip for zipimport to read
        changed = body.replace(b"def respond_json(", b"def respond_jsoN(", 1)
        assert changed != body
        served.append("sha256:" + hashlib.sha256(changed).hexdigest())
        route.fulfill(status=200, body=changed, headers={"content-type": "application/zip"})

    page = context.new_page()
    page.route("**/_rr/core.*.zip", tampered)
    page.goto(site.page_url(SURVEY))
    page.wait_for_selector("html[data-rr-runtime=failed]", state="attached", timeout=90_000)
    text = page.locator("#rr-runtime-text").inner_text()
    assert "could not start" in text, text
    assert served and served[0] in text and manifest["core_hash"] in text, text
    fill(page, manifest, plan_answers(manifest, 0))
    page.click("#rr-submit")
    page.wait_for_timeout(300)
    assert page.locator("#rr-review").is_hidden()
    assert [r for r in watch.requests if r.method != "GET"] == []
    key = f"rrsite:{manifest['id']}:{manifest['version']}"
    assert page.evaluate("(key) => localStorage.getItem(key)", key) is None


def test_the_bundle_as_built_is_accepted(site: Site, context: BrowserContext) -> None:
    manifest = site.manifest(SURVEY)
    (core,) = (site.dist / "_rr").glob("core.*.zip")
    assert "sha256:" + hashlib.sha256(core.read_bytes()).hexdigest() == manifest["core_hash"]
    page = context.new_page()
    page.goto(site.page_url(SURVEY))
    page.wait_for_selector("html[data-rr-runtime=ready]", state="attached", timeout=90_000)
