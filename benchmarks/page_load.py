"""Respondent page load: rrsite's page beside a plain-JS baseline and a bare Pyodide start.

Run: python benchmarks/page_load.py [--runs 5] [--links local,10mbit,phone]
                                   [--pages rrsite,plain,bare]

In one run, in headless Chromium (Debian's /usr/bin/chromium through Playwright), it builds a
one-question survey with `rrsite build` (pre-compressed assets, _headers), serves it over HTTPS on
127.0.0.1 with a small threaded server that applies `_headers` and serves the `.br`/`.gz` files
with Content-Encoding (Chromium offers brotli only over HTTPS; the throwaway certificate is
trusted through --ignore-certificate-errors-spki-list so that the HTTP cache works as for a valid
one), and loads three pages:

- rrsite: the built survey page (form, Pyodide worker, rrsite/core);
- plain:  the same form with randomized response in 30 lines of plain JavaScript (no runtime);
- bare:   a page that only starts Pyodide in a module worker (no form, no core), with Pyodide's
          full standard library (stored and brotli-compressed like the site's): the baseline for
          the trimmed library `rrsite build` ships.

Each run uses a fresh browser profile (launch_persistent_context with a new user-data-dir):
the first load is "cold" (empty cache), the second "warm" (a repeat visit; incognito contexts
never cache the 9.6 MB wasm). Figures are medians over the runs, from the page's own
performance marks (rr-interactive: the form can be used and submitted; rr-ready: the randomizer
can randomize) and the server's byte counts. "confirm->sent" is from the click on the confirm
button to the submission request leaving the browser (Resource Timing requestStart).

Links: "local" is plain loopback; "10mbit" is Chromium's own emulation of a 10 Mbit/s link with
40 ms latency (CDP Network.emulateNetworkConditions on the page; checked: it also throttles the
requests of the page's module worker, where the runtime is fetched). "phone" is a 1.6 Mbit/s link
with 150 ms latency and the CPU slowed 4x (CDP Emulation.setCPUThrottlingRate on the page's
renderer).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
READY_TIMEOUT_S = 180

SURVEY = """\
---
id: bench-honor
title: Honor Code survey
language: en
privacy: {epsilon: 1.1, budget: 3.0}
submit: {to: collector}
---
Your answers are randomized on your own device before they are sent.

## Have you ever violated the Honor Code?
```question
id: violated
type: yes-no
randomize: forced-response
truth: 0.5
```

## Which year are you in?
```question
id: year
type: choice
options: [First, Second, Third or later]
```
"""

def _option(name: str, ident: str, value: str) -> str:
    attrs = f'name="{name}"' if name else "data-truth"
    return (f'<div class="rr-option"><input type="radio" id="{ident}" value="{value}" {attrs}>'
            f'<label for="{ident}">{value}</label></div>')


PLAIN_HTML = f"""\
<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Honor Code survey (plain JavaScript)</title>
<link rel="stylesheet" href="../../_rr/{{css}}">
<script type="module" src="plain.js"></script></head>
<body><main class="rr-page"><h1>Honor Code survey</h1>
<form id="rr-form" class="rr-form">
<fieldset class="rr-question" id="q-violated">
<legend>Have you ever violated the Honor Code?</legend>
<div class="rr-options">{_option("", "v-yes", "yes")}{_option("", "v-no", "no")}</div>
</fieldset>
<fieldset class="rr-question" id="q-year"><legend>Which year are you in?</legend>
<div class="rr-options">{_option("year", "y1", "First")}{_option("year", "y2", "Second")}
{_option("year", "y3", "Third or later")}</div></fieldset>
<button type="submit" class="rr-button rr-primary" id="rr-submit" disabled>Randomize</button>
</form>
<section id="rr-review" hidden><h2>Review</h2><pre id="rr-body"></pre>
<button type="button" class="rr-button rr-primary" id="rr-confirm">Send</button></section>
<section id="rr-done" hidden><h2>Thank you</h2></section>
</main></body></html>
"""

# Randomized response in plain JavaScript: the fair two-coin design, 30 lines.
PLAIN_JS = """\
const $ = (id) => document.getElementById(id);
const bytes = (n) => crypto.getRandomValues(new Uint8Array(n));
const coin = () => (bytes(1)[0] & 1) === 1;
const token = () => btoa(String.fromCharCode(...bytes(16))).replace(/[+/=]/g,
  (c) => ({ "+": "-", "/": "_", "=": "" })[c]);
const truths = document.querySelectorAll("input[data-truth]");
for (const radio of truths) {
  radio.addEventListener("change", () => { for (const o of truths) o.checked = o === radio; });
}
let body = null;
$("rr-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const truth = document.querySelector("input[data-truth]:checked");
  if (!truth) return;
  const report = coin() ? truth.value : coin() ? "yes" : "no";
  const year = document.querySelector("input[name=year]:checked");
  const answers = { violated: report, ...(year ? { year: year.value } : {}) };
  body = JSON.stringify({ survey: "plain", version: "0", respondent: token(), answers }, null, 2);
  $("rr-body").textContent = body;
  [$("rr-form").hidden, $("rr-review").hidden] = [true, false];
});
$("rr-confirm").addEventListener("click", async () => {
  performance.mark("rr-confirm");
  const headers = { "Content-Type": "application/json" };
  await (await fetch("/api/submissions", { method: "POST", headers, body })).text();
  performance.mark("rr-sent");
  [$("rr-review").hidden, $("rr-done").hidden] = [true, false];
});
$("rr-submit").disabled = false;
performance.mark("rr-interactive"); performance.mark("rr-ready");
document.documentElement.dataset.rrRuntime = "ready";
"""

BARE_HTML = """\
<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Bare Pyodide in a worker</title>
<script type="module" src="bare.js"></script></head>
<body><p>Bare Pyodide start in a module worker.</p></body></html>
"""

BARE_JS = """\
const worker = new Worker(new URL("bare-worker.js", import.meta.url), { type: "module" });
worker.addEventListener("message", () => {
  performance.mark("rr-ready");
  document.documentElement.dataset.rrRuntime = "ready";
});
worker.postMessage(new URL("../../_rr/{runtime}/", location.href).href);
performance.mark("rr-interactive");
"""

BARE_WORKER_JS = """\
self.addEventListener("message", async (event) => {
  const { loadPyodide } = await import(`${event.data}pyodide.mjs`);
  const stdLibURL = `${event.data}python_stdlib_full.zip`;
  await loadPyodide({ indexURL: event.data, stdLibURL, packages: [] });
  self.postMessage("ready");
});
"""


# ---- the server -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Link:
    """A network link: loopback as is, or emulated by Chromium (throughput in bytes/s)."""

    name: str
    throughput: float | None = None
    latency_ms: float = 0.0
    cpu_slowdown: float = 1.0

    def apply(self, context: Any, page: Any) -> None:
        """Emulate this link for the page (and its workers) through the DevTools protocol."""
        if self.throughput is None and self.cpu_slowdown == 1.0:
            return
        cdp = context.new_cdp_session(page)
        if self.cpu_slowdown != 1.0:
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": self.cpu_slowdown})
        if self.throughput is None:
            return
        cdp.send("Network.enable")
        cdp.send("Network.emulateNetworkConditions", {
            "offline": False, "latency": self.latency_ms,
            "downloadThroughput": self.throughput, "uploadThroughput": self.throughput})


@dataclass
class Counters:
    """Bytes the server sent since the last reset, in total and for the Pyodide runtime/core."""

    total: int = 0
    runtime: int = 0
    requests: list[tuple[str, int, str]] = field(default_factory=list)
    active: int = 0


class SiteServer(ThreadingHTTPServer):
    """Serves DIST like a static host reading `_headers`; POST /api/submissions answers 201."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, root: Path) -> None:
        super().__init__(("127.0.0.1", 0), SiteHandler)
        from rrsite.collect.static import HeaderRules

        self.root = root.resolve()
        self.rules = HeaderRules(root / "_headers")
        self.counters = Counters()
        self.lock = threading.Lock()

    def reset(self) -> None:
        """Start counting afresh."""
        with self.lock:
            self.counters = Counters(active=self.counters.active)

    def count(self, path: str, sent: int, encoding: str) -> None:
        """Add one response's bytes (status line, headers and body)."""
        with self.lock:
            self.counters.total += sent
            if path.startswith("/_rr/pyodide-") or path.startswith("/_rr/core."):
                self.counters.runtime += sent
            self.counters.requests.append((path, sent, encoding))

    def headers_for(self, path: str) -> dict[str, str]:
        """The `_headers` rules that match, later ones winning (the collector's own matching)."""
        return dict(self.rules.headers_for(path))


MIME = {".html": "text/html; charset=utf-8", ".js": "text/javascript", ".mjs": "text/javascript",
        ".css": "text/css", ".json": "application/json", ".wasm": "application/wasm",
        ".zip": "application/zip", ".svg": "image/svg+xml"}


class SiteHandler(BaseHTTPRequestHandler):
    """GET/HEAD for files (pre-compressed siblings, ETag, `_headers`), POST for submissions."""

    protocol_version = "HTTP/1.1"
    server: SiteServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def _send(self, status: int, headers: dict[str, str], body: bytes, path: str,
              encoding: str = "") -> None:
        with self.server.lock:
            self.server.counters.active += 1
        try:
            head = [f"HTTP/1.1 {status} {self.responses.get(status, ('',))[0]}"]
            head += [f"{name}: {value}" for name, value in headers.items()]
            head_bytes = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
            payload = head_bytes + (b"" if self.command == "HEAD" else body)
            self.wfile.write(payload)
            self.wfile.flush()
            self.server.count(path, len(payload), encoding)
        finally:
            with self.server.lock:
                self.server.counters.active -= 1

    def do_HEAD(self) -> None:  # noqa: N802
        self.do_GET()

    def do_GET(self) -> None:  # noqa: N802
        path = unquote(urlsplit(self.path).path)
        target = (self.server.root / path.lstrip("/")).resolve()
        if not target.is_relative_to(self.server.root):
            self._send(404, {"Content-Length": "0"}, b"", path)
            return
        if target.is_dir():
            if not path.endswith("/"):
                self._send(301, {"Location": path + "/", "Content-Length": "0"}, b"", path)
                return
            target = target / "index.html"
        if not target.is_file():
            self._send(404, {"Content-Length": "0"}, b"", path)
            return
        accepted = {item.split(";")[0].strip() for item in
                    (self.headers.get("Accept-Encoding") or "").split(",")}
        encoding, file = "", target
        for token, suffix in (("br", ".br"), ("gzip", ".gz")):
            sibling = target.with_name(target.name + suffix)
            if token in accepted and sibling.is_file():
                encoding, file = token, sibling
                break
        info = file.stat()
        etag = f'"{info.st_mtime_ns:x}-{info.st_size:x}"'
        headers = {"content-type": MIME.get(target.suffix, "application/octet-stream")}
        headers.update(self.server.headers_for(path))
        headers.setdefault("cache-control", "no-cache")
        headers["etag"] = etag
        headers["vary"] = "Accept-Encoding"
        if self.headers.get("If-None-Match") == etag:
            headers["content-length"] = "0"
            self._send(304, headers, b"", path, encoding)
            return
        body = file.read_bytes()
        if encoding:
            headers["content-encoding"] = encoding
        headers["content-length"] = str(len(body))
        self._send(200, headers, body, path, encoding)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        path = urlsplit(self.path).path
        if path != "/api/submissions":
            self._send(404, {"Content-Length": "0"}, b"", path)
            return
        body = b'{"status": "stored"}'
        self._send(201, {"Content-Type": "application/json", "Content-Length": str(len(body)),
                         "Cache-Control": "no-store"}, body, path)


def make_certificate(folder: Path) -> tuple[Path, Path, str]:
    """A throwaway certificate for 127.0.0.1 and the base64 SHA-256 of its public key (SPKI)."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    public = subprocess.run(["openssl", "x509", "-in", str(cert), "-pubkey", "-noout"],
                            check=True, capture_output=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=public,
                         check=True, capture_output=True).stdout
    digest = subprocess.run(["openssl", "dgst", "-sha256", "-binary"], input=der, check=True,
                            capture_output=True).stdout
    return cert, key, base64.b64encode(digest).decode()


def start_server(root: Path, cert: Path, key: Path) -> SiteServer:
    """A running HTTPS server on 127.0.0.1 (a free port)."""
    server = SiteServer(root)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# ---- the site -------------------------------------------------------------------------------


def build_site(folder: Path) -> tuple[Path, str]:
    """The built survey plus the two baseline pages; returns (dist, survey id)."""
    source = folder / "surveys"
    source.mkdir()
    (source / "bench-honor.md").write_text(SURVEY, encoding="utf-8")
    dist = folder / "dist"
    subprocess.run([sys.executable, "-m", "rrsite", "build", str(source), "-o", str(dist)],
                   check=True, cwd=ROOT, capture_output=True, timeout=900)
    assets = dist / "_rr"
    css = next(p.name for p in assets.glob("page.*.css"))
    runtime = next(p.name for p in assets.glob("pyodide-*") if p.is_dir())
    plain = dist / "_bench" / "plain"
    plain.mkdir(parents=True)
    (plain / "index.html").write_text(PLAIN_HTML.replace("{css}", css), encoding="utf-8")
    (plain / "plain.js").write_text(PLAIN_JS, encoding="utf-8")
    bare = dist / "_bench" / "bare"
    bare.mkdir(parents=True)
    (bare / "index.html").write_text(BARE_HTML, encoding="utf-8")
    (bare / "bare.js").write_text(BARE_JS.replace("{runtime}", runtime), encoding="utf-8")
    (bare / "bare-worker.js").write_text(BARE_WORKER_JS, encoding="utf-8")
    # The bare start loads Pyodide's whole standard library, prepared as the site's own was
    # before trimming: stored entries, with a brotli copy.
    from rrsite.site.assets import precompress
    from rrsite.site.builder import default_pyodide, stored_zip

    full = assets / runtime / "python_stdlib_full.zip"  # cached like the rest of the runtime
    full.write_bytes(stored_zip((default_pyodide() / "python_stdlib.zip").read_bytes()))
    # Pyodide's two modules: the site ships them inside its worker's script, the bare start
    # imports them as files
    loaders = [assets / runtime / name for name in ("pyodide.mjs", "pyodide.asm.mjs")]
    for loader in loaders:
        loader.write_bytes((default_pyodide() / loader.name).read_bytes())
    precompress([full, *loaders], None)
    return dist, "bench-honor"


# ---- measuring ------------------------------------------------------------------------------


MARKS_JS = """() => Object.fromEntries(performance.getEntriesByType("mark")
  .map((m) => [m.name, m.startTime]))"""
SENT_JS = """() => {
  const post = performance.getEntriesByType("resource")
    .find((e) => e.name.endsWith("/api/submissions"));
  const confirm = performance.getEntriesByName("rr-confirm")[0];
  return post && confirm ? post.requestStart - confirm.startTime : null;
}"""


def settle(server: SiteServer, limit_s: float = 30.0) -> None:
    """Wait until the server has no response in flight, and a little more."""
    deadline = time.monotonic() + limit_s
    quiet_since = None
    while time.monotonic() < deadline:
        if server.counters.active == 0:
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since > 0.3:
                return
        else:
            quiet_since = None
        time.sleep(0.02)


def load_once(context: Any, url: str, server: SiteServer, link: Link,
              submit: bool) -> dict[str, float | None]:
    """One page load; figures in ms and bytes."""
    page = context.new_page()
    link.apply(context, page)
    server.reset()
    page.goto(url, wait_until="commit")
    page.wait_for_selector("html[data-rr-runtime=ready]", state="attached",
                           timeout=READY_TIMEOUT_S * 1000)
    marks = page.evaluate(MARKS_JS)
    settle(server)
    result: dict[str, float | None] = {
        "interactive": marks.get("rr-interactive"),
        "ready": marks.get("rr-ready"),
        "bytes": server.counters.total,
        "runtime_bytes": server.counters.runtime,
        "sent": None,
    }
    if submit:
        for fieldset in ("q-violated", "q-year"):
            page.locator(f"#{fieldset} label").first.click()
        page.click("#rr-submit")
        page.wait_for_selector("#rr-review:not([hidden])", timeout=30000)
        page.click("#rr-confirm")
        page.wait_for_selector("#rr-done:not([hidden])", timeout=30000)
        result["sent"] = page.evaluate(SENT_JS)
    page.evaluate("() => localStorage.clear()")
    page.close()
    return result


def measure_profile(playwright: Any, url: str, server: SiteServer, spki: str, link: Link,
                    submit: bool) -> dict[str, dict[str, float | None]]:
    """A fresh profile: a cold load, then a warm one (a repeat visit)."""
    with fresh_profile(playwright, spki) as context:
        cold = load_once(context, url, server, link, submit)
        warm = load_once(context, url, server, link, submit)
        return {"cold": cold, "warm": warm}


@contextlib.contextmanager
def fresh_profile(playwright: Any, spki: str) -> Iterator[Any]:
    """A Chromium context on a new, empty profile folder (its HTTP cache persists between the
    visits made in it), trusting the benchmark's certificate; the folder is removed after."""
    profile = tempfile.mkdtemp(prefix="rr-bench-profile-")
    try:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True,
            args=[*CHROMIUM_ARGS, f"--ignore-certificate-errors-spki-list={spki}"])
        try:
            yield context
        finally:
            context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def tear_down(server: SiteServer | None, work: Path) -> None:
    """Stop the site's server (if it started) and remove the work folder."""
    if server is not None:
        server.shutdown()
        server.server_close()
    shutil.rmtree(work, ignore_errors=True)


def median(values: list[float | None]) -> float | None:
    """Median of the values that exist."""
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def fmt_ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def fmt_mb(value: float | None) -> str:
    return "-" if value is None else f"{value / 1e6:,.2f}"


def run_ratios(ours: list[dict[str, Any]], baseline: list[dict[str, Any]], key: str) -> str:
    """Range of the ratios of loads made in the same run (pages take turns within a run)."""
    values = sorted(a[key] / b[key] for a, b in zip(ours, baseline, strict=True)
                    if a[key] is not None and b[key])
    return f"{values[0]:.2f}x-{values[-1]:.2f}x" if values else "-"


def ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh profiles per page and link")
    parser.add_argument("--links", default="local,10mbit,phone",
                        help="local, 10mbit, phone (comma-separated)")
    parser.add_argument("--pages", default="rrsite,plain,bare", help="which pages to load")
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    links = {"local": Link("localhost"),
             "10mbit": Link("10 Mbit/s, 40 ms latency", throughput=10e6 / 8, latency_ms=40),
             "phone": Link("phone: 1.6 Mbit/s, 150 ms latency, CPU 4x slower",
                           throughput=1.6e6 / 8, latency_ms=150, cpu_slowdown=4.0)}
    work = Path(tempfile.mkdtemp(prefix="rr-bench-"))
    results: dict[str, dict[str, Any]] = {}
    server: SiteServer | None = None
    try:
        print("building the site ...", flush=True)
        dist, survey_id = build_site(work)
        cert, key, spki = make_certificate(work)
        pages = {"rrsite": f"{survey_id}/", "plain": "_bench/plain/", "bare": "_bench/bare/"}
        server = start_server(dist, cert, key)
        base = f"https://127.0.0.1:{server.server_address[1]}/"
        with sync_playwright() as playwright:
            for link_name in args.links.split(","):
                link = links[link_name]
                # Pages take turns within each run, so that a busy machine slows all alike.
                for run in range(args.runs):
                    print(f"{link.name}: run {run + 1} of {args.runs} ...", flush=True)
                    for page_name in args.pages.split(","):
                        loads = measure_profile(playwright, base + pages[page_name], server,
                                                spki, link, submit=page_name != "bare")
                        per_page = results.setdefault(link_name, {}).setdefault(
                            page_name, {"cold": [], "warm": []})
                        for kind, figures in loads.items():
                            per_page[kind].append(figures)
    finally:
        tear_down(server, work)

    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    print_table(results, links, args.runs)
    return 0


def print_table(results: dict[str, dict[str, Any]], links: dict[str, Link], runs: int) -> None:
    """The Markdown table of medians, and the ratios against the targets."""
    print(f"\nMedians over {runs} fresh profiles (ms from navigation start; MB = 10^6 bytes "
          "sent by the server, headers included).\n")
    print("| link | page | interactive cold | interactive warm | ready cold | ready warm | "
          "MB cold | MB warm | runtime MB warm | confirm->sent ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    summary: list[str] = []
    for link_name, pages in results.items():
        figures: dict[str, dict[str, float | None]] = {}
        for page_name, loads in pages.items():
            f = {f"{key}_{kind}": median([load[key] for load in loads[kind]])
                 for kind in ("cold", "warm") for key in loads[kind][0]}
            figures[page_name] = f
            sent = median([load["sent"] for kind in ("cold", "warm") for load in loads[kind]])
            print(f"| {links[link_name].name} | {page_name} | {fmt_ms(f['interactive_cold'])} | "
                  f"{fmt_ms(f['interactive_warm'])} | {fmt_ms(f['ready_cold'])} | "
                  f"{fmt_ms(f['ready_warm'])} | {fmt_mb(f['bytes_cold'])} | "
                  f"{fmt_mb(f['bytes_warm'])} | {fmt_mb(f['runtime_bytes_warm'])} | "
                  f"{fmt_ms(sent) if page_name != 'bare' else '-'} |")
            figures[page_name]["sent"] = sent
        ours = figures.get("rrsite")
        name = links[link_name].name
        for baseline, key, label, target in (("plain", "interactive", "form interactive", 1.5),
                                             ("bare", "ready", "randomizer ready", 0.85)):
            if not ours or baseline not in figures:
                continue
            for kind in ("cold", "warm"):
                summary.append(
                    f"{name}, {kind}: {label} rrsite/{baseline} = "
                    f"{ratio(ours[f'{key}_{kind}'], figures[baseline][f'{key}_{kind}'])} of the "
                    f"medians (target <= {target}x); per-run ratios "
                    f"{run_ratios(pages['rrsite'][kind], pages[baseline][kind], key)}")
        if ours:
            summary.append(f"{name}: confirm->sent {fmt_ms(ours['sent'])} ms (target < 100); "
                           f"cold visit {fmt_mb(ours['bytes_cold'])} MB (target <= 3.4; bare "
                           f"full-library start {fmt_mb(figures.get('bare', {}).get('bytes_cold'))}"
                           " MB); "
                           f"repeat visit runtime {fmt_mb(ours['runtime_bytes_warm'])} MB "
                           "(target 0)")
    print()
    for line in summary:
        print("- " + line)


if __name__ == "__main__":
    sys.exit(main())
