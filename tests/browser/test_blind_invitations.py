"""Blind invitations in Chromium: the page trades its code for a blind-signed token when it opens
(RFC 9474 in rrsite.core.blind, inside Pyodide), and the submission carries the token, never the
code. A collector of its own (`rrsite serve --blind-key`) serves the already built site.

The page checks the key itself: a key whose id (computed from n and e) is not the link's is
refused before anything is sent, however the collector labels it; and "Forget my answers" leaves
neither the code nor the token on the device."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from browserkit import (
    Site,
    Watch,
    blind_collector,
    blind_settled,
    invitation_code,
    open_link,
    wait_until,
)
from playwright.sync_api import BrowserContext
from respondent import answer_and_send, fill, plan_answers

pytestmark = pytest.mark.fresh_profile  # forgetting, and a spent code in a fresh browser

SURVEY = "honor-code"


@pytest.fixture(scope="module")
def blind_site(site: Site, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path,
                                                                                      list[str]]]:
    """(url, database, links): a second collector on the same built site, with blind codes."""
    with blind_collector(site.dist, tmp_path_factory.mktemp("blind"), SURVEY, 5) as collector:
        yield collector


def test_blind_survey_submits_a_token_and_never_the_code(
        site: Site, blind_site: tuple[str, Path, list[str]], context: BrowserContext,
        watch: Watch) -> None:
    url, db, fragments = blind_site
    fragment = fragments[0]
    code = invitation_code(fragment)
    manifest = site.manifest(SURVEY)
    page, state = open_link(context, url, SURVEY, fragment)
    assert state == "ready"  # the trade happens when the survey opens, before any answer
    trades = watch.posts("/api/blind-sign")
    assert len(trades) == 1
    trade = json.loads(trades[0].body or "{}")
    assert trade["invitation"] == code and set(trade) == {"survey", "invitation", "blinded_msg"}

    answer_and_send(page, manifest, plan_answers(manifest, 0))

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
    _, state = open_link(context, url, SURVEY, fragments[1])
    assert state in ("ready", "failed")
    second = context.browser.new_context()  # type: ignore[union-attr]
    try:
        _, state = open_link(second, url, SURVEY, fragments[1])
        assert state == "failed"  # the second trade
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
    assert blind_settled(page) == "wrong-key"
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
    code = invitation_code(fragment)
    manifest = site.manifest(SURVEY)
    page, state = open_link(context, url, SURVEY, fragment)
    assert state in ("ready", "failed")
    answer_and_send(page, manifest, plan_answers(manifest, 2))
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
