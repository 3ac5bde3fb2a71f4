"""End to end: build an example survey, serve it with `rrsite serve`, answer it in Chromium,
export the database, find the submission in the CSV exactly as the page showed it would be sent."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rrsite.cli import main
from rrsite.spreadsheet import restore

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """surveys/honor-code.md built by `rrsite build` (once for this module)."""
    root = tmp_path_factory.mktemp("e2e")
    surveys = root / "surveys"
    surveys.mkdir()
    shutil.copy(ROOT / "surveys" / "honor-code.md", surveys)
    dist = root / "dist"
    subprocess.run([sys.executable, "-m", "rrsite", "build", str(surveys), "-o", str(dist)],
                   check=True, cwd=ROOT, timeout=300, capture_output=True)
    return dist


def answer(page, question: dict) -> None:
    """Answer one question through the form, as a respondent would."""
    qid = f"q-{question['id']}"
    if question["type"] in ("yes-no", "choice", "multi-choice"):
        page.locator(f"#{qid} label").first.click()
    elif question["type"] == "number":
        low = question.get("min")
        page.locator(f"#{qid}-input").fill(str(int(low) + 1 if low is not None else 3))
    else:
        page.locator(f"#{qid}-input").fill("end to end, ünïcode ✓")


def test_answer_in_chromium_and_export(built, tmp_path, kit, playwright):
    dist = built
    manifest = json.loads((dist / "honor-code" / "survey.json").read_text())
    assert manifest["submit"]["to"] == "collector"
    db = tmp_path / "collector.db"

    problems: list[str] = []
    with kit.Server(dist, db) as server:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                             args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
                    if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("response", lambda r: problems.append(f"{r.status} {r.url}")
                    if r.status >= 400 else None)
            # the responses are kept and read once the thanks show, before the browser closes
            # (reading a body inside the listener raced with the close)
            responses: list[Any] = []
            page.on("response", lambda r: responses.append(r)
                    if r.url.endswith("/api/submissions") else None)
            page.goto(server.url + "/honor-code/")
            for question in manifest["questions"]:
                answer(page, question)
            page.locator("#rr-submit").click()
            page.locator("#rr-review").wait_for(state="visible", timeout=60_000)
            shown = json.loads(page.locator("#rr-body").text_content() or "")  # behind a disclosure
            page.locator("#rr-confirm").click()
            page.locator("#rr-done").wait_for(state="visible", timeout=30_000)
            posted = [(r.status, r.text()) for r in responses]
        finally:
            browser.close()

    assert problems == []
    assert posted == [(201, '{"status":"stored"}')]
    assert shown["survey"] == "honor-code" and shown["version"] == manifest["version"]
    assert set(shown["answers"]) == {q["id"] for q in manifest["questions"]}

    out = tmp_path / "export.csv"
    assert main(["export", "--db", str(db), "-o", str(out)]) == 0
    with open(out, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == ["survey", "version", "respondent", "submitted_at",
                                     *(q["id"] for q in manifest["questions"])]
        rows = list(reader)
    assert len(rows) == 1
    row = rows[0]
    assert restore(row["respondent"]) == shown["respondent"]
    for qid, value in shown["answers"].items():
        assert row[qid] == (value if isinstance(value, str)
                            else json.dumps(value, separators=(",", ":"))), qid


def test_a_returning_respondent_downloads_nothing_of_pyodide_again(
    built, tmp_path, kit, playwright
):
    """The immutable caching of /_rr/ works in a real browser profile (persistent context).

    After the first visit the whole `_rr/` folder is moved away, so on the second visit any
    request for the runtime that reaches the server fails (404): the randomizer can only become
    ready again if every asset, the worker's wasm and standard library included, came from cache.
    """
    dist = built
    visits: list[list[tuple[str, int]]] = [[], []]
    with kit.Server(dist, tmp_path / "c.db") as server:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        away = dist.parent / "_rr.away"
        try:
            page = context.new_page()
            current = [0]
            # context-level events include the module worker's requests
            context.on("response", lambda r: visits[current[0]].append((r.url, r.status)))
            for visit in (0, 1):
                current[0] = visit
                if visit == 1:
                    (dist / "_rr").rename(away)
                page.goto(f"{server.url}/honor-code/?visit={visit}")
                page.locator('html[data-rr-runtime="ready"]').wait_for(
                    state="attached", timeout=60_000)
        finally:
            if away.exists():
                away.rename(dist / "_rr")
            context.close()
    first = {url for url, _ in visits[0] if "/_rr/" in url}
    assert any(url.endswith("pyodide.asm.wasm") for url in first)
    assert any(url.endswith("python_stdlib.zip") for url in first)
    second = [(url, status) for url, status in visits[1] if "/_rr/" in url]
    assert {url for url, _ in second} >= {url for url in first if "pyodide" in url}
    assert [(url, status) for url, status in second if status != 200] == []


def test_invitation_link_in_chromium(built, tmp_path, kit, playwright):
    """A personal link's code (in the fragment) reaches the collector with the submission, is
    accepted once, and is never in any URL the browser requested."""
    dist = built
    manifest = json.loads((dist / "honor-code" / "survey.json").read_text())
    db = tmp_path / "collector.db"
    codes = tmp_path / "codes.csv"
    with kit.Server(dist, db) as server:
        assert main(["invite", "--survey", "honor-code", "-n", "2", "--url",
                     server.url + "/honor-code/", "-o", str(codes), "--db", str(db)]) == 0
        with open(codes, newline="") as handle:
            first = next(csv.DictReader(handle))
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                             args=CHROMIUM_ARGS)
        requested: list[str] = []
        posted: list[tuple[int, dict]] = []
        try:
            for attempt in range(2):  # the same link twice, in fresh browser contexts
                page = browser.new_context().new_page()
                page.on("request", lambda r: requested.append(r.url))
                page.on("response", lambda r: posted.append(
                    (r.status, json.loads(r.request.post_data or "{}")))
                    if r.url.endswith("/api/submissions") else None)
                page.goto(first["link"])
                for question in manifest["questions"]:
                    answer(page, question)
                page.locator("#rr-submit").click()
                page.locator("#rr-review").wait_for(state="visible", timeout=60_000)
                page.locator("#rr-confirm").click()
                done = "#rr-done" if attempt == 0 else "#rr-send-error"
                page.locator(done).wait_for(state="visible", timeout=30_000)
        finally:
            browser.close()
    assert [status for status, _ in posted] == [201, 403]
    assert all(body["invitation"] == first["code"] for _, body in posted)
    assert not any(first["code"] in url.split("#")[0] for url in requested)
