"""Pinned code in the built pages, the file list of every file, and the code fingerprint.

Read from a build of surveys/ with the shipped templates (and the small fixture runtime): every
script and stylesheet a page loads carries the SHA-384 of the file it names; no script imports
another file (the build inlines a module's imports, and Pyodide's JavaScript into the worker);
the worker, the wasm, the standard library and the core bundle are pinned in the page's
configuration; the CSP allows nothing a
code-transparency scheme such as WEBCAT refuses; ``rrsite-files.json`` lists every file with its
SHA-256, and the fingerprint follows the code and nothing else.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import shutil
from pathlib import Path

import pytest

from rrsite.site.builder import BuildResult, build
from rrsite.site.filelist import FILE_LIST, code_fingerprint
from rrsite.site.headers import INTEGRITY_POLICY, parse_headers_file

ROOT = Path(__file__).resolve().parents[2]
PYODIDE = Path(__file__).resolve().parent / "fixtures" / "pyodide"
TEMPLATES = ROOT / "templates"
SURVEYS = ROOT / "surveys"
TAG = re.compile(r"<(script|link)\b([^>]*)>")
ATTRIBUTE = re.compile(r'(\w[\w-]*)="([^"]*)"')
IMPORT = re.compile(r"""from\s+["'](\./[^"']+)["']|import\s*\(\s*["'](\./[^"']+)["']""")
CONFIG = re.compile(r'<script type="application/json" id="rr-config">(.*?)</script>', re.S)


def sri(data: bytes) -> str:
    """SHA-384 in the form of the integrity attribute, computed here."""
    return "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode()


@pytest.fixture(scope="module")
def real_site(tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    """surveys/ with the shipped templates and the fixture runtime, compressed."""
    base = tmp_path_factory.mktemp("pinned")
    return build([SURVEYS], base / "dist", TEMPLATES, PYODIDE, cache=base / "cache")


def tags(page: Path) -> list[tuple[str, dict[str, str]]]:
    """(tag, attributes) of every script and link of a page, in document order."""
    text = page.read_text("utf-8")
    return [(name, {key: html.unescape(value) for key, value in ATTRIBUTE.findall(attrs)})
            for name, attrs in TAG.findall(text)]


def test_every_script_module_and_stylesheet_carries_the_hash_of_its_file(real_site):
    for survey in real_site.surveys:
        page = real_site.dist / survey.id / "index.html"
        loaded = 0
        for name, attrs in tags(page):
            rel = attrs.get("rel", "")
            if name == "script" and "src" in attrs or rel in ("stylesheet", "modulepreload"):
                url = attrs.get("src") or attrs["href"]
                target = (page.parent / url).resolve()
                assert attrs.get("integrity") == sri(target.read_bytes()), (survey.id, url)
                loaded += 1
            elif name == "script":
                assert attrs.get("type") == "application/json", attrs  # no inline code
        assert loaded >= 3, survey.id  # the stylesheet, guard.js, page.js


def test_no_script_of_a_page_imports_anything(real_site):
    """A module's imports carry no integrity: the build inlines them, and the worker holds
    Pyodide's JavaScript, so no script a page runs imports another file."""
    rr = real_site.dist / "_rr"
    scripts = list(rr.glob("*.js"))
    assert len(scripts) >= 10
    for script in scripts:
        text = script.read_text("utf-8")
        assert not re.search(r"""^\s*import\s*[{"'*\w]""", text, re.MULTILINE), script.name
        assert not re.search(r"""import\s*\(\s*["'`]\./""", text), script.name
    (worker,) = rr.glob("worker.*.js")
    text = worker.read_text("utf-8")
    assert text.startswith("// The randomizer's worker, with Pyodide's")
    assert "const rrsitePyodide = " in text and "createPyodideModule" in text
    assert not list(rr.glob("pyodide-*/pyodide*.mjs"))  # inside the worker, not shipped apart


def test_the_worker_runtime_and_core_are_pinned_in_the_config(real_site):
    for survey in real_site.surveys:
        page = real_site.dist / survey.id / "index.html"
        config = json.loads(CONFIG.search(page.read_text("utf-8")).group(1))  # type: ignore[union-attr]
        pins = config["integrity"]
        folder = page.parent
        assert pins["worker"] == sri((folder / config["worker_url"]).read_bytes())
        assert pins["core"] == sri((folder / config["core_url"]).read_bytes())
        runtime = folder / config["pyodide_url"]
        assert sorted(pins["runtime"]) == ["pyodide.asm.wasm", "python_stdlib.zip"]
        for name, value in pins["runtime"].items():
            assert value == sri((runtime / name).read_bytes()), name
        assert config["code_fingerprint"] == real_site.fingerprint


def test_the_policy_is_one_a_code_transparency_scheme_accepts(real_site):
    """WEBCAT: script-src only 'self'/'none'/'wasm-unsafe-eval', worker-src only 'self'/'none',
    no unsafe-inline or unsafe-eval anywhere, one policy."""
    rules = parse_headers_file((real_site.dist / "_headers").read_text("utf-8"))
    everything = dict(rules)["/*"]
    policy = {part.split()[0]: part.split()[1:]
              for part in everything["Content-Security-Policy"].split("; ")}
    assert policy["default-src"] == ["'none'"]
    assert set(policy["script-src"]) <= {"'self'", "'none'", "'wasm-unsafe-eval'"}
    assert set(policy["worker-src"]) <= {"'self'", "'none'"}
    sources = {source for values in policy.values() for source in values}
    assert not {"'unsafe-inline'", "'unsafe-eval'", "blob:", "data:"} & (
        set(policy["script-src"]) | set(policy["worker-src"]))
    assert "'unsafe-inline'" not in sources and "'unsafe-eval'" not in sources
    # Integrity-Policy on every survey's pages, not on the assets (a module worker cannot give
    # its imports integrity metadata; it checks them itself)
    for survey in real_site.surveys:
        assert dict(rules)[f"/{survey.id}/*"] == {"Integrity-Policy": INTEGRITY_POLICY}
    assert all("Integrity-Policy" not in headers for pattern, headers in rules
               if pattern in ("/*", "/_rr/*"))
    assert INTEGRITY_POLICY == "blocked-destinations=(script)"


def test_the_file_list_names_every_file_with_its_sha256(real_site):
    dist = real_site.dist
    listed = json.loads((dist / FILE_LIST).read_text("utf-8"))
    on_disk = {path.relative_to(dist).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
               for path in dist.rglob("*") if path.is_file() and path.name != FILE_LIST}
    assert listed["files"] == on_disk
    assert list(listed["files"]) == sorted(listed["files"])
    assert any(name.endswith(".br") for name in on_disk) and "_headers" in on_disk
    assert listed["format"] == 1 and listed["generator"].startswith("rrsite ")
    assert listed["code_fingerprint"] == real_site.fingerprint


def test_the_fingerprint_is_a_hash_of_the_code_under_rr(real_site):
    rr = real_site.dist / "_rr"
    lines = sorted(f"{path.relative_to(rr).as_posix()}\t"
                   f"{hashlib.sha256(path.read_bytes()).hexdigest()}\n"
                   for path in rr.rglob("*")
                   if path.is_file() and path.suffix not in (".br", ".gz"))
    digest = hashlib.sha256("".join(lines).encode()).hexdigest()[:16]
    assert real_site.fingerprint == "-".join(digest[i:i + 4] for i in range(0, 16, 4))
    assert code_fingerprint([("b", b"2"), ("a", b"1")]) == code_fingerprint([("a", b"1"),
                                                                            ("b", b"2")])
    page = (real_site.dist / "honor-code" / "index.html").read_text("utf-8")
    assert f"<code>{real_site.fingerprint}</code>" in page


def test_the_fingerprint_follows_the_code_not_the_surveys(tmp_path, real_site):
    one = build([SURVEYS / "honor-code.md"], tmp_path / "one", TEMPLATES, PYODIDE,
                compress=False, cache=tmp_path / "cache")
    assert one.fingerprint == real_site.fingerprint  # another set of surveys, the same code
    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATES, templates)
    css = templates / "assets" / "page.css"
    css.write_text(css.read_text("utf-8") + "\n/* one more line */\n", "utf-8")
    changed = build([SURVEYS / "honor-code.md"], tmp_path / "two", templates, PYODIDE,
                    compress=False, cache=tmp_path / "cache")
    assert changed.fingerprint != real_site.fingerprint


def test_number_questions_carry_the_step_their_reports_are_shown_to(real_site):
    page = real_site.dist / "hidden-numbers" / "index.html"
    config = json.loads(CONFIG.search(page.read_text("utf-8")).group(1))  # type: ignore[union-attr]
    numbers = [q for q in config["questions"] if q["type"] == "number" and q["sensitive"]]
    assert numbers and all(q["display_step"] > 0 for q in numbers)
    manifest = json.loads((page.parent / "survey.json").read_text("utf-8"))
    # the page's, not the manifest's
    assert all("display_step" not in q for q in manifest["questions"])


@pytest.mark.parametrize(("spec", "step"), [
    ({"name": "duchi", "epsilon": 1.0, "min": 0, "max": 30}, 0.01),
    ({"name": "piecewise", "epsilon": 1.0, "min": 0, "max": 200_000}, 100.0),
    ({"name": "duchi", "epsilon": 1.0, "min": 0, "max": 30, "integer": True}, 1.0),
    ({"name": "laplace", "epsilon": 1.0, "min": 0, "max": 100_000}, 100.0),
    ({"name": "additive", "scramble": {"normal": {"mean": 0, "sd": 10}}, "min": 0, "max": 1_000},
     0.01),
    ({"name": "mixture", "p": 0.5, "mask": {"uniform": {"min": 0, "max": 9}}, "min": 0,
      "max": 9, "integer": True}, 1.0),
])
def test_display_step_is_the_design_grid_or_a_thousandth_of_the_range(spec, step):
    from rrsite.core import number_design_from_spec
    from rrsite.site.builder import display_step

    assert display_step(number_design_from_spec(spec)) == pytest.approx(step)
