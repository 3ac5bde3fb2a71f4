"""The trimmed standard library the site ships: only what Pyodide's start and rrsite/core import.

Pyodide's ``python_stdlib.zip`` holds the whole standard library (2.5 MB, 1.6 MB brotli); a
respondent's page needs a small part of it. Which part is not guessed: ``stdlib_keep.txt`` beside
this module lists the zip entries that were imported when Pyodide started, ran the worker's start
steps, imported every module rrsite/core imports (at any depth, also inside functions) and answered
every example survey's questions. ``node tests/pyodide/stdlib_trace.mjs --write`` makes the list;
``make test`` (tests/pyodide/run_core_tests.mjs) fails when the trace and the list disagree and runs
rrsite/core inside Pyodide against the trimmed zip, so a missing module fails CI.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from .assets import store_cache_entry

#: The list of kept zip entries, one a line (``#`` comments; the first names the Pyodide version).
KEEP_FILE = Path(__file__).with_name("stdlib_keep.txt")
#: The Node script that strips docstrings and comments with Pyodide's own Python.
MINIFY_SCRIPT = Path(__file__).with_name("stdlib_minify.mjs")
#: Seconds the minifying Node process may take (it starts Pyodide once: about 3 s).
MINIFY_TIMEOUT_S = 180
#: Compressed bytes (zlib -9, per module) the build may add to the zip by shipping modules as
#: bytecode (``name.pyc``) instead of source, which Pyodide would otherwise compile at every start.
#: Chosen so that a first visit stays within its 3.4 MB (benchmarks/page_load.py).
PRECOMPILE_BUDGET = 140_000


class StdlibError(Exception):
    """The keep list does not fit the Pyodide zip (made for another Pyodide version)."""


def read_keep_list(path: Path = KEEP_FILE) -> list[str]:
    """The zip entry names of ``path``, in file order, without comments and blank lines."""
    names = []
    for line in path.read_text("utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            names.append(line)
    return names


def trim_stdlib(data: bytes, keep: list[str]) -> bytes:
    """The zip ``data`` with only the entries ``keep`` names (and their folders), all stored.

    Raises :class:`StdlibError` naming the entries ``keep`` asks for that the zip does not hold.
    """
    source = zipfile.ZipFile(io.BytesIO(data))
    infos = source.infolist()
    present = {info.filename for info in infos}
    missing = [name for name in keep if name not in present]
    if missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        shown = ", ".join(missing[:5]) + more
        raise StdlibError(f"{KEEP_FILE.name} names entries this Pyodide's python_stdlib.zip lacks: "
                          f"{shown} (rerun `node tests/pyodide/stdlib_trace.mjs --write`)")
    wanted = set(keep)
    for name in keep:
        for parent in PurePosixPath(name).parents:
            if str(parent) != ".":
                wanted.add(f"{parent}/")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as target:
        for info in infos:
            if info.filename not in wanted:
                continue
            entry = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            entry.external_attr = info.external_attr
            entry.create_system = info.create_system
            target.writestr(entry, b"" if info.is_dir() else source.read(info))
    return buffer.getvalue()


def minify_stdlib(data: bytes, pyodide: Path, cache: Path | None,
                  budget: int = PRECOMPILE_BUDGET) -> bytes:
    """``data`` (a stdlib zip) with docstrings and comments removed by Pyodide's own Python.

    The modules that save Pyodide's start the most compiling per byte added are shipped compiled
    (``name.pyc`` instead of ``name.py``) until ``budget`` compressed bytes are added (0: none).

    The stripping runs in Pyodide (``node stdlib_minify.mjs``), because the host Python may be
    older than Pyodide's and unable to parse its standard library. Results are cached in
    ``cache`` by the hash of the input, the script and the runtime. Raises :class:`StdlibError`
    when Node is missing or the script fails.
    """
    node = shutil.which("node")
    if node is None:
        raise StdlibError("node is not installed (needed to minify the standard library)")
    wasm = pyodide / "pyodide.asm.wasm"
    key = hashlib.sha256(data + MINIFY_SCRIPT.read_bytes() + str(budget).encode()
                         + hashlib.sha256(wasm.read_bytes()).digest()).hexdigest()
    entry = cache / key[:2] / f"{key}.stdlib.zip" if cache else None
    if entry is not None and entry.is_file():
        cached = entry.read_bytes()
        if _is_zip(cached):
            return cached
    with tempfile.TemporaryDirectory(prefix="rrsite-stdlib-") as work:
        source, target = Path(work) / "in.zip", Path(work) / "out.zip"
        source.write_bytes(data)
        try:
            subprocess.run([node, str(MINIFY_SCRIPT), str(pyodide), str(source), str(target),
                            str(budget)],
                           check=True, capture_output=True, timeout=MINIFY_TIMEOUT_S)
        except subprocess.CalledProcessError as error:
            detail = error.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
            raise StdlibError(f"{MINIFY_SCRIPT.name} failed: {' '.join(detail)}") from None
        except subprocess.TimeoutExpired:
            raise StdlibError(f"{MINIFY_SCRIPT.name} took over {MINIFY_TIMEOUT_S} s") from None
        result = target.read_bytes()
    if not _is_zip(result):
        raise StdlibError(f"{MINIFY_SCRIPT.name} wrote no zip")
    if entry is not None:
        store_cache_entry(entry, result)
    return result


def _is_zip(data: bytes) -> bool:
    try:
        return zipfile.ZipFile(io.BytesIO(data)).testzip() is None
    except zipfile.BadZipFile:
        return False


def main(argv: list[str] | None = None) -> int:
    """``python -m rrsite.site.stdlib PYODIDE_DIR OUT.zip``: the zip a build ships (for tests)."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m rrsite.site.stdlib PYODIDE_DIR OUT.zip", file=sys.stderr)
        return 2
    from .assets import default_cache_dir

    try:
        full = (Path(args[0]) / "python_stdlib.zip").read_bytes()
        trimmed = trim_stdlib(full, read_keep_list())
        shipped = minify_stdlib(trimmed, Path(args[0]), default_cache_dir())
    except (OSError, zipfile.BadZipFile, StdlibError) as error:
        print(f"{args[0]}: {error}", file=sys.stderr)
        return 1
    Path(args[1]).write_bytes(shipped)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
