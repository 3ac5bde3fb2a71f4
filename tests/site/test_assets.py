"""Hashed asset names, rewritten references, pre-compression rules, and the atomic swap."""

from __future__ import annotations

import gzip
import hashlib
import os
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import brotli
import pytest

from rrsite.site import assets
from rrsite.site.assets import (
    AssetError,
    content_hash,
    hash_assets,
    hashed_name,
    precompress,
)
from rrsite.site.swap import exchange, swap_in


def test_hashed_name_puts_the_hash_before_the_suffix():
    data = b"body {}"
    digest = hashlib.sha256(data).hexdigest()[:12]
    assert content_hash(data) == digest
    assert hashed_name("page.css", data) == f"page.{digest}.css"
    assert hashed_name("lib/page.min.js", data) == f"lib/page.min.{digest}.js"
    assert hashed_name("LICENSE", data) == f"LICENSE.{digest}"


def test_references_are_rewritten_and_hashed_after_rewriting():
    sources = {
        "a.js": b'import { b } from "./b.js";\nimport("./sub/c.js");\nconst u = "./none.js";',
        "b.js": b"export const b = 1;",
        "sub/c.js": b'export * from "../b.js"; fetch("./d.json");',
        "sub/d.json": b"{}",
        "s.css": b"a { background: url(sub/x.svg) } b { background: url(\"/abs.svg\") }",
        "sub/x.svg": b"<svg/>",
    }
    done = hash_assets(sources)
    b_name = done["b.js"][0]
    a_text = done["a.js"][1].decode()
    assert f'from "./{b_name}"' in a_text
    assert f'import("./sub/{done["sub/c.js"][0].split("/")[1]}")' in a_text
    assert '"./none.js"' in a_text  # not an asset: left alone
    c_text = done["sub/c.js"][1].decode()
    assert '"../b.js"' in c_text  # only ./ references are rewritten in scripts
    assert f'"./{done["sub/d.json"][0].split("/")[1]}"' in c_text
    css = done["s.css"][1].decode()
    assert f"url({done['sub/x.svg'][0]})" in css and 'url("/abs.svg")' in css
    for name, (hashed, data) in done.items():
        assert hashed == hashed_name(name, data)
    # change b.js: a.js refers to it, so a.js's name changes too
    changed = hash_assets({**sources, "b.js": b"export const b = 2;"})
    assert changed["a.js"][0] != done["a.js"][0]
    assert changed["s.css"][0] == done["s.css"][0]


def test_reference_cycles_are_refused():
    with pytest.raises(AssetError, match="cycle"):
        hash_assets({"a.js": b'import "./b.js";', "b.js": b'import "./a.js";'})


def test_precompress_rules(tmp_path):
    small = tmp_path / "small.js"
    small.write_text("x" * 1024)
    text = tmp_path / "big.js"
    text.write_text("const value = 1;\n" * 200)
    noise = tmp_path / "noise.bin"
    noise.write_bytes(random.Random(1).randbytes(5000))
    image = tmp_path / "photo.png"
    image.write_bytes(b"\0" * 5000)
    results = precompress([small, text, noise, image], cache=None)
    assert [r.path for r in results] == [noise, text]
    assert brotli.decompress((tmp_path / "big.js.br").read_bytes()) == text.read_bytes()
    assert gzip.decompress((tmp_path / "big.js.gz").read_bytes()) == text.read_bytes()
    made = sorted(p.name for p in tmp_path.iterdir() if p.suffix in (".br", ".gz"))
    assert made == ["big.js.br", "big.js.gz"]


def test_builds_at_once_on_a_cold_cache_compress_once(tmp_path, monkeypatch):
    """Two builds missing the same cache entry at once (two test workers on a fresh machine):
    the second waits for the first's entry instead of compressing the same bytes again."""
    made: list[int] = []
    inside = threading.Semaphore(0)

    def slow_brotli(data: bytes) -> bytes:
        made.append(len(data))
        inside.release()
        time.sleep(0.5)  # long enough for the other build to reach the entry
        return bytes(brotli.compress(data, quality=1))

    monkeypatch.setitem(assets._CODECS, "br", (slow_brotli, lambda blob: bytes(
        brotli.decompress(blob))))
    data = b"const value = 1;\n" * 500
    files = []
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        files.append(tmp_path / name / "big.js")
        files[-1].write_bytes(data)
    cache = tmp_path / "cache"
    with ThreadPoolExecutor(max_workers=2) as pool:
        first = pool.submit(precompress, [files[0]], cache)
        assert inside.acquire(timeout=10)  # the first build is compressing
        second = pool.submit(precompress, [files[1]], cache)
        results = [first.result(), second.result()]
    assert made == [len(data)]
    assert not [p for p in cache.rglob("*") if p.name.endswith(".lock")]  # removed once made
    assert [r[0].brotli_size for r in results] == [results[0][0].brotli_size] * 2
    for file in files:
        assert brotli.decompress(file.with_name("big.js.br").read_bytes()) == data
    # without a cache each build compresses for itself
    precompress([files[0]], None)
    assert made == [len(data)] * 2


def test_swap_in_replaces_a_folder(tmp_path):
    old, new = tmp_path / "dist", tmp_path / "built"
    old.mkdir()
    (old / "old.txt").write_text("old")
    new.mkdir()
    (new / "new.txt").write_text("new")
    inode = os.stat(new).st_ino
    swap_in(new, old)
    assert sorted(os.listdir(old)) == ["new.txt"] and os.stat(old).st_ino == inode
    assert not new.exists()
    fresh = tmp_path / "fresh"
    other = tmp_path / "other"
    other.mkdir()
    swap_in(other, fresh)
    assert fresh.is_dir() and not other.exists()


def test_exchange_is_atomic_on_linux(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    (first / "1").write_text("1")
    assert exchange(first, second) is True  # Linux with glibc >= 2.28, as on these machines
    assert (second / "1").exists() and not (first / "1").exists()


def test_workspaces_of_killed_builds_are_removed(tmp_path):
    import subprocess
    import sys

    from rrsite.site.builder import remove_stale_workspaces

    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)
    dead = tmp_path / f".dist.rrsite-build-{finished.stdout.strip()}-abcd"
    alive = tmp_path / f".dist.rrsite-build-{os.getpid()}-abcd"
    other = tmp_path / ".other.rrsite-build-1-abcd"
    for folder in (dead, alive, other):
        folder.mkdir()
    remove_stale_workspaces(tmp_path / "dist")
    assert not dead.exists() and alive.exists() and other.exists()
