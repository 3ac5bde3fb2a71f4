"""`rrsite preview` in Chromium: a save reloads the page, a bad save shows its errors."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from browserkit import ROOT, running, wait_ready, watch_context
from playwright.sync_api import Browser
from respondent import fill, plan_answers

SURVEYS = ROOT / "surveys"


@pytest.fixture
def preview(tmp_path: Path) -> Iterator[tuple[str, Path, subprocess.Popen[str]]]:
    """`rrsite preview` of copies of two example surveys (one of them posts to Netlify)."""
    folder = tmp_path / "surveys"
    folder.mkdir()
    for name in ("clinic-visit.md", "cheating-partner.md"):
        (folder / name).write_bytes((SURVEYS / name).read_bytes())
    with running("preview", folder, "--port", "0", stderr=subprocess.PIPE) as started:
        yield started[0], folder, started[1]


def line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


def test_preview_reloads_after_a_save_and_shows_errors(
        preview: tuple[str, Path, subprocess.Popen[str]], browser: Browser) -> None:
    url, folder, process = preview
    context = browser.new_context()
    watch = watch_context(context)
    page = context.new_page()
    page.goto(f"{url}clinic-visit/")
    page.wait_for_selector("#rr-submit:not([disabled])", state="attached")
    page.evaluate("() => { window.__rrBeforeSave = true; }")

    source = folder / "clinic-visit.md"
    text = source.read_text(encoding="utf-8").replace("## How old are you?",
                                                      "## What is your age group?")
    source.write_text(text, encoding="utf-8")
    page.wait_for_function("() => !window.__rrBeforeSave && "
                           "document.body.textContent.includes('What is your age group?')",
                           timeout=30_000)

    broken = text.replace("options: [18-34", "opshuns: [18-34")
    source.write_text(broken, encoding="utf-8")
    line = line_of(broken, "opshuns:")
    box = page.locator("#rr-preview-errors")
    box.wait_for(timeout=30_000)
    assert f"{source}:{line}: unknown key 'opshuns'" in box.inner_text()
    # The last good build stays: same page, nothing reloaded.
    assert "What is your age group?" in page.locator("#q-age").inner_text()

    page.evaluate("() => { window.__rrBeforeFix = true; }")
    source.write_text(text.replace("Clinic visit study\n", "Clinic visit study, fixed\n", 1),
                      encoding="utf-8")
    page.wait_for_function("() => !window.__rrBeforeFix", timeout=30_000)
    page.wait_for_selector("#rr-submit:not([disabled])", state="attached")
    assert page.locator("#rr-preview-errors").count() == 0
    assert page.title() == "Clinic visit study, fixed"
    watch.assert_clean()
    context.close()

    process.terminate()
    _, stderr = process.communicate(timeout=15)
    assert f"{source}:{line}: unknown key 'opshuns'" in stderr


def test_preview_answers_every_target_with_the_local_collector(
        preview: tuple[str, Path, subprocess.Popen[str]], browser: Browser) -> None:
    url, _, _ = preview
    context = browser.new_context()
    manifest = context.request.get(f"{url}cheating-partner/survey.json").json()
    assert manifest["submit"] == {"to": "collector", "url": "/api/submissions"}
    # What the page would send (any valid answers): the local collector stores it.
    answers: dict[str, object] = {}
    for q in manifest["questions"]:
        if q["type"] in ("yes-no", "choice"):
            answers[q["id"]] = q["values"][0]
        elif q["type"] == "multi-choice":
            answers[q["id"]] = q["values"][:1]
        elif q["type"] == "number":
            answers[q["id"]] = q.get("min") or 1
        else:
            answers[q["id"]] = "preview"
    body = {"survey": manifest["id"], "version": manifest["version"],
            "respondent": "preview-respondent-0000000001", "answers": answers}
    response = context.request.post(f"{url}api/submissions", data=body)
    assert response.status == 201, response.text()
    # And the page itself, answered to the end (this survey posts to Netlify when deployed).
    watch = watch_context(context)
    page = context.new_page()
    page.goto(f"{url}cheating-partner/")
    page.wait_for_selector("#rr-submit:not([disabled])", state="attached")
    wait_ready(page)
    fill(page, manifest, plan_answers(manifest, 0))
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])", timeout=60_000)
    with page.expect_response("**/api/submissions") as sent:
        page.click("#rr-confirm")
    assert sent.value.status == 201
    page.wait_for_selector("#rr-done:not([hidden])")
    assert [r.method for r in watch.posts()] == ["POST"]
    watch.assert_clean()
    context.close()
