"""A shared device: "Forget my answers on this device" once sent.

Forgetting removes the stored report and direct answers; what stays is a salted marker that the
version was answered (a SHA-256 under a random per-device salt, value "1"), nothing else, and it
still forbids a second randomization of the same version.
"""

from __future__ import annotations

import hashlib
import json
import re

from browserkit import Site, Watch, open_survey
from playwright.sync_api import BrowserContext
from respondent import (
    DONE,
    FORM,
    confirm,
    fill,
    forget_answers,
    local_storage,
    plan_answers,
    submit,
    wait_review,
)

SURVEY = "honor-code"


def test_forget_keeps_only_a_salted_marker(site: Site, context: BrowserContext,
                                           watch: Watch) -> None:
    manifest = site.manifest(SURVEY)
    page = open_survey(context, site, SURVEY)
    assert page.locator("#rr-forget").is_hidden()  # not before anything is sent
    fill(page, manifest, plan_answers(manifest, 0))
    submit(page)
    body = json.loads(wait_review(page))
    assert page.locator("#rr-forget").is_hidden()
    confirm(page)
    forget_answers(page)

    kept = local_storage(page)
    salt = kept.pop("rrsite:salt")
    assert list(kept.values()) == ["1"], kept
    (key,) = kept
    expected = hashlib.sha256(f"{salt}\n{manifest['id']}\n{manifest['version']}".encode())
    assert key == f"rrsite:answered:{expected.hexdigest()}"
    everything = json.dumps(kept) + salt
    assert body["respondent"] not in everything
    assert SURVEY not in everything and not re.search(r"\byes\b|\bno\b", everything)

    # Back on the page: no form, no second randomization, nothing sent again.
    posts = len(watch.posts("/api/submissions"))
    page.reload()
    page.wait_for_selector(DONE)
    page.wait_for_timeout(300)
    assert page.locator(FORM).count() == 0  # the form is not shown
    assert page.evaluate("() => document.documentElement.dataset.rrRuntime") == "not-needed"
    page.evaluate("() => document.getElementById('rr-form').requestSubmit()")
    page.wait_for_timeout(500)
    assert page.locator("#rr-review").is_hidden()
    assert len(watch.posts("/api/submissions")) == posts
    watch.assert_clean()
