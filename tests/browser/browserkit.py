"""Shared helpers of the browser tests: the site, the recorder of requests and errors, pages."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import BrowserContext, Page, Request

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
READY_TIMEOUT_MS = 90_000
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"

# Installed before any page script: CSP violations of the page are recorded for the test.
WATCH_SCRIPT = """
window.__rrViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__rrViolations.push(`${event.violatedDirective} ${event.blockedURI}`);
});
"""


def front_matter_id(file: Path) -> str:
    """The `id:` of a survey file's front matter."""
    for line in file.read_text(encoding="utf-8").splitlines()[1:]:
        if line.startswith("id:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"{file}: no id in the front matter")


def survey_files() -> list[Path]:
    """Every survey the site is built from: the examples, then the target tests."""
    return sorted((ROOT / "surveys").glob("*.md")) + sorted((HERE / "surveys").glob("*.md"))


@dataclass
class Site:
    """The built site and the running collector that serves it."""

    dist: Path
    url: str
    db: Path
    #: survey id by source file name, read from the copies that were built (the repository's
    #: surveys/ may change while the tests run)
    ids: dict[str, str] = field(default_factory=dict)

    def manifest(self, survey_id: str) -> dict[str, Any]:
        """survey.json of a built survey."""
        return json.loads((self.dist / survey_id / "survey.json").read_text(encoding="utf-8"))

    def page_url(self, survey_id: str) -> str:
        """The page of a survey."""
        return f"{self.url}{survey_id}/"

    @property
    def origin(self) -> str:
        """scheme://host:port of the server."""
        return self.url.rstrip("/")




#: The operator's secret of the tests' collectors: `/api/health` counts submissions only for it.
OPERATOR_TOKEN = "operator-token-of-the-browser-tests"
OPERATOR_HEADERS = {"authorization": f"Bearer {OPERATOR_TOKEN}"}


def operator_token_file(folder: Path) -> Path:
    """A file holding OPERATOR_TOKEN for `rrsite serve --operator-token` (mode 0600)."""
    path = folder / "operator-token"
    path.write_text(OPERATOR_TOKEN, encoding="utf-8")
    path.chmod(0o600)
    return path


@contextmanager
def serve_surveys(files: Sequence[Path], root: Path) -> Iterator[Site]:
    """Build copies of ``files`` under ``root`` and serve them with `rrsite serve` (a free port)."""
    sources = root / "surveys"
    sources.mkdir()
    ids = {}
    for file in files:
        copy = sources / file.name
        copy.write_bytes(file.read_bytes())
        ids[file.name] = front_matter_id(copy)
    dist = root / "dist"
    subprocess.run([sys.executable, "-m", "rrsite", "build", str(sources), "-o", str(dist)],
                   check=True, cwd=ROOT, timeout=600, capture_output=True)
    db = root / "collector.db"
    process = subprocess.Popen(
        [sys.executable, "-m", "rrsite", "serve", str(dist), "--port", "0", "--db", str(db),
         "--operator-token", str(operator_token_file(root))],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert match, f"rrsite serve did not start: {line!r}"
        yield Site(dist, match.group(0), db, ids)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@dataclass
class Sent:
    """One request, as the browser made it."""

    method: str
    url: str
    headers: dict[str, str]
    body: str | None

    def text(self) -> str:
        """URL, headers and body as one string, for looking for things that must not be there."""
        return "\n".join([self.url, json.dumps(self.headers), self.body or ""])


@dataclass
class Watch:
    """What a context saw: requests, console errors, page errors, CSP violations."""

    requests: list[Sent] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    pages: list[Page] = field(default_factory=list)

    def record(self, request: Request) -> None:
        """Called for every request of the context (pages and workers)."""
        try:
            body = request.post_data
        except Exception:  # binary bodies: keep them as latin-1 text
            raw = request.post_data_buffer
            body = raw.decode("latin-1") if raw else None
        self.requests.append(Sent(request.method, request.url, dict(request.headers), body))

    def posts(self, path_part: str = "") -> list[Sent]:
        """The POST requests whose URL contains ``path_part``."""
        return [r for r in self.requests if r.method == "POST" and path_part in r.url]

    def violations(self) -> list[str]:
        """CSP violations reported in every page of the context."""
        found: list[str] = []
        for page in self.pages:
            if not page.is_closed():
                found.extend(page.evaluate("() => window.__rrViolations || []"))
        return found

    def assert_clean(self) -> None:
        """No console error, no page error, no CSP violation."""
        assert self.errors == []
        assert self.violations() == []


def watch_context(context: BrowserContext) -> Watch:
    """Record everything the context does."""
    watch = Watch()
    context.add_init_script(WATCH_SCRIPT)
    context.on("request", watch.record)

    def on_page(page: Page) -> None:
        watch.pages.append(page)
        page.on("console", lambda m: watch.errors.append(f"console: {m.text}")
                if m.type == "error" else None)
        page.on("pageerror", lambda e: watch.errors.append(f"page error: {e}"))

    context.on("page", on_page)
    return watch




def wait_ready(page: Page) -> None:
    """Until the randomizer worker has started (or failed: the test then fails here)."""
    page.wait_for_selector("html[data-rr-runtime=ready], html[data-rr-runtime=failed]",
                           state="attached", timeout=READY_TIMEOUT_MS)
    state = page.evaluate("() => document.documentElement.dataset.rrRuntime")
    assert state == "ready", page.locator("#rr-runtime-text").inner_text()


def open_survey(context: BrowserContext, site: Site, survey_id: str, ready: bool = True) -> Page:
    """A new page with the survey loaded (and its randomizer started, unless ``ready=False``)."""
    page = context.new_page()
    page.goto(site.page_url(survey_id))
    page.wait_for_selector("#rr-submit:not([disabled])", state="attached", timeout=30_000)
    if ready:
        wait_ready(page)
    return page


def axe_source() -> str:
    """axe-core, to evaluate in a page (a script tag would be refused by the page's CSP)."""
    return AXE.read_text(encoding="utf-8")


def wait_until(condition: Any, timeout_s: float = 30.0, what: str = "condition") -> None:
    """Poll a Python condition (bounded in time)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")
