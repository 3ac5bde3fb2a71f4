"""Pinned code: a file swapped on the host under the same name does not run, and nothing is sent.

Each swap serves the page's own file with code added that would send something if it ran (a POST
to /leak-...), or with bytes of the wasm or the core changed. The browser refuses page.js (which
holds the modules it imports: the build inlines them) and the stylesheet by their integrity
attributes (the page then says which file and offers nothing to send); the worker (which holds
Pyodide's JavaScript), the wasm and the core bundle are refused by the page and the worker, which
check them against the hashes the page was built with. In every case
no answer is randomized, stored or sent, and the added code never runs. The pages are sent with
an Integrity-Policy; the same swaps in Firefox and WebKit are in tests/engines.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable

import pytest
from browserkit import ROOT, Site, Watch, wait_until
from playwright.sync_api import BrowserContext, Page, Route
from respondent import fill, plan_answers

# pinned code: nothing of an earlier visit may stand in for a swapped file
pytestmark = pytest.mark.fresh_profile

SURVEY = "honor-code"
MESSAGES = json.loads((ROOT / "templates" / "messages" / "en.json").read_text("utf-8"))
SETTLED = ("html[data-rr-integrity=failed], html[data-rr-runtime=failed], "
           "html[data-rr-runtime=ready]")


def adding(code: bytes) -> Callable[[bytes], bytes]:
    return lambda body: body + code


def changing(old: bytes, new: bytes) -> Callable[[bytes], bytes]:
    def change(body: bytes) -> bytes:
        assert old in body
        return body.replace(old, new, 1)
    return change


def open_swapped(context: BrowserContext, site: Site, pattern: str,
                 change: Callable[[bytes], bytes], settled: str,
                 timeout_ms: float) -> tuple[Page, list[str]]:
    """The survey's page with the files ``pattern`` matches served changed by ``change`` under
    the same name, once ``settled`` matches; (the page, the URLs served changed)."""
    served: list[str] = []

    def handler(route: Route) -> None:
        response = route.fetch()
        served.append(route.request.url)
        route.fulfill(response=response, body=change(response.body()))

    context.route(pattern, handler)
    page = context.new_page()
    page.goto(site.page_url(SURVEY))
    page.wait_for_selector(settled, state="attached", timeout=timeout_ms)
    return page, served


def nothing_happens(page: Page, site: Site, watch: Watch) -> None:
    """Answering and pressing the buttons randomizes, stores and sends nothing."""
    manifest = site.manifest(SURVEY)
    page.evaluate("""() => { document.documentElement.dataset.rrState = "form";
      document.getElementById('rr-form').hidden = false; }""")  # even if the form is forced open
    fill(page, manifest, plan_answers(manifest, 0))
    page.locator("#rr-submit").dispatch_event("click")
    page.evaluate("() => document.getElementById('rr-form').requestSubmit()")
    page.wait_for_timeout(500)
    assert page.locator("#rr-review").is_hidden()
    assert [r.url for r in watch.requests if r.method != "GET" or "/leak" in r.url] == []
    key = f"rrsite:{manifest['id']}:{manifest['version']}"
    assert page.evaluate("(key) => localStorage.getItem(key)", key) is None


LEAK_PAGE = b'\nfetch("/leak-page", {method: "POST", body: "truth"});\n'
LEAK_WORKER = b'\nfetch("/leak-worker", {method: "POST", body: "truth"});\n'


@pytest.mark.parametrize(("pattern", "change"), [
    ("**/_rr/page.*.js", adding(LEAK_PAGE)),
    ("**/_rr/page.*.css", adding(b"\nbody { background: url(/leak-css); }\n")),
])
def test_a_swapped_page_script_or_stylesheet_is_refused(
        site: Site, context: BrowserContext, watch: Watch, pattern: str,
        change: Callable[[bytes], bytes]) -> None:
    page, served = open_swapped(context, site, pattern, change, "html[data-rr-integrity=failed]",
                                30_000)
    assert served
    notice = page.locator("#rr-integrity")
    assert notice.is_visible()
    assert notice.inner_text().startswith(MESSAGES["integrity_failed"])
    name = served[0].rsplit("/", 1)[-1]
    wait_until(lambda: name in notice.inner_text(), 10, "the file named")  # checked again
    # every check ended (each one that ends takes the form away again)
    page.wait_for_selector("html[data-rr-integrity-checks='0']", state="attached")
    assert page.locator("#rr-form").is_hidden()
    nothing_happens(page, site, watch)


@pytest.mark.parametrize(("pattern", "change"), [
    ("**/_rr/worker.*.js", adding(LEAK_WORKER)),  # Pyodide's JavaScript is inside it
    ("**/pyodide.asm.wasm", adding(b"\0")),
    # the wasm compiles while it streams: bytes that do not compile are still named "integrity"
    ("**/pyodide.asm.wasm", changing(b"\0asm", b"\0asn")),
    ("**/_rr/core.*.zip", changing(b"def respond_json(", b"def respond_jsoN(")),
])
def test_a_swapped_worker_runtime_or_core_is_refused(
        site: Site, context: BrowserContext, watch: Watch, pattern: str,
        change: Callable[[bytes], bytes]) -> None:
    page, served = open_swapped(context, site, pattern, change, SETTLED, 90_000)
    assert page.evaluate("() => document.documentElement.dataset.rrRuntime") == "failed"
    text = page.locator("#rr-runtime-text").inner_text()
    name = served[0].rsplit("/", 1)[-1]
    assert "could not start" in text and name in text, text
    assert MESSAGES["runtime_integrity"].replace("{file}", name) in text
    nothing_happens(page, site, watch)
    assert "could not start" in page.locator("#rr-submit-note").inner_text()


def test_the_site_as_built_runs_with_every_pin(site: Site, context: BrowserContext,
                                               watch: Watch) -> None:
    page = context.new_page()
    page.goto(site.page_url(SURVEY))
    page.wait_for_selector(SETTLED, state="attached", timeout=90_000)
    assert page.evaluate("() => document.documentElement.dataset.rrRuntime") == "ready"
    assert page.evaluate("() => document.documentElement.dataset.rrIntegrity") is None
    assert page.locator("#rr-integrity").is_hidden()
    fingerprint = page.locator("#rr-fingerprint code").inner_text()
    listed = json.loads((site.dist / "rrsite-files.json").read_text("utf-8"))
    assert fingerprint == listed["code_fingerprint"]
    watch.assert_clean()


def test_the_pages_are_sent_with_an_integrity_policy(site: Site) -> None:
    def headers(path: str) -> dict[str, str]:
        with urllib.request.urlopen(site.url + path, timeout=30) as response:  # noqa: S310
            return {name.lower(): value for name, value in response.headers.items()}

    assert headers(f"{SURVEY}/")["integrity-policy"] == "blocked-destinations=(script)"
    (worker,) = [p for p in (site.dist / "_rr").glob("worker.*.js")]
    assert "integrity-policy" not in headers(f"_rr/{worker.name}")  # its imports have no pins
    assert "wasm-unsafe-eval" in headers(f"_rr/{worker.name}")["content-security-policy"]
