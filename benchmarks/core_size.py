"""What rrsite/core adds to the respondent's page: zipped bytes, and import time inside Pyodide.

Run: python benchmarks/core_size.py [--runs 5]
Prints the size of the core bundle (raw, zip, gzip of the zip) beside the Pyodide runtime it rides
on, and, under Node, the median time of a bare loadPyodide() against the extra time to unpack and
import rrsite.core in that same Pyodide (fresh interpreter each run).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from rrsite.survey.bundle import core_files

ROOT = Path(__file__).resolve().parent.parent
PYODIDE = ROOT / "node_modules" / "pyodide"
RUNTIME_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)

NODE_SCRIPT = r"""
import { loadPyodide } from "pyodide";
import { readFileSync } from "node:fs";
const [zipPath, runs] = [process.argv[2], Number(process.argv[3])];
const bytes = new Uint8Array(readFileSync(zipPath));
const load = [], core = [];
for (let i = 0; i < runs; i++) {
  let t = performance.now();
  const py = await loadPyodide();
  load.push(performance.now() - t);
  t = performance.now();
  const site = py.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
  py.unpackArchive(bytes, "zip", { extractDir: site });
  py.runPython("import rrsite.core; rrsite.core.ForcedResponse().randomize(1)");
  core.push(performance.now() - t);
}
console.log(JSON.stringify({ load, core }));
"""


def core_zip() -> bytes:
    """The builder's core files (rrsite.survey.bundle.core_files), deflated."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, content in core_files():
            info = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, content)
    return buffer.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    bundle = core_zip()
    raw = sum(len(content) for _, content in core_files())
    runtime = sum((PYODIDE / name).stat().st_size for name in RUNTIME_FILES)
    runtime_gz = sum(len(gzip.compress((PYODIDE / name).read_bytes(), 6)) for name in RUNTIME_FILES)
    print("size (bytes)              raw        zip   gzip(zip)")
    print(
        f"rrsite/core           {raw:>8,} {len(bundle):>10,} {len(gzip.compress(bundle, 9)):>11,}"
    )
    print(f"pyodide runtime    {runtime:>11,} {'':>10} {runtime_gz:>11,}")
    print(f"core / runtime (served compressed): {len(bundle) / runtime_gz:.4%}")

    with tempfile.TemporaryDirectory() as tmp:
        zip_path = Path(tmp) / "core.zip"
        zip_path.write_bytes(bundle)
        script = ROOT / "benchmarks" / ".core_import.mjs"
        script.write_text(NODE_SCRIPT)
        try:
            out = subprocess.run(
                ["node", str(script), str(zip_path), str(args.runs)],
                cwd=ROOT,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        finally:
            script.unlink()
    times = json.loads(out.strip().splitlines()[-1])
    load, core = statistics.median(times["load"]), statistics.median(times["core"])
    print(f"\nPyodide under Node, median of {args.runs} fresh starts:")
    print(f"bare loadPyodide()             {load:8.1f} ms")
    print(f"unpack + import rrsite.core    {core:8.1f} ms   ({core / load:.1%} of the bare start)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
