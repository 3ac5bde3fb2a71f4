"""The extended crosswise model in the browser: the page draws the group and shows its statement.

crosswise.js draws the group from crypto.getRandomValues (constant bytes fix it: all zero bits
give group 1, all one bits group 2), shows that group's innocuous statement only, and the body
carries the report the respondent picked with that group; no randomizer is requested.
"""

from __future__ import annotations

import json

import pytest
from browserkit import Site, Watch, open_survey
from playwright.sync_api import BrowserContext

SURVEY = "rr-extended-crosswise"
#: crypto.getRandomValues on the page filling every byte with one value.
CONSTANT_BYTES = """(() => {
  const fill = %d;
  crypto.getRandomValues = (array) => {
    new Uint8Array(array.buffer, array.byteOffset, array.byteLength).fill(fill);
    return array;
  };
})();"""


def answer(context: BrowserContext, site: Site, watch: Watch, report: str) -> tuple[int, dict]:
    """Open the page, pick ``report``, send; the group shown and the body sent."""
    page = open_survey(context, site, SURVEY, ready=False)
    visible = [int(item.get_attribute("data-statement-group") or 0)
               for item in page.locator("[data-statement-for=stimulants]").all()
               if item.is_visible()]
    assert len(visible) == 1, visible
    page.locator(f'#q-stimulants input[data-report][value="{report}"]').check()
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])", timeout=10_000)
    page.click("#rr-confirm")
    page.wait_for_selector("#rr-done:not([hidden])", timeout=10_000)
    assert page.workers == []  # answered in the head: no randomizer
    body = json.loads(watch.posts("/api/submissions")[-1].body or "")
    page.evaluate("localStorage.clear()")  # the next page load is a new respondent
    page.close()
    return visible[0], body


@pytest.mark.parametrize("byte,group", [(0, 1), (255, 2)])
def test_the_group_comes_from_the_secure_source_and_decides_the_statement(
        byte: int, group: int, site: Site, context: BrowserContext, watch: Watch) -> None:
    context.add_init_script(CONSTANT_BYTES % byte)
    shown, body = answer(context, site, watch, "same")
    assert shown == group
    assert body["answers"] == {"stimulants": "same"}
    assert body["groups"] == {"stimulants": group}
    assert set(body) == {"survey", "version", "respondent", "answers", "groups"}


def test_the_group_sent_is_the_statement_shown(site: Site, context: BrowserContext,
                                               watch: Watch) -> None:
    seen = set()
    for i in range(16):  # both groups appear (all 16 alike: chance 2 / 2^16)
        shown, body = answer(context, site, watch, ("same", "different")[i % 2])
        assert body["groups"] == {"stimulants": shown}
        seen.add(shown)
    assert seen == {1, 2}
    watch.assert_clean()
