"""Declining consent stops the randomizer's runtime: no byte of it is fetched after the click.

The runtime starts downloading when the page opens, while the consent is read. The first test
serves the built site from a small server that sends the runtime's large files slowly, in
chunks, and logs every chunk it writes, so that Pyodide's wasm is still downloading when "I do
not agree" is pressed; the server's log must then show no runtime byte written after the click
(a grace of one second for the browser to close the connections), and the browser's log no
runtime request started after it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from browserkit import Site, Watch, wait_ready
from playwright.sync_api import BrowserContext, Request
from respondent import fill, plan_answers, ready_to_submit

from rrsite.collect.static import HeaderRules, media_type

pytestmark = pytest.mark.fresh_profile  # the runtime's first download, cut by declining consent

SURVEY = "clinic-visit"  # asks for consent first
#: Bytes per second the slow server sends each response at, and its chunk size.
SLOW_RATE = 300_000
CHUNK = 16_384
#: The files sent slowly: the runtime's large ones (the wasm, the standard library, the core).
SLOW_SUFFIXES = {".wasm", ".zip"}
#: Seconds the browser gets to close its connections after the click.
GRACE_S = 1.0


@dataclass
class Written:
    """One chunk the server wrote: when, for which path, how many bytes."""

    at: float
    path: str
    size: int


class SlowSite(ThreadingHTTPServer):
    """Serves a built site (uncompressed, `_headers` applied) at SLOW_RATE, logging every chunk."""

    daemon_threads = True

    def __init__(self, root: Path) -> None:
        super().__init__(("127.0.0.1", 0), SlowHandler)
        self.root = root.resolve()
        self.rules = HeaderRules(root / "_headers")
        self.slow = True
        self.lock = threading.Lock()
        self.written: list[Written] = []
        self.aborted: list[tuple[float, str]] = []

    @property
    def url(self) -> str:
        """The site's base URL."""
        return f"http://127.0.0.1:{self.server_address[1]}/"


class SlowHandler(BaseHTTPRequestHandler):
    """GET a file of the site, in chunks."""

    protocol_version = "HTTP/1.1"
    server: SlowSite

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def do_GET(self) -> None:  # noqa: N802
        path = unquote(urlsplit(self.path).path)
        target = (self.server.root / path.lstrip("/")).resolve()
        if target.is_dir():
            target = target / "index.html"
        if not target.is_relative_to(self.server.root) or not target.is_file():
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = target.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", media_type(target.name))
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in self.server.rules.headers_for(path):
            if name.lower() != "cache-control":
                self.send_header(name, value)
        self.end_headers()
        try:
            for start in range(0, len(body), CHUNK):
                chunk = body[start:start + CHUNK]
                self.wfile.write(chunk)
                self.wfile.flush()
                with self.server.lock:
                    self.server.written.append(Written(time.monotonic(), path, len(chunk)))
                if self.server.slow and target.suffix in SLOW_SUFFIXES:
                    time.sleep(len(chunk) / SLOW_RATE)
        except (BrokenPipeError, ConnectionResetError):
            with self.server.lock:
                self.server.aborted.append((time.monotonic(), path))
            self.close_connection = True


@pytest.fixture
def slow_site(site: Site) -> Iterator[SlowSite]:
    """The browser tests' built site, served slowly by a server that logs what it writes."""
    server = SlowSite(site.dist)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def is_runtime(url: str) -> bool:
    """A file of the randomizer's runtime: Pyodide's files and rrsite/core's bundle."""
    return "/_rr/pyodide-" in url or "/_rr/core." in url


@dataclass
class NetworkLog:
    """When each runtime request started, finished or failed (time.monotonic())."""

    started: dict[str, float] = field(default_factory=dict)
    finished: dict[str, float] = field(default_factory=dict)
    failed: dict[str, float] = field(default_factory=dict)

    def watch(self, context: BrowserContext) -> None:
        """Record the context's runtime requests (the page's and its worker's)."""
        def note(log: dict[str, float]) -> object:
            def record(request: Request) -> None:
                if is_runtime(request.url):
                    log.setdefault(request.url, time.monotonic())
            return record

        context.on("request", note(self.started))
        context.on("requestfinished", note(self.finished))
        context.on("requestfailed", note(self.failed))


def test_declining_consent_stops_the_runtime_and_reopening_works(
        slow_site: SlowSite, site: Site, context: BrowserContext, watch: Watch) -> None:
    log = NetworkLog()
    log.watch(context)
    page = context.new_page()
    page.goto(f"{slow_site.url}{SURVEY}/")
    page.wait_for_selector("#rr-consent-decline")
    # The runtime starts while the consent is read: the wasm is requested before any answer.
    # (polled with the page's own timer: Playwright's sync API delivers the request events only
    # while one of its calls runs, never during a time.sleep)
    deadline = time.monotonic() + 60
    while not any(url.endswith("pyodide.asm.wasm") for url in log.started):
        assert time.monotonic() < deadline, "timed out waiting for the wasm request"
        page.wait_for_timeout(50)
    page.wait_for_timeout(1500)
    wasm = next(url for url in log.started if url.endswith("pyodide.asm.wasm"))
    wasm_path = urlsplit(wasm).path
    assert wasm not in log.finished, "the server was not slow enough to decline mid-download"

    clicked = time.monotonic()
    page.click("#rr-consent-decline")
    page.wait_for_timeout(4000)

    assert page.evaluate("() => document.documentElement.dataset.rrRuntime") == "stopped"
    assert not page.locator("#rr-runtime").is_visible()
    # The browser's log: no runtime request after the click, none completed after it.
    late = [url for url, at in log.started.items() if at > clicked]
    assert late == [], f"runtime requests started after declining: {late}"
    completed = [url for url, at in log.finished.items() if at > clicked]
    assert completed == [], f"runtime downloads completed after declining: {completed}"
    # The server's log: the wasm was cut off mid-way, and nothing of the runtime was written
    # once the browser had had a second to close its connections.
    with slow_site.lock:
        written = list(slow_site.written)
        aborted = list(slow_site.aborted)
    sent_wasm = sum(w.size for w in written if w.path == wasm_path)
    size = (site.dist / wasm_path.lstrip("/")).stat().st_size
    assert 0 < sent_wasm < size / 2
    assert any(path == wasm_path and at > clicked for at, path in aborted)
    after = [w for w in written if is_runtime(w.path) and w.at > clicked + GRACE_S]
    assert after == [], f"{sum(w.size for w in after)} runtime bytes written after declining"
    assert watch.posts() == []

    # Re-opened (now at full speed): consent is asked again, and agreeing starts the runtime.
    slow_site.slow = False
    page.reload()
    page.wait_for_selector("#rr-consent-agree")
    manifest = site.manifest(SURVEY)
    fill(page, manifest, plan_answers(manifest, 0))
    wait_ready(page)
    ready_to_submit(page)
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])")
    watch.assert_clean()


def test_declining_then_agreeing_in_the_same_page_starts_the_runtime_again(
        site: Site, context: BrowserContext, watch: Watch) -> None:
    """A kiosk asks the next respondent again: after a decline, "I agree" restarts the runtime."""
    page = context.new_page()
    page.goto(site.page_url(SURVEY))
    page.wait_for_selector("#rr-consent-decline")
    page.click("#rr-consent-decline")
    assert page.evaluate("() => document.documentElement.dataset.rrRuntime") == "stopped"
    page.evaluate("() => document.dispatchEvent(new CustomEvent('rrsite:reset'))")
    page.click("#rr-consent-agree")
    wait_ready(page)
    manifest = site.manifest(SURVEY)
    fill(page, manifest, plan_answers(manifest, 1))
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])")
    assert watch.posts() == []
    watch.assert_clean()
