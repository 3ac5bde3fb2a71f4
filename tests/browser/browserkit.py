"""Shared helpers of the browser tests: the site, the recorder of requests and errors, pages."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import Browser, BrowserContext, Page, Playwright, Request

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CHROMIUM = "/usr/bin/chromium"
#: Debian's Chromium as a respondent's browser runs: headless, nothing in the background.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
#: The browser tests' Chromium: V8 runs WebAssembly on its baseline compiler (Liftoff) only. By
#: default V8 recompiles the interpreter's hot functions with its optimizing compiler on background
#: threads while the page runs; a test's page lives a few seconds, so that work (0.3-0.4 CPU-s per
#: randomizer start, measured per thread) is never repaid, and it took the processor from the
#: other worker's tests. What the page computes is the same on either tier (WebAssembly's results
#: do not depend on the compiler); the cross-engine tests (tests/engines) and the benchmarks run
#: Chromium's default tiers.
TEST_CHROMIUM_ARGS = [*CHROMIUM_ARGS, "--js-flags=--liftoff-only"]
READY_TIMEOUT_MS = 90_000
VIEWPORT = {"width": 1000, "height": 900}
RRSITE = [sys.executable, "-m", "rrsite"]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"

# Installed before any page script: CSP violations of the page are recorded for the test.
WATCH_SCRIPT = """
window.__rrViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__rrViolations.push(`${event.violatedDirective} ${event.blockedURI}`);
});
"""

# Everything a page keeps on the device, as one text: every key and value of localStorage and
# sessionStorage, the cookies, the names of IndexedDB databases and Cache Storage caches. A
# function for Playwright's `evaluate`; call it, `f"({STORAGE_DUMP})()"`, where an expression is
# wanted (tests/engines).
STORAGE_DUMP = """async () => {
  const dump = [];
  for (const store of [localStorage, sessionStorage]) {
    for (let i = 0; i < store.length; i++) dump.push(store.key(i), store.getItem(store.key(i)));
  }
  dump.push(document.cookie);
  if (indexedDB.databases) dump.push(JSON.stringify(await indexedDB.databases()));
  if (self.caches) dump.push(JSON.stringify(await caches.keys()));
  return dump.join("\\n");
}"""
# The same, as an object: {local, session, cookies, indexedDB (names), caches}.
STORAGE_OBJECT = """async () => {
  const dump = {local: {}, session: {}, cookies: document.cookie};
  for (let i = 0; i < localStorage.length; i++) {
    dump.local[localStorage.key(i)] = localStorage.getItem(localStorage.key(i));
  }
  for (let i = 0; i < sessionStorage.length; i++) {
    dump.session[sessionStorage.key(i)] = sessionStorage.getItem(sessionStorage.key(i));
  }
  dump.indexedDB = indexedDB.databases ? (await indexedDB.databases()).map((db) => db.name) : [];
  dump.caches = self.caches ? await caches.keys() : [];
  return dump;
}"""


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


def rrsite(*args: str | Path, timeout: float = 600,
           cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """Run an `rrsite` command to its end (it must succeed)."""
    done = subprocess.run([*RRSITE, *map(str, args)], cwd=cwd, timeout=timeout,
                          capture_output=True, text=True)
    assert done.returncode == 0, f"rrsite {' '.join(map(str, args))}: {done.stderr}"
    return done


def build_site(sources: Path, dist: Path, *options: str) -> None:
    """`rrsite build SOURCES -o DIST [OPTIONS]` (a folder of surveys or one survey file)."""
    rrsite("build", sources, "-o", dist, *options)


@contextmanager
def running(*args: str | Path, cwd: Path = ROOT,
            stderr: int = subprocess.STDOUT) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`rrsite ARGS` started as a server (`serve` or `preview` on `--port 0`), until the block
    ends; yields (the URL it prints on its first line, the process)."""
    process = subprocess.Popen([*RRSITE, *map(str, args)], stdout=subprocess.PIPE, stderr=stderr,
                               text=True, cwd=cwd)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert match, f"rrsite {args[0]} did not start: {line!r}"
        yield match.group(0), process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@contextmanager
def serve(dist: Path, db: Path | str, *options: str | Path) -> Iterator[str]:
    """`rrsite serve DIST --db DB [OPTIONS]` on a free port; yields its URL."""
    with running("serve", dist, "--port", "0", "--db", db, *options) as (url, _):
        yield url


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
    build_site(sources, dist)
    db = root / "collector.db"
    with serve(dist, db, "--operator-token", operator_token_file(root)) as url:
        yield Site(dist, url, db, ids)


@contextmanager
def blind_collector(dist: Path, root: Path, survey: str,
                    codes: int) -> Iterator[tuple[str, Path, list[str]]]:
    """A collector of its own on a built site with ``codes`` blind invitation codes for
    ``survey``; yields (its URL, its database, the links' fragments)."""
    db, key, table = root / "blind.db", root / "rrsite-blind.pem", root / "codes.csv"
    rrsite("invite", "--survey", survey, "-n", str(codes), "--url",
           f"http://127.0.0.1/{survey}/", "-o", table, "--db", db, "--blind", "--blind-key", key,
           timeout=120)
    with open(table, newline="", encoding="utf-8") as handle:
        fragments = [row["link"].partition("#")[2] for row in csv.DictReader(handle)]
    with serve(dist, db, "--blind-key", key) as url:
        yield url, db, fragments


def launch_chromium(playwright: Playwright, tiered: bool = False) -> Browser:
    """Debian's Chromium, headless, as the browser tests run it (``tiered``: with V8's default
    WebAssembly tiers, as a respondent's browser runs it)."""
    return playwright.chromium.launch(executable_path=CHROMIUM,
                                      args=CHROMIUM_ARGS if tiered else TEST_CHROMIUM_ARGS)


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


def open_page(context: BrowserContext, url: str, ready: bool = True) -> Page:
    """A new page at a survey's ``url`` (and its randomizer started, unless ``ready=False``)."""
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("#rr-submit:not([disabled])", state="attached", timeout=30_000)
    if ready:
        wait_ready(page)
    return page


def open_survey(context: BrowserContext, site: Site, survey_id: str, ready: bool = True) -> Page:
    """A new page with the survey loaded (and its randomizer started, unless ``ready=False``)."""
    return open_page(context, site.page_url(survey_id), ready)


def open_link(context: BrowserContext, url: str, survey_id: str,
              fragment: str) -> tuple[Page, str]:
    """A new page at a blind invitation link (the survey's page at ``url`` with its
    ``#fragment``), once the trade it starts on opening settled; (the page, the trade's state)."""
    page = context.new_page()
    page.goto(f"{url}{survey_id}/#{fragment}")
    return page, blind_settled(page)


def invitation_code(fragment: str) -> str:
    """The invitation code in a link's fragment."""
    match = re.search(r"invitation=([A-Za-z0-9_-]+)", fragment)
    assert match, fragment
    return match.group(1)


def blind_settled(page: Page, timeout_s: float = 90) -> str:
    """The blind trade's state once settled (`data-rr-blind`: ready, failed or wrong-key)."""
    page.wait_for_selector("html[data-rr-blind]:not([data-rr-blind=trading])", state="attached",
                           timeout=timeout_s * 1000)
    return page.evaluate("() => document.documentElement.dataset.rrBlind")  # type: ignore[no-any-return]


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


#: What a test can leave in a profile, emptied for every origin it reached (the Chrome DevTools
#: Protocol's Storage.clearDataForOrigin). The HTTP cache is not among them: it is what is kept.
STORAGE_TYPES = ("cookies,file_systems,indexeddb,local_storage,shader_cache,websql,"
                 "service_workers,cache_storage")
#: What a page of an origin still finds: localStorage and sessionStorage entries, cookies,
#: IndexedDB databases, Cache Storage caches (all must be empty after a test).
LEFT_BEHIND = """async () => [localStorage.length, sessionStorage.length, document.cookie,
  indexedDB.databases ? (await indexedDB.databases()).length : 0,
  self.caches ? (await caches.keys()).length : 0]"""


class WarmProfile:
    """One persistent Chromium profile for a pytest worker, lent to one test at a time.

    Pyodide's start costs a fresh context its download and the wasm's compilation (about a
    third of the CPU time of a start); a profile that keeps its HTTP cache and V8's code cache
    starts warm. Everything else a test could leave is taken away after it: its pages (with
    their sessionStorage, locks and workers), the routes, init scripts and event listeners it
    added, the offline switch, permissions and cookies, and localStorage, IndexedDB, Cache
    Storage, service workers and file systems of every origin it reached; then a page of each
    such origin proves them empty, so a test never sees an earlier one's traces.
    """

    def __init__(self, context: BrowserContext) -> None:
        self.context = context
        self.origins: set[str] = set()
        self._on = context.on
        self._add_init_script = context.add_init_script
        self._on("request", self._reached)

    @classmethod
    def launch(cls, playwright: Playwright, folder: Path) -> WarmProfile:
        """Debian's Chromium on a new profile folder."""
        context = playwright.chromium.launch_persistent_context(
            folder, executable_path=CHROMIUM, args=TEST_CHROMIUM_ARGS, viewport=VIEWPORT)
        for page in context.pages:
            page.close()
        return cls(context)

    def close(self) -> None:
        """Close the browser."""
        self.context.close()

    def _reached(self, request: Request) -> None:
        parts = urlsplit(request.url)
        if parts.scheme in ("http", "https"):
            self.origins.add(f"{parts.scheme}://{parts.netloc}")

    @contextmanager
    def lend(self) -> Iterator[BrowserContext]:
        """The profile's context for one test; everything the test left is emptied after it."""
        listeners: list[tuple[str, Callable[..., Any]]] = []
        scripts: list[Any] = []

        def on(event: str, handler: Callable[..., Any]) -> None:
            listeners.append((event, handler))
            self._on(event, handler)  # type: ignore[call-overload]

        def add_init_script(script: str | None = None, *, path: str | Path | None = None) -> Any:
            added = self._add_init_script(script, path=path)
            scripts.append(added)
            return added

        def close(**_: Any) -> None:
            raise AssertionError("a lent warm profile is not closed by the test: close its pages,"
                                 " or take a context of its own from `browser`")

        context = self.context
        context.on = on  # type: ignore[method-assign, assignment]
        context.add_init_script = add_init_script  # type: ignore[method-assign]
        context.close = close  # type: ignore[method-assign]
        context.set_default_timeout(30_000)
        try:
            yield context
        finally:
            del context.on, context.add_init_script, context.close  # the class's methods again
            self._empty(listeners, scripts)

    def _empty(self, listeners: list[tuple[str, Callable[..., Any]]], scripts: list[Any]) -> None:
        context = self.context
        for page in list(context.pages):
            page.close()
        for event, handler in listeners:
            context.remove_listener(event, handler)
        for script in scripts:
            script.close()
        context.unroute_all(behavior="ignoreErrors")
        context.set_offline(False)
        context.clear_permissions()
        context.clear_cookies()
        origins, self.origins = sorted(self.origins), set()
        if not origins:
            return
        page = context.new_page()
        try:
            session = context.new_cdp_session(page)
            for origin in origins:
                session.send("Storage.clearDataForOrigin",
                             {"origin": origin, "storageTypes": STORAGE_TYPES})
            # Proof: a page of each origin (served here, not by its server, which may be gone)
            # finds nothing. This page's own request adds its origin back: drop it.
            page.route("**/*", lambda route: route.fulfill(
                status=200, content_type="text/html", body="<!doctype html><title>empty</title>"))
            for origin in origins:
                page.goto(f"{origin}/")
                left = page.evaluate(LEFT_BEHIND)
                assert left == [0, 0, "", 0, 0], f"{origin} kept {left} after a test"
        finally:
            page.close()
            context.unroute_all(behavior="ignoreErrors")
            self.origins.clear()
