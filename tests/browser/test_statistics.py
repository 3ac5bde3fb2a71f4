"""The browser's randomizer is rrsite/core's, with the browser's secure random source.

- A statistical end-to-end test: RESPONDENTS simulated respondents with known true answers go
  through the real page in Chromium (one page, runtime loaded once, the stored report cleared
  between respondents) to rrsite's collector; the reports must match each design's rates
  (exact binomial tests), and the same data must reject a wrong design (direct answering).
- os.urandom inside Pyodide in the worker is crypto.getRandomValues: counted, and then replaced
  by constant bytes, which must fix the coins (and so the reports) exactly as core's code says.
"""

from __future__ import annotations

import json
import math
import random

from browserkit import Site, Watch, open_survey
from playwright.sync_api import BrowserContext, Page
from respondent import check_transcript, log_worker_results, worker, worker_results

SURVEY = "rr-statistical"
RESPONDENTS = 240
ALPHA = 1e-4  # per test; five tests: a false alarm about once in 2,000 runs
TRUE_YES = {"violated": 24, "aid": 72}  # known true rates 0.10 and 0.30

ONE_RESPONDENT = """async ({ truths, direct }) => {
  const until = async (condition) => {
    const end = performance.now() + 20000;
    while (!condition()) {
      if (performance.now() > end) throw new Error("timed out");
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  };
  localStorage.clear();
  document.dispatchEvent(new CustomEvent("rrsite:reset"));
  const pick = (selector, value) =>
    Array.from(document.querySelectorAll(selector)).find((input) => input.value === value).click();
  for (const [id, value] of Object.entries(truths)) pick(`#q-${id} input[data-truth]`, value);
  for (const [id, value] of Object.entries(direct)) pick(`#q-${id} input[name="${id}"]`, value);
  document.getElementById("rr-submit").click();
  await until(() => !document.getElementById("rr-review").hidden);
  const shown = document.getElementById("rr-body").textContent;
  document.getElementById("rr-confirm").click();
  await until(() => !document.getElementById("rr-done").hidden);
  return shown;
}"""

# In the worker: count crypto.getRandomValues calls, or make it return constant bytes.
RANDOM_SOURCE = """(mode) => {
  if (!self.__rrRandom) {
    const original = crypto.getRandomValues.bind(crypto);
    self.__rrRandom = { calls: 0, mode: "pass" };
    crypto.getRandomValues = (view) => {
      self.__rrRandom.calls += 1;
      if (self.__rrRandom.mode === "zeros") return view.fill(0);
      if (self.__rrRandom.mode === "sevens") return view.fill(0x7f);
      return original(view);
    };
  }
  self.__rrRandom.mode = mode;
  return self.__rrRandom.calls;
}"""


def binomial_p_value(k: int, n: int, p: float) -> float:
    """Exact two-sided binomial test: P(outcomes no more likely than k) under Bin(n, p)."""
    pmf = [math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(n + 1)]
    return min(1.0, sum(q for q in pmf if q <= pmf[k] * (1 + 1e-7)))


def test_binomial_p_value_against_closed_forms() -> None:
    assert binomial_p_value(5, 10, 0.5) == 1.0
    assert math.isclose(binomial_p_value(0, 10, 0.5), 2 / 1024)
    assert math.isclose(binomial_p_value(10, 10, 0.5), 2 / 1024)
    assert math.isclose(binomial_p_value(0, 5, 0.1), 1.0)  # the mode: every outcome counts
    assert binomial_p_value(0, 240, 0.3) < 1e-30


def respond(page: Page, truths: dict[str, str], direct: dict[str, str]) -> str:
    return page.evaluate(ONE_RESPONDENT, {"truths": truths, "direct": direct})  # type: ignore[no-any-return]


def test_reports_match_the_design_rates(site: Site, context: BrowserContext,
                                        watch: Watch) -> None:
    manifest = site.manifest(SURVEY)
    questions = {q["id"]: q for q in manifest["questions"]}
    assert questions["violated"]["matrix"] == [[0.75, 0.25], [0.25, 0.75]]
    assert questions["aid"]["matrix"] == [[0.5, 0.5], [0.0, 1.0]]
    page = open_survey(context, site, SURVEY)
    log_worker_results(page)
    calls_before = worker(page).evaluate(RANDOM_SOURCE, "pass")

    rng = random.Random(20261122)
    truths: dict[str, list[str]] = {}
    for qid, yes in TRUE_YES.items():
        column = ["yes"] * yes + ["no"] * (RESPONDENTS - yes)
        rng.shuffle(column)
        truths[qid] = column
    years = questions["year"]["values"]
    shown = []
    for i in range(RESPONDENTS):
        shown.append(respond(page, {qid: truths[qid][i] for qid in TRUE_YES},
                             {"year": years[i % len(years)]}))
    calls = worker(page).evaluate(RANDOM_SOURCE, "pass") - calls_before

    posts = watch.posts("/api/submissions")
    assert len(posts) == RESPONDENTS
    bodies = [json.loads(post.body or "") for post in posts]
    assert [post.body for post in posts] == shown
    assert len({body["respondent"] for body in bodies}) == RESPONDENTS
    results = [{r["id"]: r for r in reply["results"]} for reply in worker_results(page)]
    assert len(results) == RESPONDENTS
    steps = 0
    for i, (body, result) in enumerate(zip(bodies, results, strict=True)):
        for qid in TRUE_YES:
            assert body["answers"][qid] == result[qid]["report"]
            check_transcript(questions[qid], truths[qid][i], None, result[qid])
            steps += len(result[qid]["steps"])
        assert body["answers"]["year"] == years[i % len(years)]
    # Every coin inside Pyodide drew from crypto.getRandomValues.
    assert calls >= steps >= 2 * RESPONDENTS

    for qid in TRUE_YES:
        (p00, _), (_, p11) = questions[qid]["matrix"]
        reports = [body["answers"][qid] for body in bodies]
        yes = sum(report == "yes" for report in reports)
        pi = TRUE_YES[qid] / RESPONDENTS
        lam = pi * p11 + (1 - pi) * (1 - p00)
        assert binomial_p_value(yes, RESPONDENTS, lam) > ALPHA, (qid, yes, lam)
        # The same counts reject direct answering (lambda = pi) at this sample size.
        assert binomial_p_value(yes, RESPONDENTS, pi) < ALPHA, (qid, yes, pi)
        # Given the truth, P(report yes) is p11 for a true yes and 1 - p00 for a true no.
        for truth, rate in (("yes", p11), ("no", 1 - p00)):
            group = [r for r, t in zip(reports, truths[qid], strict=True) if t == truth]
            k = sum(r == "yes" for r in group)
            if rate in (0.0, 1.0):
                assert k == rate * len(group), (qid, truth, k, len(group))
            else:
                assert binomial_p_value(k, len(group), rate) > ALPHA, (qid, truth, k, rate)
    watch.assert_clean()


def test_pyodide_draws_from_crypto_get_random_values(site: Site, context: BrowserContext,
                                                     watch: Watch) -> None:
    """Constant bytes from crypto.getRandomValues fix core's coins.

    A coin is randrange(2), drawn by Python's random as getrandbits(2) (rejecting 2 and 3) from
    one byte's top bits: 0x00 gives 0 (face 1, heads: the truth is reported), 0x7f gives 1
    (face 2, tails: forced; the second coin tails too: "no", or "yes" for forced-yes). 0xff
    would give 3, rejected forever.
    """
    page = open_survey(context, site, SURVEY)
    log_worker_results(page)
    truths = {"violated": "yes", "aid": "no"}
    expected = {"zeros": {"violated": "yes", "aid": "no"},
                "sevens": {"violated": "no", "aid": "yes"}}
    for _ in range(3):
        for mode, reports in expected.items():
            before = worker(page).evaluate(RANDOM_SOURCE, mode)
            respond(page, truths, {"year": "First"})
            after = worker(page).evaluate(RANDOM_SOURCE, "pass")
            assert after - before >= 2
            result = {r["id"]: r for r in worker_results(page)[-1]["results"]}
            assert {qid: r["report"] for qid, r in result.items()} == reports
            outcome = "heads" if mode == "zeros" else "tails"
            assert all(step["outcome"] == outcome for r in result.values() for step in r["steps"])
    bodies = [json.loads(post.body or "") for post in watch.posts("/api/submissions")]
    assert [b["answers"]["violated"] for b in bodies] == ["yes", "no"] * 3
    watch.assert_clean()
