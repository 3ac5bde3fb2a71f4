"""In real Chromium, core's default random source inside Pyodide is crypto.getRandomValues."""

import http.server
import json
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class Handler(http.server.SimpleHTTPRequestHandler):
    """/ -> tests/pyodide/page, /pyodide/ -> node_modules/pyodide, /core/ -> rrsite/core."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".mjs": "text/javascript", ".wasm": "application/wasm"}

    def translate_path(self, path):
        path = path.split("?")[0]
        if path == "/core-files.json":
            return str(ROOT / "tests/pyodide/.core-files.json")
        for prefix, folder in (("/pyodide/", ROOT / "node_modules/pyodide"),
                               ("/core/", ROOT / "rrsite/core")):
            if path.startswith(prefix):
                return str(folder / path[len(prefix):])
        return str(ROOT / "tests/pyodide/page" / (path.lstrip("/") or "index.html"))

    def log_message(self, *args):
        pass


def test_default_random_source_is_crypto_get_random_values(playwright):
    core = ROOT / "rrsite/core"
    names = sorted(p.relative_to(core).as_posix() for p in core.rglob("*.py"))
    listing = ROOT / "tests/pyodide/.core-files.json"
    listing.write_text(json.dumps(names))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                             args=CHROMIUM_ARGS)
        page = browser.new_page()
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"http://127.0.0.1:{server.server_port}/")
        deadline = time.monotonic() + 90
        result = None
        while time.monotonic() < deadline and not errors:
            result = page.evaluate("() => window.rrResult || null")
            if result:
                break
            time.sleep(0.25)
        browser.close()
    finally:
        server.shutdown()
        listing.unlink()
    assert not errors, errors
    assert result is not None, "Pyodide did not finish in 90 s"
    assert result["platform"] == "emscripten"
    assert result["source"] == "SystemRandom"
    assert result["mtUntouched"], "the random module's Mersenne Twister was used"
    # 200 randomizations draw at least one coin each, each draw is a getRandomValues call
    assert result["randomizeCalls"] >= 200, result
    assert result["urandomCalls"] == 1, result
    # and the reports still follow the design: P(yes | yes) = 3/4, 200 draws, 5-sigma band
    assert abs(result["yes"] - 150) < 5 * (200 * 0.75 * 0.25) ** 0.5
