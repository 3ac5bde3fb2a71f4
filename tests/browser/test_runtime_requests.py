"""What the randomizer's start fetches: each runtime file once, and not Pyodide's lock file.

The page gives the worker Pyodide's lock file without its packages (config.pyodide_lock), so
loadPyodide does not fetch pyodide-lock.json; the standard library it starts on is the shipped
zip, some of whose modules are bytecode (``.pyc``) that zipimport loads without their source.
Pinned code: the worker's script (which holds Pyodide's JavaScript) is fetched once with its
integrity and then started from the browser's cache, never downloaded twice.
"""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from urllib.parse import urlsplit

import pytest
from browserkit import Site, Watch
from playwright.sync_api import BrowserContext, Request

pytestmark = pytest.mark.fresh_profile  # a cold start's requests

SURVEY = "honor-code"


def test_a_cold_start_fetches_each_runtime_file_once_and_no_lock_file(
        site: Site, context: BrowserContext, watch: Watch) -> None:
    downloaded: list[str] = []

    def finished(request: Request) -> None:
        # a response from the browser's cache has no body size of its own (negative)
        if "/_rr/" in request.url and request.method == "GET" and \
                request.sizes()["responseBodySize"] >= 0:
            downloaded.append(urlsplit(request.url).path.rsplit("/", 1)[-1])

    context.on("requestfinished", finished)
    page = context.new_page()
    page.goto(site.page_url(SURVEY))
    page.wait_for_selector("html[data-rr-runtime=ready]", state="attached", timeout=90_000)
    paths = Counter(downloaded)
    assert paths["pyodide-lock.json"] == 0, paths
    for name in ("pyodide.asm.wasm", "python_stdlib.zip"):
        assert paths[name] == 1, (name, paths)
    for prefix in ("core.", "worker."):
        (name,) = [name for name in paths if name.startswith(prefix)]
        assert paths[name] == 1, paths
    # Pyodide's JavaScript is inside the worker's script: never asked for on its own
    asked = Counter(urlsplit(r.url).path.rsplit("/", 1)[-1] for r in watch.requests
                    if "/_rr/" in r.url and r.method == "GET")
    assert asked["pyodide.mjs"] == asked["pyodide.asm.mjs"] == 0, asked
    # the worker's script was asked for twice (checked with its integrity, then started), yet
    # downloaded once (above)
    worker = next(name for name in asked if name.startswith("worker."))
    assert asked[worker] == 2, asked
    watch.assert_clean()


def test_the_lock_given_to_the_worker_is_pyodides_without_packages(site: Site) -> None:
    (folder,) = (site.dist / "_rr").glob("pyodide-*")
    info = json.loads((folder / "pyodide-lock.json").read_text("utf-8"))["info"]
    page = (site.dist / SURVEY / "index.html").read_text("utf-8")
    config = json.loads(page.split('id="rr-config">', 1)[1].split("</script>", 1)[0])
    assert config["pyodide_lock"] == {"info": info, "packages": {}}
    # and the worker started on a library that holds bytecode (the test above reached ready)
    with zipfile.ZipFile(folder / "python_stdlib.zip") as shipped:
        assert any(name.endswith(".pyc") for name in shipped.namelist())
