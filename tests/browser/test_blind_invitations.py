"""Blind invitations in Chromium: the page trades its code for a blind-signed token when it opens
(RFC 9474 in rrsite.core.blind, inside Pyodide), and the submission carries the token, never the
code. A collector of its own (`rrsite serve --blind-key`) serves the already built site.

The page checks the key itself: a key whose id (computed from n and e) is not the link's is
refused before anything is sent, however the collector labels it; and "Forget my answers" leaves
neither the code nor the token on the device."""

from __future__ import annotations

import csv
import json
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from browserkit import ROOT, Site, Watch, wait_until
from playwright.sync_api import BrowserContext
from respondent import fill, plan_answers

SURVEY = "honor-code"


@pytest.fixture(scope="module")
def blind_site(site: Site, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path,
                                                                                      list[str]]]:
    """(url, database, links): a second collector on the same built site, with blind codes."""
    root = tmp_path_factory.mktemp("blind")
    db, key, codes = root / "blind.db", root / "rrsite-blind.pem", root / "codes.csv"
    run = [sys.executable, "-m", "rrsite"]
    made = subprocess.run([*run, "invite", "--survey", SURVEY, "-n", "5", "--url",
                           "http://127.0.0.1/honor-code/", "-o", str(codes), "--db", str(db),
                           "--blind", "--blind-key", str(key)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    with open(codes, newline="", encoding="utf-8") as handle:
        fragments = [row["link"].partition("#")[2] for row in csv.DictReader(handle)]
    process = subprocess.Popen(
        [*run, "serve", str(site.dist), "--port", "0", "--db", str(db), "--blind-key", str(key)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert match, f"rrsite serve did not start: {line!r}"
        yield match.group(0), db, fragments
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_blind_survey_submits_a_token_and_never_the_code(
        site: Site, blind_site: tuple[str, Path, list[str]], context: BrowserContext,
        watch: Watch) -> None:
    url, db, fragments = blind_site
    fragment = fragments[0]
    code = re.search(r"invitation=([A-Za-z0-9_-]+)", fragment).group(1)  # type: ignore[union-attr]
    manifest = site.manifest(SURVEY)
    page = context.new_page()
    page.goto(f"{url}{SURVEY}/#{fragment}")
    # the trade happens when the survey opens, before any answer
    wait_until(lambda: page.evaluate("() => document.documentElement.dataset.rrBlind")
               in ("ready", "failed"), 90, "the blind trade")
    assert page.evaluate("() => document.documentElement.dataset.rrBlind") == "ready"
    trades = watch.posts("/api/blind-sign")
    assert len(trades) == 1
    trade = json.loads(trades[0].body or "{}")
    assert trade["invitation"] == code and set(trade) == {"survey", "invitation", "blinded_msg"}

    fill(page, manifest, plan_answers(manifest, 0))
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])", timeout=60_000)
    page.click("#rr-confirm")
    page.wait_for_selector("#rr-done:not([hidden])", timeout=30_000)

    posts = watch.posts("/api/submissions")
    assert len(posts) == 1
    body = json.loads(posts[0].body or "{}")
    assert "invitation" not in body and set(body["token"]) == {"msg", "sig"}
    # the code appears in no request but the trade, neither in URL, headers nor body
    for request in watch.requests:
        if "/api/blind-sign" not in request.url:
            assert code not in request.text()
    # the token the collector saw is not the blinded value it signed
    assert trade["blinded_msg"] not in posts[0].text()
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT count(*) FROM submissions").fetchone()[0] == 1
        assert connection.execute("SELECT count(*) FROM blind_token_pool").fetchone()[0] == 1
        assert connection.execute(  # one code traded; the others keep their placeholder
            "SELECT count(*) FROM blind_codes WHERE blinded_hash != ?", ("0" * 64,)
        ).fetchone()[0] == 1
    watch.assert_clean()


def test_a_spent_code_is_refused_in_a_fresh_browser(
        blind_site: tuple[str, Path, list[str]], context: BrowserContext) -> None:
    """The same link on another device (empty storage): its trade is refused and said so."""
    url, _, fragments = blind_site
    page = context.new_page()
    page.goto(f"{url}{SURVEY}/#{fragments[1]}")
    wait_until(lambda: page.evaluate("() => document.documentElement.dataset.rrBlind")
               in ("ready", "failed"), 90, "the blind trade")
    second = context.browser.new_context()  # type: ignore[union-attr]
    try:
        other = second.new_page()
        other.goto(f"{url}{SURVEY}/#{fragments[1]}")
        wait_until(lambda: other.evaluate("() => document.documentElement.dataset.rrBlind")
                   in ("ready", "failed"), 90, "the second trade")
        assert other.evaluate("() => document.documentElement.dataset.rrBlind") == "failed"
    finally:
        second.close()


def test_a_key_that_is_not_the_links_is_refused_and_nothing_is_sent(
        site: Site, blind_site: tuple[str, Path, list[str]], context: BrowserContext,
        watch: Watch, tmp_path: Path) -> None:
    """An operator hands this respondent another key under the link's key id (to recognise the
    token later): the page computes the id from the key it received, refuses it, says so, and
    neither trades the code nor sends the answers."""
    from rrsite.collect.invitations.blindkey import create_key

    url, _, fragments = blind_site
    fragment = fragments[3]
    link_key = re.search(r"key=([0-9a-f]{32})", fragment).group(1)  # type: ignore[union-attr]
    other = create_key(tmp_path / "operator-per-person.pem").public_json()
    other["key_id"] = link_key  # the label says what the link says; n and e do not
    page = context.new_page()
    page.route(re.compile(r".*/api/blind-key.*"), lambda route: route.fulfill(
        status=200, content_type="application/json", body=json.dumps(other)))
    page.goto(f"{url}{SURVEY}/#{fragment}")
    wait_until(lambda: page.evaluate("() => document.documentElement.dataset.rrBlind")
               not in (None, "trading"), 90, "the blind trade")
    assert page.evaluate("() => document.documentElement.dataset.rrBlind") == "wrong-key"
    note = page.locator("#rr-submit-note").inner_text()
    assert "key is not the one your invitation link names" in note, note
    manifest = site.manifest(SURVEY)
    fill(page, manifest, plan_answers(manifest, 1))
    page.click("#rr-submit")
    wait_until(lambda: "key is not the one" in page.locator("#rr-submit-note").inner_text(),
               30, "the refusal at submit")
    assert page.locator("#rr-review").is_hidden()
    assert watch.posts("/api/blind-sign") == [] and watch.posts("/api/submissions") == []


def test_forget_removes_the_code_and_the_token(
        site: Site, blind_site: tuple[str, Path, list[str]], context: BrowserContext) -> None:
    """After "Forget my answers" the device holds neither the invitation code nor the token
    (the database still holds the token's hash: with it the token would find the answers)."""
    url, _, fragments = blind_site
    fragment = fragments[2]
    code = re.search(r"invitation=([A-Za-z0-9_-]+)", fragment).group(1)  # type: ignore[union-attr]
    manifest = site.manifest(SURVEY)
    page = context.new_page()
    page.goto(f"{url}{SURVEY}/#{fragment}")
    wait_until(lambda: page.evaluate("() => document.documentElement.dataset.rrBlind")
               in ("ready", "failed"), 90, "the blind trade")
    fill(page, manifest, plan_answers(manifest, 2))
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])", timeout=60_000)
    page.click("#rr-confirm")
    page.wait_for_selector("#rr-done:not([hidden])", timeout=30_000)
    stored = page.evaluate("() => JSON.stringify(Object.assign({}, localStorage))")
    token = json.loads(page.evaluate(
        f"() => localStorage.getItem('rrsite:blind:{SURVEY}')"))["token"]
    assert code in stored and token["sig"] in stored  # kept until the respondent forgets
    page.click("#rr-forget")
    page.wait_for_selector("#rr-answered:not([hidden])")  # "answered here", nothing shown
    wait_until(lambda: code not in page.evaluate(
        "() => JSON.stringify(Object.assign({}, localStorage))"), 10, "the code forgotten")
    left = page.evaluate("() => JSON.stringify(Object.assign({}, localStorage))")
    assert code not in left and token["sig"] not in left and token["msg"] not in left, left
    assert code not in page.url  # nor in the address bar
