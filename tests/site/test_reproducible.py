"""`rrsite build` is reproducible: the same sources give the same bytes, wherever and whenever.

The example surveys are built twice, as two `rrsite build` processes in different folders, from
different working directories, with another hash seed, time zone and umask, and with separate
caches: every file of the two sites, the compressed copies and the file list included, is compared
byte for byte. The second build makes its trimmed standard library (Node and Pyodide minify it)
and its compiled templates afresh; its compressed copies of files whose bytes are the first
build's come from the first build's cache (brotli at quality 11 takes 40 s for the wasm alone).
That cache is addressed by the SHA-256 of the file compressed, so it cannot stand in for a file
that differs; that brotli and gzip themselves give the same bytes twice is checked apart.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import brotli

from rrsite.site.assets import default_cache_dir

ROOT = Path(__file__).resolve().parents[2]
SURVEYS = ROOT / "surveys"


def every_byte(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def run_build(sources: Path, dist: Path, cwd: Path, env: dict[str, str]) -> None:
    cwd.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([sys.executable, "-m", "rrsite", "build", str(sources), "-o", str(dist)],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr


def test_two_builds_in_different_folders_are_the_same_bytes(tmp_path: Path) -> None:
    first_sources = tmp_path / "alpha" / "surveys"
    second_sources = tmp_path / "beta" / "deeper" / "study-files"
    shutil.copytree(SURVEYS, first_sources)
    shutil.copytree(SURVEYS, second_sources)
    shared_cache = default_cache_dir()
    assert shared_cache is not None
    base_env = {key: value for key, value in os.environ.items() if key != "RRSITE_CACHE_DIR"}
    first_env = {**base_env, "PYTHONHASHSEED": "1", "TZ": "UTC",
                 "RRSITE_CACHE_DIR": str(shared_cache)}
    run_build(first_sources, tmp_path / "alpha" / "dist", tmp_path / "alpha", first_env)

    fresh = tmp_path / "fresh-cache"
    for path in (tmp_path / "alpha" / "dist").rglob("*"):
        if not path.is_file() or path.suffix in (".br", ".gz"):
            continue
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        for entry in (shared_cache / digest[:2]).glob(f"{digest}.*"):
            if entry.name.endswith((".br", ".gz", ".skip")):  # compressed copies only
                (fresh / digest[:2]).mkdir(parents=True, exist_ok=True)
                shutil.copy2(entry, fresh / digest[:2] / entry.name)
    second_env = {**base_env, "PYTHONHASHSEED": "4242", "TZ": "Pacific/Auckland",
                  "RRSITE_CACHE_DIR": str(fresh)}
    old_umask = os.umask(0o077)
    try:
        run_build(second_sources, tmp_path / "gamma" / "site", tmp_path / "elsewhere", second_env)
    finally:
        os.umask(old_umask)

    one = every_byte(tmp_path / "alpha" / "dist")
    two = every_byte(tmp_path / "gamma" / "site")
    assert sorted(one) == sorted(two)
    differing = [name for name in one if one[name] != two[name]]
    assert differing == []
    assert len(one) > 100 and "rrsite-files.json" in one
    # the second build made its standard library itself
    assert any(fresh.rglob("*.shipped-stdlib.zip"))


def test_brotli_and_gzip_give_the_same_bytes_twice() -> None:
    data = (ROOT / "templates" / "assets" / "page.js").read_bytes()
    assert brotli.compress(data, quality=11) == brotli.compress(data, quality=11)
    assert gzip.compress(data, compresslevel=9, mtime=0) == gzip.compress(data, compresslevel=9,
                                                                          mtime=0)
