"""Answer every survey in Chromium, many times, and check that no true answer ever leaves.

For each survey (the examples of surveys/ and one small survey per submission target), one page is
loaded and answered ROUNDS times (its stored report cleared between rounds), with true answers
that differ from what the coins force. Every request the page and its worker make is recorded.
Checked each round:

- no input of a sensitive question has a name, and no form's data set holds a sensitive answer;
- exactly one submission leaves, to the configured target only, and nothing goes to another host;
- its body has exactly the contract's fields: the report the worker returned for each sensitive
  question (the test reads it inside the worker), the direct answers as typed, nothing else;
- the coins' transcript explains the report (truth or coins, per design);
- a true answer that was not reported appears nowhere in any request's URL, headers or body;
- localStorage holds exactly the sent body, never a true answer;
- no console error, page error or CSP violation.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from browserkit import Site, Watch, survey_files
from playwright.sync_api import BrowserContext, Page, Route
from respondent import (
    COMBINED,
    FORM_DATA,
    NAMED_TRUTH_INPUTS,
    check_transcript,
    expected_direct,
    fill,
    log_worker_results,
    netlify_value,
    parse_body,
    plan_answers,
    reset,
    shown_body,
    worker_results,
    worker_violations,
    written_in,
)

ROUNDS = 8
STORED_KEYS = {"format", "body", "randomized_at", "sent_at"}


def fake_endpoint(page: Page, url: str, received: list[str]) -> None:
    """The survey's HTTPS endpoint, answered inside the browser (nothing leaves the machine)."""
    cors = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "content-type",
            "Access-Control-Allow-Methods": "POST"}

    def handle(route: Route) -> None:
        if route.request.method == "OPTIONS":
            route.fulfill(status=204, headers=cors)
            return
        received.append(route.request.post_data or "")
        route.fulfill(status=201, headers={**cors, "Content-Type": "application/json"},
                      body='{"status": "stored"}')

    page.route(url, handle)


def fake_netlify(page: Page, page_url: str, received: list[str]) -> None:
    """Netlify's form handling: a urlencoded POST to the page's own path."""

    def handle(route: Route) -> None:
        if route.request.method != "POST":
            route.continue_()
            return
        received.append(route.request.post_data or "")
        route.fulfill(status=200, headers={"Content-Type": "text/html"}, body="<p>ok</p>")

    page.route(page_url, handle)


def as_sent(stored_body: dict, target: str) -> dict:
    """The stored body as the target carries it (Netlify's fields are strings)."""
    if target != "netlify":
        return stored_body
    answers = {key: netlify_value(value) for key, value in stored_body["answers"].items()}
    return {**stored_body, "answers": answers}


def stored_record(page: Page, manifest: dict) -> dict:
    key = f"rrsite:{manifest['id']}:{manifest['version']}"
    raw = page.evaluate("(key) => localStorage.getItem(key)", key)
    assert raw is not None, "the randomized report was not stored"
    return json.loads(raw)


@pytest.mark.parametrize("file", survey_files(), ids=lambda f: f.stem)
def test_answer_survey_many_times(file: Path, site: Site, context: BrowserContext,
                                  watch: Watch, tmp_path: Path) -> None:
    sid = site.ids[file.name]
    manifest = site.manifest(sid)
    target = manifest["submit"]["to"]
    questions = {q["id"]: q for q in manifest["questions"]}
    # randomized on the device (crosswise/triangular questions are answered without a randomizer)
    sensitive = [q for q in manifest["questions"]
                 if q["sensitive"] and q["design"]["name"] not in COMBINED]
    page_url = site.page_url(sid)
    received: list[str] = []
    page = context.new_page()
    if target == "endpoint":
        fake_endpoint(page, manifest["submit"]["url"], received)
    if target == "netlify":
        fake_netlify(page, page_url, received)
    page.goto(page_url)
    page.wait_for_selector("#rr-submit:not([disabled])", state="attached")
    if sensitive:
        page.wait_for_selector("html[data-rr-runtime=ready]", state="attached", timeout=90_000)
        log_worker_results(page)
    assert page.evaluate(NAMED_TRUTH_INPUTS) == 0, "a sensitive input has a name"
    allowed_hosts = {urlsplit(site.url).netloc}
    if target == "endpoint":
        allowed_hosts.add(urlsplit(manifest["submit"]["url"]).netloc)

    for round_index in range(ROUNDS):
        if round_index:
            reset(page)
        before = len(watch.requests)
        plan = plan_answers(manifest, round_index)
        fill(page, manifest, plan)

        # What a native form submission would carry: never a sensitive answer.
        for key, value in page.evaluate(FORM_DATA):
            if key in plan.truths:
                assert value == "", f"form field {key} holds {value!r}"
            assert key in questions or key in ("form-name", "survey", "version", "respondent")
        assert page.evaluate(NAMED_TRUTH_INPUTS) == 0

        page.click("#rr-submit")
        page.wait_for_selector("#rr-review:not([hidden])", timeout=60_000)
        shown = shown_body(page)
        if target == "download":
            with page.expect_download() as download_info:
                page.click("#rr-confirm")
            saved = tmp_path / f"{round_index}.json"
            download_info.value.save_as(saved)
            body_text = saved.read_text(encoding="utf-8")
        else:
            page.click("#rr-confirm")
            body_text = None
        page.wait_for_selector("#rr-done:not([hidden])", timeout=30_000)

        posts = [r for r in watch.requests[before:] if r.method not in ("GET", "HEAD", "OPTIONS")]
        if target == "download":
            assert posts == []
        else:
            assert len(posts) == 1, [p.url for p in posts]
            post = posts[0]
            expected_url = {"collector": site.origin + "/api/submissions",
                            "endpoint": manifest["submit"].get("url"), "netlify": page_url}[target]
            assert post.url == expected_url
            body_text = post.body
            content_type = post.headers.get("content-type", "")
            assert content_type.startswith("application/x-www-form-urlencoded"
                                           if target == "netlify" else "application/json")
        assert body_text is not None
        if target != "netlify":
            assert body_text == shown, "the page sent something other than what it showed"
        body = parse_body(target, body_text)

        # Exactly the contract's fields: survey, version, token, and per question the report
        # the worker returned or the direct answer typed.
        grouped = {q["id"] for q in sensitive if "groups" in q}
        # the extended crosswise model: the page drew the group (crosswise.js), no worker
        drawn = {q["id"] for q in manifest["questions"] if q["sensitive"]
                 and q["design"]["name"] == "extended-crosswise" and q["id"] in plan.reports}
        assert set(body) == {"survey", "version", "respondent", "answers"} | (
            {"groups"} if grouped or drawn else set())
        assert body["survey"] == manifest["id"] and body["version"] == manifest["version"]
        assert 22 <= len(body["respondent"]) <= 64
        results = {r["id"]: r for r in worker_results(page)[-1]["results"]} if sensitive else {}
        assert set(results) == set(plan.truths)
        expected = {qid: result["report"] for qid, result in results.items()}
        expected.update(expected_direct(manifest, plan, target))
        assert body["answers"] == expected
        if grouped or drawn:  # the group core drew in the worker (or the page), nothing else
            assert set(body["groups"]) == grouped | drawn
            assert all(body["groups"][qid] == results[qid]["group"] for qid in grouped)
            assert all(body["groups"][qid] in (1, 2) for qid in drawn)
        for qid, result in results.items():
            check_transcript(questions[qid], plan.truths[qid], plan.innocuous.get(qid), result)

        # A true answer the coins replaced must not appear anywhere in what left the browser.
        sent_text = "\n".join(r.text() for r in watch.requests[before:])
        legit = json.dumps(body, ensure_ascii=False) + manifest["id"] + page_url
        for qid, truth in plan.truths.items():
            if results[qid]["report"] != truth and not written_in(truth, legit) and \
                    len(truth) >= 4:
                assert not written_in(truth, sent_text), f"true answer of {qid} sent"
        for sent in watch.requests[before:]:
            assert urlsplit(sent.url).netloc in allowed_hosts, sent.url
            for truth in plan.truths.values():
                assert truth not in urlsplit(sent.url).query

        # What stays on the device: the sent body, nothing else.
        record = stored_record(page, manifest)
        assert set(record) == STORED_KEYS
        assert as_sent(record["body"], target) == body
        assert record["sent_at"]

    if target in ("endpoint", "netlify"):
        assert len(received) == ROUNDS
    if sensitive:
        assert worker_violations(page) == []
    watch.assert_clean()
    page.close()


def test_each_target_is_covered(site: Site) -> None:
    """The surveys answered above include every submission target and every design."""
    targets, designs = set(), set()
    for sid in site.ids.values():
        manifest = site.manifest(sid)
        targets.add(manifest["submit"]["to"])
        designs.update(q["design"]["name"] for q in manifest["questions"] if q["sensitive"])
    assert targets >= {"collector", "endpoint", "netlify", "download"}
    assert designs >= {"forced-response", "forced-yes", "warner", "unrelated", "k-rr",
                       "crosswise", "triangular", "mangat", "kuk", "unrelated-unknown", "cdm",
                       "cdm-sym", "sld", "mixture", "mixture-unknown", "additive",
                       "multiplicative", "laplace", "duchi", "piecewise"}
