"""An online panel's link answered in Chromium, Firefox and WebKit, audited from the server side.

The Prolific-style survey of tests/browser/fielding/prolific.md, its way back pointed at the
recording proxy (`/__panel`), opened with `?PROLIFIC_PID=...&STUDY_ID=...&SESSION_ID=...`. With
the collector's answer held back 1.5 s by the proxy: the page goes back to the panel with the
completion code only after that answer reached it; the participant id is in no request the server
saw but the page's own (no body, no other path, no header: no Referer), in nothing the page keeps
on the device, and nowhere in the collector's SQLite files, which hold the completion digest.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from typing import Any
from urllib.parse import urlsplit

from browserkit import STORAGE_DUMP as STORAGE
from conftest import EngineSite
from drivers import Driver

PID = "5f1a2b3c4d5e6f7a8b9c0d1e"
HOLD_S = 1.5
READY_TIMEOUT_S = 120
STORAGE_DUMP = f"({STORAGE})()"
ANSWER = """(() => {
  document.querySelector("#q-enrolled input[value=yes]").click();
  document.querySelector("#q-cheated input[data-truth][value=yes]").click();
  return true;
})()"""


def wait_across_navigation(engine: Driver, expression: str, timeout_s: float, what: str) -> Any:
    """`engine.wait`, but an evaluation cut short by the page's navigation is tried again."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            value = engine.eval(expression)
        except Exception as error:  # the page moved on while the script ran
            if "navigat" not in str(error).lower() and "destroyed" not in str(error).lower():
                raise
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{engine.name}: timed out waiting for {what}")
        time.sleep(0.1)


def test_a_panel_link_returns_after_the_acknowledgement_and_keeps_the_id(
        engine: Driver, engine_site: EngineSite) -> None:
    site, recorder = engine_site, engine_site.recorder
    sid = site.ids["prolific.md"]
    engine.new_context()
    start = recorder.mark()
    query = f"?PROLIFIC_PID={PID}&STUDY_ID=st1&SESSION_ID=se1"
    engine.goto(site.page_url(sid) + query)
    engine.wait("!!document.querySelector('#rr-submit:not([disabled])')", 30, "the form")
    assert engine.eval("document.documentElement.dataset.rrPanel") == "ready"
    state = engine.wait("['ready', 'failed'].includes(document.documentElement.dataset.rrRuntime)"
                        " && document.documentElement.dataset.rrRuntime", READY_TIMEOUT_S,
                        "the randomizer")
    assert state == "ready"
    assert engine.eval(ANSWER) is True
    engine.click("#rr-submit")
    engine.wait("!!document.querySelector('#rr-review:not([hidden])')", 60, "the review")
    recorder.hold_submissions = HOLD_S
    try:
        engine.click("#rr-confirm")
        wait_across_navigation(engine, "location.pathname.startsWith('/__panel')", 60,
                               "the way back")
    finally:
        recorder.hold_submissions = 0.0
    seen = recorder.since(start)
    posts = [r for r in seen if r.method == "POST"]
    assert len(posts) == 1 and posts[0].path.startswith("/api/submissions")
    back = [r for r in seen if r.path.startswith("/__panel")]
    assert [r.path for r in back] == ["/__panel/complete?cc=C1A2B3C4"]
    assert back[0].at >= posts[0].answered > 0  # after the acknowledgement reached the page
    assert posts[0].answered - posts[0].at >= HOLD_S
    body = json.loads(posts[0].body)
    assert set(body) == {"survey", "version", "respondent", "answers", "completion"}
    digest = hashlib.sha256(f"rrsite-completion\n{sid}\n{PID}".encode()).hexdigest()
    assert body["completion"] == digest
    # the id: only in the page's own address, as the panel wrote it
    for request in seen:
        if request.method == "GET" and request.path == f"/{sid}/{query}":
            assert PID not in repr(request.headers) and request.body == ""
            continue
        assert PID not in request.text(), (request.method, request.path)
    engine.goto(site.page_url(sid))  # the site's origin again, to read what it keeps
    engine.wait("!!document.querySelector('#rr-submit')", 30, "the page")
    assert PID not in engine.eval(STORAGE_DUMP)
    db = site.dist.parent / "collector.db"
    assert all(PID.encode() not in path.read_bytes()
               for path in db.parent.glob(db.name + "*"))
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        row = connection.execute("SELECT digests FROM completion_sets WHERE survey = ?",
                                 (sid,)).fetchone()
    finally:
        connection.close()
    assert row is not None and bytes.fromhex(digest) in row[0]
    assert engine.errors() == []
    assert urlsplit(site.url).hostname == "127.0.0.1"  # the panel is another origin
