"""What the randomizer's start fetches: each runtime file once, and not Pyodide's lock file.

The page gives the worker Pyodide's lock file without its packages (config.pyodide_lock), so
loadPyodide does not fetch pyodide-lock.json; the standard library it starts on is the shipped
zip, some of whose modules are bytecode (``.pyc``) that zipimport loads without their source.
"""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from urllib.parse import urlsplit

from browserkit import Site, Watch
from playwright.sync_api import BrowserContext

SURVEY = "honor-code"


def test_a_cold_start_fetches_each_runtime_file_once_and_no_lock_file(
        site: Site, context: BrowserContext, watch: Watch) -> None:
    page = context.new_page()
    page.goto(site.page_url(SURVEY))
    page.wait_for_selector("html[data-rr-runtime=ready]", state="attached", timeout=90_000)
    paths = Counter(urlsplit(r.url).path.rsplit("/", 1)[-1] for r in watch.requests
                    if "/_rr/" in r.url and r.method == "GET")
    assert paths["pyodide-lock.json"] == 0, paths
    for name in ("pyodide.asm.wasm", "pyodide.asm.mjs", "python_stdlib.zip"):
        assert paths[name] == 1, (name, paths)
    cores = [name for name in paths if name.startswith("core.") and name.endswith(".zip")]
    assert len(cores) == 1 and paths[cores[0]] == 1, paths
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
