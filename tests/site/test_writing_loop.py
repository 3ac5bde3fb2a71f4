"""The writing loop: check and preview reuse the shipped standard library.

Minifying the standard library starts Node and Pyodide; the tests count those starts (the real
``subprocess.run`` is called, only counted) to show that `rrsite check`, `rrsite build` and
`rrsite preview`'s rebuilds after the first never start Node again for a survey edit, and that a
change of anything the result depends on (budget, keep list, runtime) does.
"""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
import pytest

from rrsite import cli
from rrsite.site import stdlib
from rrsite.site.builder import default_templates, load_templates
from rrsite.site.preview import preview_build

ROOT = Path(__file__).resolve().parents[2]
PYODIDE = ROOT / "node_modules" / "pyodide"
SURVEY = ROOT / "surveys" / "honor-code.md"


@pytest.fixture
def node_starts(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every run of stdlib_minify.mjs from now on (each one really runs)."""
    starts: list[list[str]] = []
    real: Callable[..., Any] = stdlib.subprocess.run

    def counting(command: list[str], *args: Any, **kwargs: Any) -> Any:
        if str(stdlib.MINIFY_SCRIPT) in command:
            starts.append(list(command))
        return real(command, *args, **kwargs)

    monkeypatch.setattr(stdlib.subprocess, "run", counting)
    return starts


def shipped(dist: Path) -> bytes:
    (folder,) = (dist / "_rr").glob("pyodide-*")
    return (folder / "python_stdlib.zip").read_bytes()


def test_check_build_and_preview_start_node_once_for_many_edits(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, node_starts: list[list[str]]) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("RRSITE_CACHE_DIR", str(cache))
    survey = tmp_path / "honor-code.md"
    text = SURVEY.read_text("utf-8")
    survey.write_text(text, "utf-8")
    assert cli.main(["check", str(survey)]) == 0
    assert len(node_starts) == 1  # the first check fills the cache
    entries = list(cache.rglob("*.shipped-stdlib.zip"))
    assert len(entries) == 1
    for number in range(2, 5):  # edits of the survey: a title, then a question's text
        survey.write_text(text.replace("title:", f"title: Edit {number} of", 1), "utf-8")
        assert cli.main(["check", str(survey)]) == 0
    dist = tmp_path / "preview"
    for number in range(1, 3):
        survey.write_text(text.replace("## ", f"## ({number}) ", 1), "utf-8")
        preview_build([survey], dist, default_templates(), PYODIDE, number)
        assert f"({number})" in (dist / "honor-code" / "index.html").read_text("utf-8")
    assert cli.main(["build", str(survey), "-o", str(tmp_path / "dist"), "--no-compress"]) == 0
    assert len(node_starts) == 1
    # what they ship is the cached library, minified (no docstrings) and trimmed
    assert shipped(dist) == shipped(tmp_path / "dist") == entries[0].read_bytes()
    names = zipfile.ZipFile(io.BytesIO(entries[0].read_bytes())).namelist()
    assert sorted(name.removesuffix("c") for name in names if not name.endswith("/")) \
        == stdlib.read_keep_list()


def copy_runtime(target: Path) -> Path:
    """A runtime folder of links to the real one, to change one file in it."""
    target.mkdir()
    for path in PYODIDE.iterdir():
        if path.is_file():
            (target / path.name).symlink_to(path)
    return target


def rewrite_zip(source: Path, target: Path, changes: dict[str, bytes]) -> None:
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            new.writestr(info, changes.get(info.filename, old.read(info)))


def test_the_key_covers_budget_keep_list_and_runtime(tmp_path: Path) -> None:
    keep = tmp_path / "keep.txt"
    keep.write_text(stdlib.KEEP_FILE.read_text("utf-8") + "# a comment\n", "utf-8")
    runtime = copy_runtime(tmp_path / "pyodide")
    base = stdlib.stdlib_cache_key(runtime, 1000, keep)
    assert stdlib.stdlib_cache_key(runtime, 1000, keep) == base
    assert stdlib.stdlib_cache_key(PYODIDE, 1000, keep) == base  # the same bytes, the same key
    assert stdlib.stdlib_cache_key(runtime, 1001, keep) != base
    keep.write_text(stdlib.KEEP_FILE.read_text("utf-8"), "utf-8")
    assert stdlib.stdlib_cache_key(runtime, 1000, keep) != base
    keep.write_text(stdlib.KEEP_FILE.read_text("utf-8") + "# a comment\n", "utf-8")
    assert stdlib.stdlib_cache_key(runtime, 1000, keep) == base
    package = json.loads((PYODIDE / "package.json").read_text("utf-8"))
    (runtime / "package.json").unlink()
    (runtime / "package.json").write_text(json.dumps({**package, "version": "0.0.1"}), "utf-8")
    assert stdlib.stdlib_cache_key(runtime, 1000, keep) != base
    shutil.copy(PYODIDE / "package.json", tmp_path / "package.json")
    (runtime / "package.json").unlink()
    (runtime / "package.json").symlink_to(PYODIDE / "package.json")
    assert stdlib.stdlib_cache_key(runtime, 1000, keep) == base
    for name in stdlib.RUNTIME_KEY_FILES:
        (runtime / name).unlink()
        (runtime / name).write_bytes((PYODIDE / name).read_bytes() + b"\0")
        assert stdlib.stdlib_cache_key(runtime, 1000, keep) != base, name
        (runtime / name).unlink()
        (runtime / name).symlink_to(PYODIDE / name)


def test_a_changed_input_or_a_broken_entry_is_never_served(
        tmp_path: Path, node_starts: list[list[str]]) -> None:
    # A keep list of a few modules: each of the five Node runs below minifies those only (the
    # cache's keys and checks are the same for any list; the real list is built in test_stdlib)
    small = tmp_path / "small-keep.txt"
    header = [line for line in stdlib.KEEP_FILE.read_text("utf-8").splitlines(keepends=True)
              if line.startswith("#")]
    small.write_text("".join(header) + "bisect.py\nheapq.py\nkeyword.py\n", "utf-8")
    cache = tmp_path / "cache"
    first, notes = stdlib.shipped_stdlib(PYODIDE, cache, 0, small)
    assert notes == [] and len(node_starts) == 1
    assert sorted(zipfile.ZipFile(io.BytesIO(first)).namelist()) == [
        "bisect.py", "heapq.py", "keyword.py"]
    assert stdlib.shipped_stdlib(PYODIDE, cache, 0, small)[0] == first
    assert len(node_starts) == 1
    # another budget: a new entry, with modules compiled this time
    budgeted = stdlib.shipped_stdlib(PYODIDE, cache, stdlib.PRECOMPILE_BUDGET, small)[0]
    assert len(node_starts) == 2
    pyc = [n for n in zipfile.ZipFile(io.BytesIO(budgeted)).namelist() if n.endswith(".pyc")]
    assert pyc and not [n for n in zipfile.ZipFile(io.BytesIO(first)).namelist()
                        if n.endswith(".pyc")]
    # another keep list (one module fewer): a new entry without that module
    keep = tmp_path / "keep.txt"
    lines = small.read_text("utf-8").splitlines(keepends=True)
    keep.write_text("".join(line for line in lines if line.strip() != "keyword.py"), "utf-8")
    assert "keyword.py" in zipfile.ZipFile(io.BytesIO(first)).namelist()
    fewer = stdlib.shipped_stdlib(PYODIDE, cache, 0, keep)[0]
    assert len(node_starts) == 3
    assert "keyword.py" not in zipfile.ZipFile(io.BytesIO(fewer)).namelist()
    # another runtime (a kept module of its standard library changed): its own module is shipped
    runtime = copy_runtime(tmp_path / "pyodide")
    (runtime / "python_stdlib.zip").unlink()
    rewrite_zip(PYODIDE / "python_stdlib.zip", runtime / "python_stdlib.zip",
                {"keyword.py": b"kwlist = ['changed_in_this_runtime']\n"})
    changed = stdlib.shipped_stdlib(runtime, cache, 0, small)[0]
    assert len(node_starts) == 4
    assert b"changed_in_this_runtime" in zipfile.ZipFile(io.BytesIO(changed)).read("keyword.py")
    assert b"changed_in_this_runtime" not in zipfile.ZipFile(io.BytesIO(first)).read("keyword.py")
    # a damaged entry (a write cut short by a crash elsewhere) is made again, not served
    key = stdlib.stdlib_cache_key(PYODIDE, 0, small)
    entry = cache / key[:2] / f"{key}.shipped-stdlib.zip"
    entry.write_bytes(first[: len(first) // 2])
    assert stdlib.shipped_stdlib(PYODIDE, cache, 0, small)[0] == first
    assert len(node_starts) == 5
    assert entry.read_bytes() == first
    assert not [p for p in entry.parent.iterdir() if p.name.startswith(".")]  # no temp files


def test_compiled_templates_are_cached_and_follow_the_source(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str] = []
    real = jinja2.Environment.compile

    def counting(self: jinja2.Environment, source: Any, *args: Any, **kwargs: Any) -> Any:
        compiled.append(str(source))
        return real(self, source, *args, **kwargs)

    monkeypatch.setattr(jinja2.Environment, "compile", counting)
    templates = tmp_path / "templates"
    templates.mkdir()
    page = templates / "page.html"
    page.write_text("{{ 20 + 22 }} first", "utf-8")
    cache = tmp_path / "cache"

    def render() -> str:
        loaded = load_templates(templates, [], cache)
        assert loaded is not None
        return loaded.environment.get_template("page.html").render()

    assert render() == "42 first"
    assert len(compiled) == 1 and list((cache / "templates").rglob("*.cache"))
    assert render() == "42 first"
    assert len(compiled) == 1  # served compiled from the cache
    page.write_text("{{ 20 + 22 }} second", "utf-8")
    assert render() == "42 second"  # a changed template is compiled again, never served stale
    assert len(compiled) == 2
