"""RRreg's designs in the browser: crosswise without a randomizer, the group from the secure source.

- A crosswise-only survey never starts Pyodide: the page works with the runtime blocked, and
  what is sent is the report the respondent picked ("same"/"different"); no true answer exists.
- The group of a two-group design is drawn by rrsite/core in the worker from
  crypto.getRandomValues: counted, uniform by an exact binomial test over many respondents (the
  worker's "respond" is called many times in one page; at 2,000 calls a group probability of
  0.55 instead of 0.5 fails), and fixed by constant bytes.
"""

from __future__ import annotations

import json

import pytest
from browserkit import Site, Watch, open_survey
from playwright.sync_api import BrowserContext
from respondent import worker
from scipy.stats import binomtest
from test_statistics import ALPHA, RANDOM_SOURCE

CROSSWISE_ONLY = "rr-crosswise-only"
DESIGNS = "rr-rrreg-designs"
CALLS = 2000

# In the worker: send "respond" messages to its own listener, collect what it posts back.
MANY = """({ question, truth, count }) => {
  const results = [];
  const post = self.postMessage;
  self.postMessage = (message) => { if (message.type === "result") results.push(message); };
  try {
    for (let i = 0; i < count; i += 1) {
      self.dispatchEvent(new MessageEvent("message", {
        data: { type: "respond", id: -1 - i, items: [{ question, truth }] } }));
    }
  } finally {
    self.postMessage = post;
  }
  return results.map((message) => {
    if (message.error) throw new Error(message.error);
    return message.results[0];
  });
}"""


@pytest.mark.fresh_profile
def test_crosswise_needs_no_randomizer(site: Site, context: BrowserContext, watch: Watch) -> None:
    blocked: list[str] = []

    def block(route):  # type: ignore[no-untyped-def]
        blocked.append(route.request.url)
        route.abort()

    context.route("**/pyodide*/**", block)
    context.route("**/*.zip", block)
    page = open_survey(context, site, CROSSWISE_ONLY, ready=False)
    assert page.workers == []
    assert page.locator("#q-copia input[data-truth]").count() == 0  # no true answer to give
    assert page.locator("#q-copia-innocuous-statement").inner_text().startswith("Mi madre")
    page.locator('#q-copia input[data-report][value="same"]').check()
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])", timeout=10_000)
    page.click("#rr-confirm")
    page.wait_for_selector("#rr-done:not([hidden])", timeout=10_000)
    posts = watch.posts("/api/submissions")
    assert len(posts) == 1
    body = json.loads(posts[0].body or "")
    assert set(body) == {"survey", "version", "respondent", "answers"}
    assert body["answers"] == {"copia": "same"}
    assert blocked == [] and page.workers == []  # the runtime was never even requested
    watch.assert_clean()


def test_groups_come_from_crypto_and_are_uniform(site: Site, context: BrowserContext,
                                                 watch: Watch) -> None:
    manifest = site.manifest(DESIGNS)
    questions = {q["id"]: q for q in manifest["questions"]}
    page = open_survey(context, site, DESIGNS)
    for qid in ("sld", "cdm", "cdmsym", "uqt"):
        before = worker(page).evaluate(RANDOM_SOURCE, "pass")
        results = worker(page).evaluate(MANY, {"question": questions[qid], "truth": "no",
                                              "count": CALLS})
        calls = worker(page).evaluate(RANDOM_SOURCE, "pass") - before
        assert len(results) == CALLS
        groups = [r["group"] for r in results]
        assert set(groups) == {1, 2}
        assert all(r["steps"][0]["action"] == f"group-{r['group']}" for r in results)
        ones = groups.count(1)
        assert binomtest(ones, CALLS, 0.5).pvalue > ALPHA, (qid, ones)
        assert calls >= 2 * CALLS  # the group and the device: every draw from the secure source
        # within a group, the report follows that group's matrix (truth "no": row 0)
        for group in questions[qid]["groups"]:
            reports = [r["report"] for r in results if r["group"] == group["id"]]
            yes = reports.count("yes")
            assert binomtest(yes, len(reports), group["matrix"][0][1]).pvalue > ALPHA, (qid, group)
    # constant bytes fix the group: 0x00 gives group 1, 0x7f group 2 (one coin, MATH.md's die)
    for mode, expected in (("zeros", 1), ("sevens", 2)):
        worker(page).evaluate(RANDOM_SOURCE, mode)
        results = worker(page).evaluate(MANY, {"question": questions["sld"], "truth": "no",
                                              "count": 5})
        worker(page).evaluate(RANDOM_SOURCE, "pass")
        assert [r["group"] for r in results] == [expected] * 5
    watch.assert_clean()
