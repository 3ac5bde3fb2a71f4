"""The trimmed, minified standard library that `rrsite build` ships by default."""

from __future__ import annotations

import ast
import io
import threading
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rrsite.site import pyodide_package_loader as stand_in
from rrsite.site.builder import BuildError, build
from rrsite.site.stdlib import (
    KEEP_FILE,
    OPTIONAL,
    REPLACED,
    StdlibError,
    minify_stdlib,
    read_keep_list,
    shipped_stdlib,
    traced_library,
    trim_stdlib,
)

ROOT = Path(__file__).resolve().parents[2]
PYODIDE = ROOT / "node_modules" / "pyodide"
SURVEYS = ROOT / "surveys"
TEMPLATES = Path(__file__).resolve().parent / "fixtures" / "templates"


def make_zip(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_trim_keeps_exactly_the_listed_files_and_their_folders():
    data = make_zip({"a.py": b"A = 1\n", "pkg/": b"", "pkg/__init__.py": b"", "pkg/sub/": b"",
                     "pkg/sub/m.py": b"M = 2\n", "pkg/other.py": b"O = 3\n", "zz.py": b"Z\n"})
    trimmed = zipfile.ZipFile(io.BytesIO(trim_stdlib(data, ["pkg/sub/m.py", "a.py"])))
    assert trimmed.namelist() == ["a.py", "pkg/", "pkg/sub/", "pkg/sub/m.py"]
    assert trimmed.read("pkg/sub/m.py") == b"M = 2\n"
    assert {info.compress_type for info in trimmed.infolist()} == {zipfile.ZIP_STORED}


def test_trim_names_the_entries_a_zip_lacks():
    data = make_zip({"a.py": b""})
    with pytest.raises(StdlibError, match=r"lacks: b\.py, c/d\.py .*stdlib_trace\.mjs --write"):
        trim_stdlib(data, ["a.py", "b.py", "c/d.py"])


def test_the_package_loader_is_rrsites_stand_in_and_optional_modules_are_left_out():
    loader = "pyodide/_package_loader.py"
    data = make_zip({"a.py": b"A = 1\n", loader: b"import zipfile, shutil, tempfile\n",
                     "ssl.py": b"import pathlib\n", "bz2.py": b"", "compression/": b"",
                     "compression/zstd/__init__.py": b"", "compressionist.py": b"C = 1\n"})
    own = REPLACED[loader].read_bytes()
    trimmed = zipfile.ZipFile(io.BytesIO(trim_stdlib(data, ["a.py", loader])))
    assert trimmed.read(loader) == own and trimmed.read("a.py") == b"A = 1\n"
    # the trace's library: every entry but the optional ones, with the stand-in in place
    traced = zipfile.ZipFile(io.BytesIO(traced_library(data)))
    assert sorted(traced.namelist()) == ["a.py", "compressionist.py", loader]
    assert traced.read(loader) == own
    assert {"ssl.py", "bz2.py", "lzma.py", "compression/"} <= set(OPTIONAL)


def test_the_stand_in_answers_what_pyodides_start_reads_and_refuses_to_install():
    assert str(stand_in.SITE_PACKAGES).endswith("site-packages")
    assert stand_in.get_install_dir() == stand_in.get_install_dir("site") \
        == str(stand_in.SITE_PACKAGES)
    assert stand_in.get_install_dir("dynlib") == str(stand_in.DSO_DIR) == "/usr/lib"
    assert stand_in.init_loaded_packages() is None
    with pytest.raises(RuntimeError, match="installs no packages"):
        stand_in.unpack_buffer(buffer=b"", filename="x.whl", extract_dir=None)
    # it imports nothing that the real loader imported for unpacking
    tree = ast.parse(REPLACED["pyodide/_package_loader.py"].read_text("utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported == {"site"}


def test_keep_list_is_a_trace_of_this_pyodide():
    keep = read_keep_list()
    first = KEEP_FILE.read_text("utf-8").splitlines()[0]
    assert first.startswith("# Pyodide 314.0.7")  # the pinned version in package.json
    assert len(keep) == len(set(keep)) and keep == sorted(keep)
    full = zipfile.ZipFile(PYODIDE / "python_stdlib.zip").namelist()
    assert set(keep) <= set(full)
    # what core imports at the top of its modules is there (the trace is checked in full by
    # tests/pyodide/run_core_tests.mjs, inside Pyodide)
    for name in ("json/__init__.py", "json/decoder.py", "random.py", "dataclasses.py",
                 "typing.py", "functools.py"):
        assert name in keep
    assert len(keep) < len(full) / 3


@pytest.mark.slow
def test_minify_strips_docstrings_and_comments_and_keeps_the_code(tmp_path):
    source = (b'"""Module doc."""\n# a comment\ndef f(x):\n    """Doc."""\n'
              b'    return x + 1  # why\n\nclass C:\n    """Only a docstring."""\n')
    data = make_zip({"m.py": source, "data.txt": b"keep me\n"})
    out = zipfile.ZipFile(io.BytesIO(minify_stdlib(data, PYODIDE, tmp_path / "cache", budget=0)))
    text = out.read("m.py").decode()
    assert "doc" not in text.lower() and "comment" not in text and "why" not in text
    tree = ast.parse(text)
    namespace: dict[str, object] = {}
    exec(compile(tree, "m.py", "exec"), namespace)
    assert namespace["f"](41) == 42  # type: ignore[operator]
    assert out.read("data.txt") == b"keep me\n"
    cached = list((tmp_path / "cache").rglob("*.stdlib.zip"))
    assert len(cached) == 1
    # a second call is served from the cache (same bytes)
    assert minify_stdlib(data, PYODIDE, tmp_path / "cache", budget=0) == cached[0].read_bytes()


@pytest.mark.slow
def test_minify_ships_modules_compiled_within_the_budget(tmp_path):
    sources = {f"m{i}.py": f"def f{i}(x):\n    return x + {i}\n".encode() * 40 for i in range(6)}
    data = make_zip({**sources, "pkg/": b"", "data.txt": b"keep me\n"})
    everything = zipfile.ZipFile(io.BytesIO(minify_stdlib(data, PYODIDE, None, budget=10**6)))
    assert everything.namelist() == [*(f"{name}c" for name in sources), "pkg/", "data.txt"]
    pyc = everything.read("m0.pyc")
    assert pyc[2:4] == b"\r\n"  # a magic number (of Pyodide's Python, not the host's)
    assert int.from_bytes(pyc[4:8], "little") == 0b01  # hash-based, unchecked: no source needed
    none = zipfile.ZipFile(io.BytesIO(minify_stdlib(data, PYODIDE, None, budget=0)))
    assert [name for name in none.namelist() if name.endswith(".pyc")] == []
    # a small budget: some modules, each costing bytes, the rest stay source
    some = zipfile.ZipFile(io.BytesIO(minify_stdlib(data, PYODIDE, None, budget=1000)))
    assert 0 < len([name for name in some.namelist() if name.endswith(".pyc")]) < len(sources)


@pytest.mark.slow
def test_minify_reports_a_module_that_does_not_parse(tmp_path):
    data = make_zip({"bad.py": b"def (:\n"})
    with pytest.raises(StdlibError, match="stdlib_minify.mjs failed"):
        minify_stdlib(data, PYODIDE, None)


@pytest.mark.slow
def test_build_ships_the_trimmed_library_and_it_is_smaller(tmp_path):
    result = build([SURVEYS / "honor-code.md"], tmp_path / "dist", TEMPLATES, None,
                   compress=False, cache=tmp_path / "cache")
    (folder,) = (result.dist / "_rr").glob("pyodide-*")
    shipped = zipfile.ZipFile(folder / "python_stdlib.zip")
    files = [name for name in shipped.namelist() if not name.endswith("/")]
    # every kept module, each of them compiled (name.pyc instead of name.py) within the budget
    assert sorted(name.removesuffix("c") for name in files) == read_keep_list()
    compiled = [name for name in files if name.endswith(".pyc")]
    assert len(compiled) == len([name for name in files if name.endswith((".py", ".pyc"))])
    full = zipfile.ZipFile(PYODIDE / "python_stdlib.zip")
    original = full.read("json/decoder.py")
    compiled_module = shipped.read("json/decoder.pyc")
    # bytecode of the minified source: the names stay, the docstrings are gone
    assert b"JSONObject" in compiled_module and b"JSONObject" in original
    docstring = b"Decode a JSON document"
    assert docstring in original and docstring not in compiled_module
    assert len(files) < len(full.namelist()) / 3
    # the package loader is rrsite's stand-in; what only the real one and the optional modules
    # imported is not shipped
    assert b"installs no packages" in shipped.read("pyodide/_package_loader.pyc")
    for absent in ("zipfile/__init__.pyc", "shutil.pyc", "tempfile.pyc", "pathlib/__init__.pyc",
                   "ssl.pyc", "bz2.pyc", "lzma.pyc", "compression/zstd/__init__.pyc"):
        assert absent not in files


def test_a_keep_list_that_does_not_fit_the_runtime_fails_the_build(tmp_path):
    pyodide = tmp_path / "pyodide"
    pyodide.mkdir()
    for path in PYODIDE.iterdir():
        if path.is_file() and path.name != "python_stdlib.zip":
            (pyodide / path.name).symlink_to(path)
    (pyodide / "python_stdlib.zip").write_bytes(make_zip({"other.py": b""}))
    with pytest.raises(BuildError, match=r"python_stdlib\.zip: .*lacks: .*--full-stdlib"):
        build([SURVEYS / "honor-code.md"], tmp_path / "dist", TEMPLATES, pyodide,
              compress=False, cache=False)


def test_builds_at_once_on_a_cold_cache_minify_the_library_once(tmp_path, monkeypatch):
    """The shipped library is made once (Node started once) when two builds miss it at once."""
    made: list[int] = []
    inside = threading.Semaphore(0)

    def slow_minify(data: bytes, pyodide: Path, cache: object, budget: int = 0) -> bytes:
        made.append(len(data))
        inside.release()
        time.sleep(0.5)
        return data

    monkeypatch.setattr("rrsite.site.stdlib.minify_stdlib", slow_minify)
    cache = tmp_path / "cache"
    with ThreadPoolExecutor(max_workers=2) as pool:
        first = pool.submit(shipped_stdlib, PYODIDE, cache)
        assert inside.acquire(timeout=30)
        second = pool.submit(shipped_stdlib, PYODIDE, cache)
        (one, notes_one), (two, notes_two) = first.result(), second.result()
    assert len(made) == 1
    assert one == two and notes_one == notes_two == []
