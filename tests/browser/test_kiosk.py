"""Kiosk mode (issue 11) in Chromium: three respondents in a row on one page, offline for the
second, all three arriving exactly once, and nothing of one respondent left for the next."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from browserkit import ROOT, wait_ready, watch_context
from playwright.sync_api import Browser, Page
from respondent import agree_to_consent, go_to_page

SURVEY = "clinic-visit"


@pytest.fixture(scope="module")
def kiosk_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """surveys/clinic-visit.md with `mode: kiosk`, built and served by `rrsite serve`."""
    root = tmp_path_factory.mktemp("kiosk")
    text = (ROOT / "surveys" / "clinic-visit.md").read_text(encoding="utf-8")
    source = root / "clinic-visit.md"
    source.write_text(text.replace("language: en\n", "language: en\nmode: kiosk\n", 1),
                      encoding="utf-8")
    dist = root / "dist"
    subprocess.run([sys.executable, "-m", "rrsite", "build", str(source), "-o", str(dist),
                    "--no-compress"], check=True, cwd=ROOT, timeout=600, capture_output=True)
    db = root / "kiosk.db"
    process = subprocess.Popen(
        [sys.executable, "-m", "rrsite", "serve", str(dist), "--port", "0", "--db", str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    try:
        assert process.stdout is not None
        match = re.search(r"http://127\.0\.0\.1:\d+/", process.stdout.readline())
        assert match
        yield match.group(0), root
    finally:
        process.terminate()
        process.wait(timeout=15)


def storage(page: Page) -> str:
    return page.evaluate("""() => JSON.stringify([Object.entries(localStorage),
                                                   Object.entries(sessionStorage)])""")


def queue(page: Page) -> list[dict]:
    raw = page.evaluate(f"() => localStorage.getItem('rrsite:queue:{SURVEY}')")
    return json.loads(raw) if raw else []


def answer(page: Page, visited: str, truth: str, age: str) -> None:
    agree_to_consent(page)
    go_to_page(page, 1)
    page.check(f"#q-visited input[value='{visited}']")
    if visited == "yes":
        page.check("#q-visits input[value='once']")
    go_to_page(page, 2)
    page.check(f"#q-shared_medicine input[value='{truth}']")
    go_to_page(page, 3)
    page.check(f"#q-age input[value='{age}']")
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])", timeout=60_000)
    page.click("#rr-confirm")
    page.wait_for_selector("#rr-kiosk-next")
    assert page.locator("#rr-done").is_visible()


def blank_for_the_next(page: Page, previous_tokens: list[str]) -> None:
    """What respondent n+1 sees and what the device holds: nothing of respondent n."""
    page.click("#rr-kiosk-next")
    page.wait_for_selector("#rr-consent-agree")
    assert page.locator("#rr-form").evaluate("(form) => form.inert") is True
    assert page.locator("#rr-form input:checked").count() == 0
    assert page.locator("#rr-form textarea, #rr-form input[type=text]").evaluate_all(
        "(inputs) => inputs.every((input) => input.value === '')")
    html = page.content()
    stored = storage(page)
    for token in previous_tokens:
        assert token not in html, "a previous respondent's token is in the page"
    assert page.locator("#rr-body").inner_text() == ""
    assert page.locator("#rr-transcript li").count() == 0
    assert f"rrsite:{SURVEY}:" not in stored, "a stored report outlived its respondent"
    assert "rrsite:draft" not in stored and "rrsite:consent" not in stored
    agree_to_consent(page)
    assert page.locator("#rr-page-label").inner_text() == "Page 1 of 3"


def health(url: str) -> dict:
    with urllib.request.urlopen(f"{url}api/health", timeout=10) as response:
        return json.load(response)


def test_three_respondents_one_offline_all_arrive_once(
        kiosk_site: tuple[str, Path], browser: Browser) -> None:
    url, root = kiosk_site
    assert health(url)["submissions"] == 0
    context = browser.new_context()
    watch = watch_context(context)
    page = context.new_page()
    page.goto(f"{url}{SURVEY}/")
    page.wait_for_selector("#rr-submit:not([disabled])")
    wait_ready(page)

    # Respondent 1, online: sent at once.
    answer(page, "yes", "yes", "18-34")
    page.wait_for_function("() => document.documentElement.dataset.rrQueue === '0'")
    first = [json.loads(r.body or "{}") for r in watch.posts("/api/submissions")]
    assert len(first) == 1
    tokens = [first[0]["respondent"]]
    assert queue(page) == []
    blank_for_the_next(page, tokens)

    # Respondent 2, offline: the report waits in the queue, holding only what is sent.
    context.set_offline(True)
    answer(page, "no", "no", "55 or older")
    [entry] = queue(page)
    body = json.loads(entry["payload"])
    assert set(body) == {"survey", "version", "respondent", "answers"}
    assert body["answers"]["visited"] == "no" and "visits" not in body["answers"]
    assert page.locator("#rr-kiosk-status").inner_text() == "Waiting for a connection to send: 1"
    tokens.append(body["respondent"])
    blank_for_the_next(page, tokens[:1])

    # Respondent 3, back online, then a reload: the queue survives it and drains.
    context.set_offline(False)
    answer(page, "yes", "no", "35-54")
    page.reload()
    page.wait_for_selector("#rr-submit:not([disabled])")
    page.wait_for_function("() => document.documentElement.dataset.rrQueue === '0'",
                           timeout=30_000)
    assert queue(page) == []
    assert health(url)["submissions"] == 3
    sent = [json.loads(r.body or "{}")["respondent"] for r in watch.posts("/api/submissions")]
    assert tokens[1] in sent and len(set(sent)) == 3

    export = root / "export.jsonl"
    subprocess.run([sys.executable, "-m", "rrsite", "export", "--db", str(root / "kiosk.db"),
                    "-o", str(export)], check=True, cwd=ROOT, timeout=120, capture_output=True)
    rows = [json.loads(line) for line in export.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 3 and len({row["respondent"] for row in rows}) == 3
    assert sorted(row["answers"]["age"] for row in rows) == ["18-34", "35-54", "55 or older"]
    errors = [e for e in watch.errors if "ERR_INTERNET_DISCONNECTED" not in e]
    assert errors == []
    context.close()
