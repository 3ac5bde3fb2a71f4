"""The build's bundling of asset modules (rrsite/site/bundle.py), run in Node.

A module that imports other assets becomes one file that imports nothing; each imported module
runs once, before its importers, with its own top-level names; the module keeps its own exports
(a page or a test may import it); forms the bundler does not take are refused at their line.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from rrsite.site.bundle import BundleError, bundle_assets

NODE = shutil.which("node")


def run_module(tmp_path: Path, source: bytes, call: str) -> object:
    """Import ``source`` as an ES module in Node and print ``call``'s value as JSON."""
    module = tmp_path / "bundled.mjs"
    module.write_bytes(source)
    script = (f"import * as m from {json.dumps(module.as_uri())};\n"
              f"console.log(JSON.stringify({call}));\n")
    assert NODE is not None, "Node is needed to build the site (scripts/setup.sh installs it)"
    done = subprocess.run([NODE, "--input-type=module", "-e", script], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


SOURCES = {
    "shared.js": b"export const seen = [];\nconst secret = 'shared';\n"
                 b"export function note(x) { seen.push(x); return secret; }\n",
    "storage.js": b'import { note, seen } from "./shared.js";\nnote("storage");\n'
                  b"export const count = () => seen.length;\nconst secret = 'storage';\n",
    "fielding.js": b'import { count as counted } from "./storage.js";\n'
                   b'import { note } from "./shared.js";\nnote("fielding");\n'
                   b"export function drawDirect(share) { return share > 0.5; }\n"
                   b"export const total = () => counted();\n",
    "alone.js": b"export const untouched = 1;\n",
}


def test_a_bundled_module_imports_nothing_and_keeps_its_exports(tmp_path):
    bundled = bundle_assets(SOURCES)
    text = bundled["fielding.js"].decode()
    assert "import " not in text.replace("imports", "")
    assert bundled["alone.js"] == SOURCES["alone.js"]  # nothing to inline: as given
    # shared.js runs once, before storage.js; the entry's own exports are still exported
    value = run_module(tmp_path, bundled["fielding.js"],
                       "[m.drawDirect(0.9), m.drawDirect(0.1), m.total()]")
    assert value == [True, False, 2]


@pytest.mark.parametrize(("text", "says"), [
    (b'import x from "./shared.js";\n', "fielding.js:1: only `import { a, b as c }"),
    (b'const a = 1;\nexport let b = 2;\n', "fielding.js:2: only `export` before const"),
    (b'const m = await import("./shared.js");\n', "fielding.js:1: import() of an asset"),
    (b'import { nothing } from "./shared.js";\n', "imports nothing from shared.js"),
])
def test_forms_it_does_not_take_are_refused_at_their_line(text, says):
    with pytest.raises(BundleError) as caught:
        bundle_assets({**SOURCES, "fielding.js": text})
    assert says in str(caught.value)
