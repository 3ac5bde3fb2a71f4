"""The trimmed standard library the site ships: only what Pyodide's start and rrsite/core import.

Pyodide's ``python_stdlib.zip`` holds the whole standard library (2.5 MB, 1.6 MB brotli); a
respondent's page needs a small part of it. Which part is not guessed: ``stdlib_keep.txt`` beside
this module lists the zip entries that were imported when Pyodide started, ran the worker's start
steps, imported every module rrsite/core imports (at any depth, also inside functions) and answered
every example survey's questions. ``node tests/pyodide/stdlib_trace.mjs --write`` makes the list;
``make test`` (tests/pyodide/run_core_tests.mjs) fails when the trace and the list disagree and runs
rrsite/core inside Pyodide against the trimmed zip, so a missing module fails CI. One entry,
Pyodide's package loader, is shipped as rrsite's own stand-in (``REPLACED``,
pyodide_package_loader.py: the page installs no package); the trace runs with it in place.

Minifying starts Node and Pyodide (3-10 s), so :func:`shipped_stdlib` caches the zip a build ships
under a key made of everything that determines it: the Pyodide runtime's files (which carry its
version), the keep list, the minifying script, this module's source and the precompile budget. A
survey edit changes none of them, so `rrsite build`, `rrsite check` and every `rrsite preview`
rebuild after the first are served from the cache; a new Pyodide, keep list or budget gets a new
entry (a stale one cannot be served). Entries are written atomically and checked (zip CRCs) before
use.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from .assets import made_once, store_cache_entry

#: The list of kept zip entries, one a line (``#`` comments; the first names the Pyodide version).
KEEP_FILE = Path(__file__).with_name("stdlib_keep.txt")
#: The Node script that strips docstrings and comments with Pyodide's own Python.
MINIFY_SCRIPT = Path(__file__).with_name("stdlib_minify.mjs")
#: Seconds the minifying Node process may take (it starts Pyodide once: about 3 s).
MINIFY_TIMEOUT_S = 180
#: Compressed bytes (zlib -9, per module) the build may add to the zip by shipping modules as
#: bytecode (``name.pyc``) instead of source, which Pyodide would otherwise compile at every start.
#: Enough for every kept module (about 0.5 MB by that per-module measure; 0.17 MB more once the
#: whole zip is brotli-compressed, as it is served): Python's start in a new interpreter then
#: compiles nothing of the library, which cut a warm start in Chromium by a third (1.19 -> 0.82 s
#: on loopback, 2.3 -> 1.4 s on the phone profile; benchmarks/page_load.py) for a first visit of
#: 3.60 MB instead of 3.43.
PRECOMPILE_BUDGET = 1_000_000


#: Entries of Pyodide's library shipped with rrsite's own source instead (see that file).
REPLACED = {"pyodide/_package_loader.py": Path(__file__).with_name("pyodide_package_loader.py")}
#: Entries the page does without although Pyodide's start imports them: only inside
#: ``try: import ... except ImportError`` (zipfile and shutil for the archive codecs bz2, lzma and
#: zstd; asyncio for TLS, which Pyodide only stubs), and neither the worker nor rrsite/core uses
#: them. The trace runs without them, so neither they nor what only they import (ssl imports
#: pathlib and glob) get into the keep list. A name ending in "/" is a whole package.
OPTIONAL = ("bz2.py", "lzma.py", "ssl.py", "_ssl.py", "compression/")

#: The runtime files whose bytes determine the minified result (the interpreter and its library).
RUNTIME_KEY_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")


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


def replaced_entries() -> dict[str, bytes]:
    """The entries of :data:`REPLACED`: name -> the source shipped instead of Pyodide's."""
    return {name: path.read_bytes() for name, path in REPLACED.items()}


def traced_library(data: bytes) -> bytes:
    """The library the trace starts Pyodide on: the whole zip ``data``, untrimmed.

    As the site would ship it without a keep list: the :data:`REPLACED` entries swapped in and
    the :data:`OPTIONAL` ones left out.
    """
    names = [info.filename for info in zipfile.ZipFile(io.BytesIO(data)).infolist()
             if not info.is_dir() and not _optional(info.filename)]
    return trim_stdlib(data, names)


def _optional(name: str) -> bool:
    """Whether the zip entry ``name`` is one of :data:`OPTIONAL` (or inside one of its packages)."""
    return any(name.startswith(entry) if entry.endswith("/") else name == entry
               for entry in OPTIONAL)


def trim_stdlib(data: bytes, keep: list[str]) -> bytes:
    """The zip ``data`` with only the entries ``keep`` names (and their folders), all stored.

    The :data:`REPLACED` entries hold rrsite's source instead of Pyodide's. Raises
    :class:`StdlibError` naming the entries ``keep`` asks for that the zip does not hold.
    """
    source = zipfile.ZipFile(io.BytesIO(data))
    infos = source.infolist()
    present = {info.filename for info in infos}
    replaced = replaced_entries()
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
            if info.is_dir():
                body = b""
            elif info.filename in replaced:
                body = replaced[info.filename]
            else:
                body = source.read(info)
            target.writestr(entry, body)
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


def pyodide_version(pyodide: Path) -> str:
    """The version in the runtime folder's package.json, or ``unknown``."""
    try:
        return str(json.loads((pyodide / "package.json").read_text("utf-8"))["version"])
    except (OSError, ValueError, KeyError, TypeError):
        return "unknown"


def stdlib_cache_key(pyodide: Path, budget: int = PRECOMPILE_BUDGET,
                     keep_file: Path = KEEP_FILE, files: Mapping[str, bytes] | None = None) -> str:
    """The SHA-256 of everything the shipped standard library depends on, and nothing else.

    Pyodide's version and the digest of each of its runtime files, the keep list, the minifying
    script, this module's source (the trimming code) and the precompile budget; each part is
    length-prefixed so that no two different inputs make the same stream. The survey files and
    templates are not in it: editing a survey never misses the cache. ``files``: runtime files
    already read (name -> bytes), read from ``pyodide`` otherwise.
    """
    files = files or {}
    digest = hashlib.sha256()

    def part(label: str, data: bytes) -> None:
        digest.update(f"{label}:{len(data)}:".encode())
        digest.update(data)

    part("format", b"rrsite shipped stdlib 1")
    part("version", pyodide_version(pyodide).encode())
    for name in RUNTIME_KEY_FILES:
        data = files[name] if name in files else (pyodide / name).read_bytes()
        part(name, hashlib.sha256(data).digest())
    part("keep", keep_file.read_bytes())
    part("script", MINIFY_SCRIPT.read_bytes())
    part("module", Path(__file__).read_bytes())
    for name, body in sorted(replaced_entries().items()):
        part(f"replaced {name}", body)
    part("budget", str(budget).encode())
    return digest.hexdigest()


def shipped_stdlib(pyodide: Path, cache: Path | None, budget: int = PRECOMPILE_BUDGET,
                   keep_file: Path = KEEP_FILE,
                   files: Mapping[str, bytes] | None = None) -> tuple[bytes, list[str]]:
    """The standard library a build ships: trimmed to ``keep_file``, minified, and notes.

    Served from ``cache`` under :func:`stdlib_cache_key` when present and intact; otherwise made
    (Node starts once) and stored. When minifying is impossible (no Node) the trimmed zip is
    returned with a note and nothing is cached, so the next build tries again. Raises
    :class:`StdlibError` when the keep list does not fit the runtime.
    """
    key = stdlib_cache_key(pyodide, budget, keep_file, files)
    entry = cache / key[:2] / f"{key}.shipped-stdlib.zip" if cache else None

    def cached() -> tuple[bytes, list[str]] | None:
        if entry is None or not entry.is_file():
            return None
        try:
            data = entry.read_bytes()
        except OSError:
            return None
        return (data, []) if _is_zip(data) else None

    def make() -> tuple[bytes, list[str]]:
        full = ((files or {}).get("python_stdlib.zip")
                or (pyodide / "python_stdlib.zip").read_bytes())
        trimmed = trim_stdlib(full, read_keep_list(keep_file))
        try:
            result = minify_stdlib(trimmed, pyodide, None, budget)
        except StdlibError as error:
            return trimmed, [f"the standard library is trimmed but not minified: {error}"]
        if entry is not None:
            store_cache_entry(entry, result)
        return result, []

    return made_once(entry, cached, make)  # builds running at once start Node once


def _is_zip(data: bytes) -> bool:
    try:
        return zipfile.ZipFile(io.BytesIO(data)).testzip() is None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
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
        shipped, notes = shipped_stdlib(Path(args[0]), default_cache_dir())
        if notes:
            raise StdlibError("; ".join(notes))
    except (OSError, zipfile.BadZipFile, StdlibError) as error:
        print(f"{args[0]}: {error}", file=sys.stderr)
        return 1
    Path(args[1]).write_bytes(shipped)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
